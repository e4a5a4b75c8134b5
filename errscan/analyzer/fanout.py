"""Ranking and linking spread over the pool's workers, on a first scan whose ranking is held.

The main process links a file through an Index over the scan's SQLite tables, which no
other process can read (they are in its uncommitted transaction). Before the workers
are forked again, the main process sets here, by value, all that such an Index reads
of those tables (every file's module, the file defining each class and factory name)
and the first ranking's records, read for ranking (related.Ranking.held_ranker). A worker
then ranks the records of a few files, links and renders them: it reads their results,
and the summaries the resolutions need, from the result cache through a connection of
its own, and hands back each file's jsonl block and what it depended on, with the lists
it ranked. The main process writes the ranking's tables meanwhile, then keeps and
writes what comes back, in path order.

A worker that misses a result or a summary in the cache (pruned by another errscan
since the first pass) gives back None for its files, and the main process ranks and
links them itself, scanning again what is missing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from errscan.analyzer import cache, link, output, related, scan
from errscan.analyzer.files import BlobEntry
from errscan.analyzer.index import HeldTable, Index, StoredSummary
from errscan.models import FileError, FileSummary

MAX_FILES = 20_000  # past this, the tables' contents are not copied into every worker


@dataclass(frozen=True)
class Context:
    """What ranking and linking a file needs besides its result, held by value."""

    modules: list[tuple[str, str, bool]]  # every file: path, module name, whether a stub
    defined: dict[str, str]  # `c:NAME` or `f:NAME` -> the file defining it
    blobs: dict[str, BlobEntry]  # path -> its blob (the sha is the result cache's key)
    ranker: related.Ranker  # the first ranking's records, read (Ranking.held_ranker)
    repo: str
    commit: str
    url: Callable[[str, int], str | None]
    read: scan.Reader  # files' contents, for a summary read whole (scan.complete)
    radius: int


@dataclass(frozen=True)
class Linked:
    """One file linked and rendered in a worker."""

    block: str  # its records as jsonl
    count: int
    error: FileError | None
    deps: list[str]  # what Index.reads gave, sorted


_context: Context | None = None  # set in the main process before the workers fork
_index: Index | None = None  # in a worker: made from the context on its first batch


def hold(context: Context | None) -> None:
    """Set what workers forked from now on rank and link with (None: nothing)."""
    global _context, _index
    _context, _index = context, None


class _Missing(Exception):
    """The cache lacks what linking needs: the main process links these files."""


def link_files(paths: list[str]) -> tuple[list[Linked], related.Updates] | None:
    """In a worker forked after `hold`: each file's records, ranked, linked and rendered,
    in order, and the lists ranked; None where the cache lacks any file's result or a
    summary to read."""
    global _index
    context, results = _context, scan.worker_cache()
    if context is None or results is None:
        return None

    def load(path: str) -> StoredSummary:
        entry = context.blobs.get(path)
        found = results.summary(entry.sha) if entry is not None else None
        if found is None:
            raise _Missing(path)
        return found

    def complete(path: str) -> FileSummary:
        entry = context.blobs.get(path)
        found = None
        if entry is not None:
            found = scan.complete(path, entry, context.read, context.radius, results)
        if found is None:
            raise _Missing(path)
        return found

    if _index is None:
        _index = Index(HeldTable(context.modules), load, context.defined.get, complete)
    index = _index
    updates = context.ranker.rank(paths)
    lists = {record_id: tuple(json.loads(text)) for text, record_id, _ in updates}
    found = results.get_many([context.blobs[path].sha for path in paths])
    done = []
    try:
        for path in paths:
            sha = context.blobs[path].sha
            result = cache.decode(found[sha], path) if sha in found else None
            if result is None:
                return None
            with index.reads() as deps:
                records = link.link(
                    result.sites,
                    context.repo,
                    context.commit,
                    context.url,
                    index,
                    lambda record_id: lists.get(record_id, ()),
                )
            block = output.jsonl_block(records)
            done.append(Linked(block, len(records), result.error, sorted(deps)))
    except _Missing:
        return None
    return done, updates
