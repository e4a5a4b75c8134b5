"""Ranking and linking spread over processes, on a first scan whose ranking is held.

A first scan's ranking needs only the records' features, all known once the first pass
ends: a process forked then (RankApart) ranks them all, once (so no pair of records is
scored twice), while this one builds the index and the plan, and while the pool's
workers link. It ranks them a batch of files at a time, the batches the workers link,
and sends each batch's lists as it has them.

The main process links a file through an Index over the scan's SQLite tables, which no
other process can read (they are in its uncommitted transaction). Before the workers
are forked again, the main process sets here, by value, all that such an Index reads
of those tables (every file's module, the file defining each class and factory name).
The workers link and render a few files at a time: they read the files' results, and
the summaries the resolutions need, as the first pass held them (scan.Held, inherited
as they fork), else from the result cache through a connection of their own, and hand
back each file's jsonl block, its records with empty related lists, and what it
depended on. The main process writes the ranking's tables meanwhile, then, a batch at
a time as both the linked blocks and the lists have come, puts each record's list in
its block (with_related), and keeps and writes the blocks in path order.

A worker that misses a result or a summary in the cache (pruned by another errscan
since the first pass) gives back None for its files, and the main process links them
itself, scanning again what is missing. A ranking process that ends before it sent
every batch's lists (killed, say) leaves the rest of the ranking to the main process.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from errscan import background
from errscan.analyzer import cache, link, output, related, scan, state
from errscan.analyzer.files import BlobEntry
from errscan.analyzer.index import HeldTable, Index, StoredSummary
from errscan.frozen import frozen
from errscan.models import FileError, FileSummary

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

MAX_FILES = 20_000  # past this, the tables' contents are not copied into every worker


@frozen
class Context:
    """What ranking and linking a file needs besides its result, held by value."""

    modules: list[tuple[str, str, bool]]  # every file: path, module name, whether a stub
    defined: dict[str, str]  # `c:NAME` or `f:NAME` -> the file defining it
    blobs: dict[str, BlobEntry]  # path -> its blob (the sha is the result cache's key)
    repo: str
    commit: str
    url: Callable[[str, int], str | None]
    read: scan.Reader  # files' contents, for a summary read whole (scan.complete)
    radius: int
    timeout: float | None
    # blob id -> the encoded sites and summary of a file the first pass scanned (scan.Held),
    # read rather than the cache's
    held: dict[str, tuple[bytes, bytes]]
    # path -> its records' ids, as the first ranking holds them (Ranking.held_ids)
    ids: dict[str, list[str]]


@frozen
class Linked:
    """One file linked and rendered in a worker."""

    block: str  # its records as jsonl, with empty related lists (with_related fills them)
    ids: list[str]  # the records' ids, in order (as many as its records)
    error: FileError | None
    deps: str  # what Index.reads gave, as state.deps_text writes it


_context: Context | None = None  # set in the main process before the workers fork
_index: Index | None = None  # in a worker: made from the context on its first batch


def hold(context: Context | None) -> None:
    """Set what workers forked from now on rank and link with (None: nothing)."""
    global _context, _index
    _context, _index = context, None


class _Missing(Exception):
    """The cache lacks what linking needs: the main process links these files."""


class RankApart:
    """A first ranking (Ranking.held_ranker's), ranked in a process forked now, while
    this one goes on, a group of files at a time: each group's lists are sent as soon
    as they are ranked, so that this process puts them in the group's blocks while the
    next groups are ranked. No thread of this process may run as it forks (a pool's
    threads have ended)."""

    def __init__(self, ranker: Callable[[], related.Ranker], groups: list[list[str]]) -> None:
        """`groups`: the paths of each group, in the order this process takes them (that
        of the ranking's records: Ranker.rank then scores every pair as one call would)."""
        import multiprocessing  # here: a warm replay never forks

        background.settle()  # as a pool's start does: no thread of ours runs as it forks
        context = multiprocessing.get_context("fork")
        self.groups = groups
        self._lists, sent = context.Pipe(duplex=False)
        # a daemon: an interrupted scan's exit ends it, as it ends the pool's workers
        self._process = context.Process(
            target=_rank_and_send, args=(ranker, groups, sent), daemon=True
        )
        self._process.start()
        sent.close()

    def results(self, ranker: Callable[[], related.Ranker]) -> Iterator[related.Updates]:
        """Each group's lists, in order, as the process sends them. Those of the groups
        it sent nothing of (killed, or failing: a failure shows itself here too) are
        ranked here by `ranker`'s Ranker, after the groups before them, as the process
        would have ranked them."""
        here: related.Ranker | None = None
        for number, paths in enumerate(self.groups):
            if not self._lists.closed:
                try:
                    yield self._lists.recv()
                    continue
                except (EOFError, OSError):
                    self.close()
            if here is None:
                here = ranker()
                for earlier in self.groups[:number]:
                    here.rank(earlier)  # the pairs they score, scored as they were
            yield here.rank(paths)
        self.close()

    def __enter__(self) -> RankApart:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the process, done or not (an interrupted scan), and wait for its end."""
        if not self._lists.closed:
            self._lists.close()
        if self._process.is_alive():
            self._process.kill()
        self._process.join()


def _rank_and_send(
    ranker: Callable[[], related.Ranker], groups: list[list[str]], sent: Connection
) -> None:
    # a forked worker's signals (scan._worker_init): the main process ends the scan
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    ranking = ranker()
    for paths in groups:
        sent.send(ranking.rank(paths))
    sent.close()


def with_related(block: str, ids: list[str], lists: Mapping[str, str]) -> str:
    """A block of link_files with each record's related list where it has one (`lists`:
    by id, as JSON). The block holds `"related": []` once a record, in order, and
    nowhere else: in JSON a string's own quotes are escaped, so only a key is written
    `"related"`."""
    if not any(record_id in lists for record_id in ids):
        return block
    parts = block.split(_NO_LIST)
    if len(parts) != len(ids) + 1:
        raise AssertionError(f"{len(parts) - 1} empty related lists for {len(ids)} records")
    out = [parts[0]]
    for record_id, rest in zip(ids, parts[1:], strict=True):
        found = lists.get(record_id)
        out.append(_NO_LIST if found is None else f'"related": {found}')
        out.append(rest)
    return "".join(out)


_NO_LIST = '"related": []'


def link_files(paths: list[str]) -> list[Linked] | None:
    """In a worker forked after `hold`: each file's records, linked and rendered with
    empty related lists, in order; None where the cache lacks any file's result or a
    summary to read."""
    global _index
    context, results = _context, scan.worker_cache()
    if context is None or results is None:
        return None

    held = context.held

    def load(path: str) -> StoredSummary:
        entry = context.blobs.get(path)
        found = None
        if entry is not None:
            kept = held.get(entry.sha)
            found = cache.decode_summary(kept[1]) if kept else results.summary(entry.sha)
        if found is None:
            raise _Missing(path)
        return found

    def complete(path: str) -> FileSummary | None:
        entry = context.blobs[path]
        whole = scan.complete(path, entry, context.read, context.radius, context.timeout, results)
        if whole is not None and entry.sha in held:  # stored whole: a later load reads that
            del held[entry.sha]
        return whole

    if _index is None:
        _index = Index(HeldTable(context.modules), load, context.defined.get, complete)
    index = _index
    shas = [context.blobs[path].sha for path in paths]
    found = {sha: kept[0] for sha in shas if (kept := held.get(sha))}
    wanted = [sha for sha in shas if sha not in found]
    if wanted:
        found.update(results.get_many(wanted))
    done = []
    try:
        for path, sha in zip(paths, shas, strict=True):
            result = cache.decode(found[sha], path) if sha in found else None
            if result is None:
                return None
            with index.reads() as deps:
                records = link.link(
                    result.sites, context.repo, context.commit, context.url, index,
                    known_ids=context.ids.get(path),
                )  # fmt: skip
            block = output.jsonl_block(records)
            ids = [record.id for record in records]
            done.append(Linked(block, ids, result.error, state.deps_text(deps)))
    except _Missing:
        return None
    return done
