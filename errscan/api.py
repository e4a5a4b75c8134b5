"""The library API: chains the pipeline stages of `errscan/analyzer/` and hands records to
the products that consume them. `errscan` re-exports every name of `__all__`."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import hashlib
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypedDict

from errscan import __version__, background, build, launch
from errscan.errors import CacheError, ErrscanError, InputError, StoreError
from errscan.frozen import frozen
from errscan.models import ErrorRecord, FileError, FileResult, ScanResult, ScanStats

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from errscan import config, matching, outfile
    from errscan import enrichment as enrich_stage
    from errscan.analyzer import cache, fanout, link, output, related, replay, repo, settings, state
    from errscan.analyzer import diff as diff_stage
    from errscan.analyzer import files as files_stage
    from errscan.analyzer import index as index_stage
    from errscan.analyzer import scan as scan_stage
    from errscan.analyzer import store as store_stage
    from errscan.matching import Match, TemplateIndex
    from errscan.site import build as site_stage
    from errscan.site import page as page_stage
else:  # loaded on first use: a command loads only the stages it runs (a replayed rescan
    # neither the extractors nor the linking, a site build none of the scan's)
    from errscan.lazy import LazyModule

    config = LazyModule("errscan.config")
    files_stage = LazyModule("errscan.analyzer.files")
    output = LazyModule("errscan.analyzer.output")
    outfile = LazyModule("errscan.outfile")
    replay = LazyModule("errscan.analyzer.replay")
    repo = LazyModule("errscan.analyzer.repo")
    settings = LazyModule("errscan.analyzer.settings")
    matching = LazyModule("errscan.matching")
    cache = LazyModule("errscan.analyzer.cache")
    link = LazyModule("errscan.analyzer.link")
    related = LazyModule("errscan.analyzer.related")
    state = LazyModule("errscan.analyzer.state")
    diff_stage = LazyModule("errscan.analyzer.diff")
    fanout = LazyModule("errscan.analyzer.fanout")
    index_stage = LazyModule("errscan.analyzer.index")
    page_stage = LazyModule("errscan.site.page")
    site_stage = LazyModule("errscan.site.build")
    scan_stage = LazyModule("errscan.analyzer.scan")
    store_stage = LazyModule("errscan.analyzer.store")


def __getattr__(name: str) -> Any:
    if name in ("Match", "TemplateIndex"):  # of __all__, from the lookup's module
        return getattr(matching, name)
    raise AttributeError(f"module 'errscan.api' has no attribute {name!r}")


__all__ = [
    "CacheError",
    "ErrorRecord",
    "ErrscanError",
    "FileError",
    "InputError",
    "Match",
    "Scan",
    "ScanOptions",
    "ScanResult",
    "StoreError",
    "TemplateIndex",
    "build_site",
    "cache_info",
    "default_cache_dir",
    "diff",
    "enrich",
    "enrichment_of",
    "export",
    "extract",
    "extract_source",
    "find_record",
    "load_records",
    "lookup",
    "lookup_index",
    "page",
    "prune_cache",
    "record_schema",
    "records_of",
    "scan",
    "scan_options",
    "store_scan",
    "stored_records",
    "stored_result",
]

Progress = Callable[[int, int], None]


# What besides the repository and the options decides the output (errscan.build). Every
# cache key holds it.
_BUILD = build.ident()


_M_TRIM_THRESHOLD = -1  # glibc mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_allocator = {"wanted": False, "tuned": False}


def tune_allocator() -> None:
    """Keep glibc's heap from holding freed memory in this process, from its first scan
    that runs the pipeline on (a warm replay never loads ctypes for it): a scan streams
    many short-lived buffers (file sources, worker results) past long-lived ones. By
    default glibc raises its mmap threshold after each large free, so later large buffers
    land in the heap and leave holes it cannot give back, and each thread (the pool's
    feeder and manager) gets a heap of its own. A fixed threshold and one heap took the
    peak RSS of a 10,000-file scan from 78 MB to 67 MB (measured before workers stored
    their own results). The threshold is 1 MB, and the heap keeps up to 64 MB free at
    its top rather than giving it back: with 128 KB and glibc's trimming, a buffer past
    128 KB (a large file, a batch, a worker's results) and each file's parser memory,
    given back after the file, came back as fresh pages, each a page fault: Django's
    cold scan took 48,500 faults and 0.24 s of system time in all its processes, and
    transformers' main process alone 49,500 faults and 0.44 s. For the errscan command:
    a library never tunes its host unasked."""
    _allocator["wanted"] = True


def _tune_allocator() -> None:
    if not _allocator["wanted"] or _allocator["tuned"]:
        return
    _allocator["tuned"] = True
    # The collector too: what the command has loaded lives until it exits, and a scan's
    # records and syntax trees hold no reference cycles, so sweeping the young
    # generation every 700 allocations only costs time (some 25 ms of SQLAlchemy's
    # 1.7 s cold scan); cycles are still collected, a hundred times less often.
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    with _glibc() as libc:
        if libc is not None:
            libc.mallopt(_M_MMAP_THRESHOLD, 1024 * 1024)
            libc.mallopt(_M_TRIM_THRESHOLD, 64 * 1024 * 1024)
            libc.mallopt(_M_ARENA_MAX, 1)


def _trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's malloc_trim) before
    workers fork: the tuned allocator keeps up to 64 MB of them (_M_TRIM_THRESHOLD),
    which each forked worker would count as its own (some milliseconds)."""
    with _glibc() as libc:
        if libc is not None:
            libc.malloc_trim(0)


@contextlib.contextmanager
def _glibc() -> Iterator[Any]:
    """This process's glibc, through ctypes, or None where its C library is another;
    what calling it raises (no such function) is suppressed: tuning only."""
    libc = None
    if on_glibc():
        import ctypes

        with contextlib.suppress(OSError):
            libc = ctypes.CDLL(None)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        yield libc


def on_glibc() -> bool:
    """Whether this process's C library is glibc, whose mallopt tune_allocator calls."""
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, OSError, ValueError):  # no confstr, or no such name here
        return False


def default_cache_dir() -> Path:
    """ERRSCAN_CACHE_DIR, else the user cache dir (XDG_CACHE_HOME or ~/.cache) / errscan."""
    explicit = os.environ.get("ERRSCAN_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "errscan"


class Scan:
    """One scan under way: records stream out in (file, line, col) order as files are done.

    `repo` and `commit` are known at once; the files are listed when first needed
    (`files`, iterating; a replayed output needs no list), and `file_errors` and `stats`
    are complete once the records have been iterated to the end. A file the last scan
    of this repository (with these options) saw as it is now, and whose records nothing
    changed reaches, gives back the records kept then, without linking or ranking.
    """

    def __init__(
        self,
        commit: repo.Commit,
        opts: _Options,
        warn: Callable[[str], None] | None = None,
        ahead: files_stage.Ahead | None = None,
    ) -> None:
        """`ahead`: the listing of the commit's files, begun (files.Ahead)."""
        self.repo = commit.repo
        self.commit = commit.sha
        self.file_errors: list[FileError] = []
        self.sites = 0
        self.use_cache = opts.use_cache
        self.cache_root = opts.cache_root
        self._source = commit
        self._listing: files_stage.Listing | None = None
        self._ahead = ahead
        self._opts = opts
        self._warn = warn
        self._iterated = False
        self._blocks_only = False  # the records wanted as jsonl only (jsonl_blocks)

    @property
    def _entries(self) -> files_stage.Listing:
        """The commit's files the filters take, listed once (InputError where git cannot
        list them); each --include/--exclude glob that takes none is a warning."""
        if self._listing is None:
            wanted = self._opts.filters
            ahead, self._ahead = self._ahead, None
            listing = files_stage.list_files(self._source.git(), self.commit, wanted, ahead)
            self.file_errors[:0] = listing.refused
            if self._warn is not None:
                for glob in listing.unmatched:
                    kind = "--include" if glob in wanted.include else "--exclude"
                    self._warn(f"{kind} {glob!r} matches no file at {self.commit[:12]}")
            self._listing = listing
        return self._listing

    @property
    def files(self) -> int:
        """How many files the scan takes."""
        return len(self._entries)

    def paths(self) -> Iterator[str]:
        """The repository-relative paths of the files the scan takes, sorted."""
        return self._entries.paths()

    @property
    def _lineage(self) -> str:
        """What names this scan's line of states: the repository and the options."""
        opts, commit = self._opts, self._source
        return state.lineage([commit.repo, commit.web, repr(opts.filters), opts.context, _BUILD])

    @property
    def elapsed(self) -> float:
        """Seconds since the scan was asked for."""
        return time.perf_counter() - self._opts.started

    @property
    def stats(self) -> ScanStats:
        return ScanStats(self.files, self.sites, len(self.file_errors), self.elapsed)

    def close(self) -> None:
        """Let go of the file list, for a scan that will not be iterated (iterating to
        the end, or stopping early, lets go of it too)."""
        if self._ahead is not None:
            self._ahead.close()
            self._ahead = None
        if self._listing is not None:
            self._listing.close()

    def __enter__(self) -> Scan:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def commit_date(self) -> str | None:
        """The commit's date (ISO 8601), read from the repository at hand."""
        return repo.commit_date(self._source)

    def replay_key(self, fmt: str) -> str:
        """What decides this scan's output in format `fmt`: the key of a stored output."""
        opts = self._opts
        where = (self.commit, self.repo, self._source.web)
        return replay.key(*where, opts.filters, opts.context, opts.kinds, _BUILD, fmt)

    def __iter__(self) -> Iterator[ErrorRecord]:
        for done in self._files():
            if done.records is not None:
                yield from done.records
            elif done.block:
                for line in done.block.split("\n")[:-1]:  # JSON escapes every newline
                    yield ErrorRecord.from_dict(json.loads(line))

    def jsonl_blocks(self) -> Iterator[str]:
        """The records as jsonl, a file's worth of lines at a time (what iterating gives)."""
        self._blocks_only = True
        for done in self._files():
            yield done.block

    def _files(self) -> Iterator[_Done]:
        if self._iterated:
            raise RuntimeError("a Scan's records can be iterated once; call scan() again")
        self._iterated = True
        _tune_allocator()  # before the pool's threads make heaps of their own
        opts = self._opts
        jobs = opts.jobs if opts.jobs is not None else (os.cpu_count() or 1)
        if jobs > 1:
            scan_stage.preload()
        top = self._source.work_tree()
        work_tree = files_stage.WorkTree(top) if top is not None else None
        read = functools.partial(files_stage.read_files, self._source.git(), work_tree=work_tree)
        with (
            contextlib.closing(work_tree) if work_tree is not None else contextlib.nullcontext(),
            contextlib.closing(self._entries) as entries,
            _result_store(opts) as results,
            _kept_state(opts, self._lineage) as kept,
        ):

            def register(path: str, sha: str, classes: list[str], factories: list[str]) -> None:
                kept.stage(path, sha, state.names_text(classes, factories))

            fresh = scan_stage.Features(self.repo)
            # what the workers that link a first scan read rather than the cache
            held = scan_stage.Held() if kept.fresh and self._blocks_only else None
            scanner = scan_stage.prepare(
                read, entries, results, jobs, opts.context, opts.file_timeout, opts.progress,
                register, fresh, held,
            )  # fmt: skip
            with scanner:
                yield from self._relink(read, results, kept, scanner, fresh, held)
            kept.finish(self.commit)

    def _relink(
        self,
        read: scan_stage.Reader,
        results: cache.ResultCache,
        kept: state.State,
        scanner: scan_stage.Scanner,
        fresh: scan_stage.Features,
        held: scan_stage.Held | None = None,
    ) -> Iterator[_Done]:
        """Second pass: the whole-scan work, then each file's records in path order,
        linked anew or as kept."""
        opts = self._opts
        entries = self._entries
        # made after the first pass: the pool's workers, forked there, need no index
        repair = scan_stage.Repair(read, entries, results, opts.context, opts.file_timeout)
        with contextlib.ExitStack() as ends:  # ends the ranking process, whatever happens
            apart = None
            batches: list[list[files_stage.BlobEntry]] = []  # the files the pool links at once
            if kept.fresh:
                # a first scan: every file is new (as `changed` will give them), and the
                # ranking needs nothing of the plan, so its records go in now
                pooled = self._blocks_only and scanner.pooled and len(entries) <= fanout.MAX_FILES
                if pooled:
                    scanner.retire()  # its workers end meanwhile
                for path, ranked in scan_stage.features(entries, results, self.repo, repair, fresh):
                    kept.ranking.add(path, ranked)
                if pooled and kept.ranking.held:
                    scanner.wait_retired()  # no thread of the pool runs as the ranker forks
                    batches = list(files_stage.chunks(entries, _LINK_BATCH))
                    groups = [[entry.path for entry in batch] for batch in batches]
                    apart = ends.enter_context(fanout.RankApart(kept.ranking.held_ranker, groups))
                elif pooled:  # too many records to hold: the pool ranks them, as on later scans
                    # and this process links the files, from the cache: the workers fork
                    # holding neither the first pass's sites nor the heap they were in
                    # (the benchmark's 20,000 copies: their peak 85 MB, not 110)
                    if held is not None:
                        held.results = {}
                    _trim_heap()
                    scanner.restart()
            portions = index_stage.namespaces(
                index_stage.namespace_candidates(entries),
                lambda folder: (p for p in entries.paths() if p.startswith(f"{folder}/")),
                lambda path: repair.summary(path).imports,
            )
            modules = index_stage.ModuleTable(entries, portions)
            index = index_stage.Index(modules, repair.summary, kept.defined, repair.complete)
            plan = kept.plan(
                lambda path, text: index.defines(path, *state.names_of(text)),
                anew=kept.namespaces_changed(portions),  # then module names may have changed
                hold=apart is not None,  # the linking workers take them (fanout.Context)
            )
            kept.ranking.remove(plan.removed)
            kept.forget(plan.removed)
            if not kept.fresh:  # a first scan's went in before the plan
                todo = (files_stage.BlobEntry(path, sha, 0) for path, sha in kept.changed())
                for path, ranked in scan_stage.features(todo, results, self.repo, repair, fresh):
                    kept.ranking.add(path, ranked)
            if apart is not None:
                yield from self._link_in_pool(
                    read, results, kept, scanner, modules, index, repair, apart, batches, held
                )
                return
            if held is not None:  # linked here, from the cache
                held.results = {}
            kept.ranking.settle()
            if not plan.relink_all:
                kept.redo_dependents([f"p:{p}" for p in plan.removed] + sorted(plan.renamed))
            # ranked in the pool while this process links: a file's lists are written before
            # it is linked, and a file whose lists changed is linked again
            # with a pool, the workers read most groups from a copy of the tables
            import tempfile  # here: a warm replay never needs it

            scratch = Path(tempfile.gettempdir()) if scanner.pooled else None
            ranking = _Ranking(kept.ranking.ranked(scanner.map, scratch, sent=scanner.pooled))

            def relinked() -> Iterator[tuple[files_stage.BlobEntry, bool]]:
                marks = None if plan.relink_all else kept.redone(entries.paths())
                for entry in entries:
                    marked = True if marks is None else next(marks)
                    yield entry, ranking.through(entry.path) or marked

            decided, ahead = itertools.tee(relinked())  # linked ahead reads a chunk ahead
            linked = scan_stage.stored((entry for entry, redo in ahead if redo), results, repair)
            for entry, redo in decided:
                if redo:
                    done = self._link(entry, next(linked), index, kept)
                else:
                    found = kept.kept(entry.path)
                    block = state.unmark_commit(found.block, self.commit)
                    done = _Done(None, block, found.count, found.error)
                yield self._counted(done)
            ranking.finish()

    def _link_in_pool(
        self,
        read: scan_stage.Reader,
        results: cache.ResultCache,
        kept: state.State,
        scanner: scan_stage.Scanner,
        modules: index_stage.ModuleTable,
        index: index_stage.Index,
        repair: scan_stage.Repair,
        apart: fanout.RankApart,
        batches: list[list[files_stage.BlobEntry]],
        held: scan_stage.Held | None,
    ) -> Iterator[_Done]:
        """A first scan's linking, by the pool's workers, forked again to hold what they
        read of this process's tables (fanout.py), `batches` at a time, while `apart`
        ranks the records of each batch in turn and this process writes the ranking's
        tables; each batch's lists go in its blocks as they come. The files of a batch a
        worker could not link are linked here (and ranked here, where the ranking process
        gave nothing)."""
        entries = self._entries
        fanout.hold(
            fanout.Context(
                modules.rows(),
                kept.definitions(),
                {entry.path: entry for entry in entries},
                self.repo,
                self.commit,
                self._source.url,
                read,
                self._opts.context,
                self._opts.file_timeout,
                held.results if held is not None else {},
                kept.ranking.held_ids(),
            )
        )
        try:
            # Below this process and the ranking process in priority, which the scan's
            # end waits on (the lists, the writing), where there are fewer CPUs than
            # processes: the workers have the CPU the two leave (Django: some 1% of a
            # cold scan run by run in three A/Bs, the medians within the drift).
            scanner.restart(nice=_LINKING_NICE)
        finally:
            fanout.hold(None)  # the workers have theirs: this process lets go of it
            if held is not None:
                held.results = {}
        results.checkpoint_behind()  # no fork comes now: the first pass's results copied
        linked_by_pool = scanner.submit(fanout.link_files, apart.groups)  # batches' paths
        kept.ranking.settle()  # while the workers link and `apart` ranks
        # each batch's lists as `apart` ranked them (or this process, where it gave none)
        ranked = apart.results(kept.ranking.held_ranker)
        for batch, linked, updates in zip(batches, linked_by_pool, ranked, strict=True):
            kept.ranking.write_lists(updates)
            lists = {record_id: text for text, record_id, _ in updates}
            if linked is None:
                stored = scan_stage.stored(batch, results, repair)
                done_here = [
                    self._link(entry, result, index, kept)
                    for entry, result in zip(batch, stored, strict=True)
                ]
            else:
                done_here, to_keep = [], []
                for entry, item in zip(batch, linked, strict=True):
                    block = fanout.with_related(item.block, item.ids, lists)
                    marked = state.mark_commit(block, self.commit, self._source.web)
                    to_keep.append((entry, item.deps, marked, len(item.ids), item.error))
                    done_here.append(_Done(None, block, len(item.ids), item.error))
                kept.keep_many(to_keep)
            yield from map(self._counted, done_here)
        scanner.retire()  # every batch is linked: the workers end while this process ends
        kept.ranking.finish_held()

    def _counted(self, done: _Done) -> _Done:
        """A file's records, of the kinds asked for, counted in the scan's figures."""
        if self._opts.kinds:
            done = _only(done, self._opts.kinds)
        self.sites += done.count
        if done.error is not None:
            self.file_errors.append(done.error)
        return done

    def _link(
        self,
        entry: files_stage.BlobEntry,
        result: FileResult,
        index: index_stage.Index,
        kept: state.State,
    ) -> _Done:
        """A file's records made anew, and kept for the next scan."""
        lists = kept.ranking.lists(entry.path)
        with index.reads() as deps:
            records = link.link(
                result.sites,
                self.repo,
                self.commit,
                self._source.url,
                index,
                lambda record_id: lists.get(record_id, ()),
            )
        block = output.jsonl_block(records)
        marked = state.mark_commit(block, self.commit, self._source.web)
        kept.keep(entry, state.deps_text(deps), marked, len(records), result.error)
        return _Done(records, block, len(records), result.error)


def _only(done: _Done, kinds: tuple[str, ...]) -> _Done:
    """A file's records of `kinds` only (what was kept for the next scan stays whole)."""
    if done.records is not None:
        records = [r for r in done.records if r.kind in kinds]
        return _Done(records, output.jsonl_block(records), len(records), done.error)
    lines = [line for line in done.block.split("\n")[:-1] if json.loads(line)["kind"] in kinds]
    return _Done(None, "".join(line + "\n" for line in lines), len(lines), done.error)


class _Ranking:
    """The related-errors ranking's progress through the scan's paths, in order."""

    def __init__(self, groups: Iterator[tuple[list[str], list[str]]]) -> None:
        """`groups`: Ranking.ranked's, each a few files ranked and written."""
        self._groups = groups
        self._next = next(groups, None)
        self._changed: set[str] = set()  # of the groups ranked, files not yet passed

    def through(self, path: str) -> bool:
        """Rank every group of files up to `path`: whether a list of `path`'s records
        changed."""
        while self._next is not None and self._next[0][0] <= path:
            self._changed.update(self._next[1])
            self._next = next(self._groups, None)
        if path in self._changed:
            self._changed.remove(path)
            return True
        return False

    def finish(self) -> None:
        """Rank the groups left, so that every list is written before the state is
        committed (none are left: every ranked file is a file of the scan, passed)."""
        while self._next is not None:
            self._next = next(self._groups, None)


@frozen
class _Done:
    """One file's records: made now (records), or kept from the last scan (block only)."""

    records: list[ErrorRecord] | None
    block: str
    count: int
    error: FileError | None


@frozen
class _Options:
    filters: files_stage.Filters
    context: int
    cache_root: Path
    jobs: int | None
    file_timeout: float | None
    use_cache: bool
    progress: Progress | None
    started: float
    kinds: tuple[str, ...] = ()  # the record kinds kept; () keeps all


KINDS = ("raise", "reraise", "assert", "exit", "warning")
_LINK_BATCH = 16  # files a pool worker links at once
_LINKING_NICE = 3  # how much lower a first scan's linking workers are scheduled


# what a scan takes when neither an argument nor the scanned repository's config says
DEFAULTS: dict[str, Any] = {
    "include_tests": False,
    "include": (),
    "exclude": (),
    "include_vendored": False,
    "test_paths": (),
    "kinds": (),
    "context": 15,
}


def scan(
    target: str,
    *,
    include_tests: bool | None = None,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    context: int | None = None,
    cache_dir: str | Path | None = None,
    repo_name: str | None = None,
    jobs: int | None = None,
    file_timeout: float | None = 60.0,
    use_cache: bool = True,
    progress: Progress | None = None,
    include_vendored: bool | None = None,
    warn: Callable[[str], None] | None = None,
    kinds: Sequence[str] | None = None,
    test_paths: Sequence[str] | None = None,
    repo_config: bool = True,
) -> Scan:
    """Start scanning REPO@REV: resolve the commit and list its files; iterate for records.

    Files whose blob was extracted before (in any repository) come from the result
    cache; the rest are parsed in `jobs` processes (default: the number of CPUs), each
    given `file_timeout` seconds before it becomes a file error. Test code (`tests/`,
    `test_*.py`, ..., `test_paths` globs) and vendored code (`_vendor/`, `vendor/`,
    `third_party/`, `extern/`) are left out unless `include_tests`/`include_vendored`;
    `warn` is told of each --include/--exclude glob that takes no file.
    `kinds` keeps records of those kinds only (KINDS; all by default).

    An option left None takes the value of the scanned repository's `[tool.errscan]`
    (unless `repo_config` is False), else DEFAULTS'; the repository's pytest settings
    (`testpaths`, `python_files`) tell test code too. What its configuration holds that
    errscan cannot read is one warning. The user's own configuration file is the
    caller's to read (`errscan.config.discover()`; the command line does).
    Raises InputError for bad input (unknown path or revision, network failure).
    """
    started = time.perf_counter()
    cache_root = _cache_root(cache_dir)
    commit = repo.resolve(repo.parse_target(target), cache_root, repo_name)
    # the files' listing begun now: git reads the tree while the repository's settings
    # are read and the scan's modules load
    ahead = files_stage.Ahead(commit.git(), commit.sha)
    try:
        found = config.RepoConfig({})
        if repo_config:
            where = cache_root if use_cache else None
            found = settings.read(commit.git(), commit.sha, where, _BUILD)
            if found.warning and warn is not None:
                warn(found.warning)
        given: dict[str, Any] = {"include_tests": include_tests, "include": include,
                 "exclude": exclude, "include_vendored": include_vendored,
                 "test_paths": test_paths, "kinds": kinds, "context": context}  # fmt: skip
        chosen: dict[str, Any] = {
            key: found.options.get(key, DEFAULTS[key]) if value is None else value
            for key, value in given.items()
        }
        if chosen["context"] < 0:
            raise InputError(f"context must be 0 or more lines, not {chosen['context']}")
        unknown = sorted(set(chosen["kinds"]) - set(KINDS))
        if unknown:
            raise InputError(f"unknown kind {unknown[0]!r}: give some of {', '.join(KINDS)}")
        wanted = files_stage.Filters(
            chosen["include_tests"], tuple(chosen["include"]), tuple(chosen["exclude"]),
            chosen["include_vendored"], tuple(chosen["test_paths"]), found.test_paths,
            files_stage.pytest_files(found.test_files),
        )  # fmt: skip
        opts = _Options(wanted, chosen["context"], cache_root, jobs, file_timeout, use_cache,
                        progress, started, tuple(sorted(set(chosen["kinds"]))))  # fmt: skip
    except BaseException:  # a bad option, or the settings unreadable: git stops listing
        ahead.close()
        raise
    return Scan(commit, opts, warn, ahead)


class ScanOptions(TypedDict, total=False):
    """What `scan` takes besides the target, as `extract` and `export` take it too."""

    include_tests: bool | None
    include: Sequence[str] | None
    exclude: Sequence[str] | None
    context: int | None
    cache_dir: str | Path | None
    repo_name: str | None
    jobs: int | None
    file_timeout: float | None
    use_cache: bool
    progress: Progress | None
    include_vendored: bool | None
    warn: Callable[[str], None] | None
    kinds: Sequence[str] | None
    test_paths: Sequence[str] | None
    repo_config: bool


def extract(target: str, **options: Unpack[ScanOptions]) -> ScanResult:
    """Scan REPO@REV and return every record at once; the options are those of `scan`."""
    running = scan(target, **options)
    records = tuple(running)
    background.wait()  # the state closed: the caller finds the cache at rest
    return ScanResult(
        repo=running.repo,
        commit=running.commit,
        errscan_version=__version__,
        records=records,
        file_errors=tuple(running.file_errors),
        stats=running.stats,
    )


def export(
    target: str,
    fmt: str,
    path: Path | None = None,
    stream: TextIO | None = None,
    *,
    kept: Callable[[repo.Commit, Path, str], None] | None = None,
    **options: Unpack[ScanOptions],
) -> ScanStats:
    """Scan REPO@REV and write it as `fmt` to `path` (atomically) or `stream` (stdout).

    A rescan of a commit with the same options replays the output stored the first
    time (unless use_cache=False). `kept` is told, where the output written is the one
    stored (replayed, or stored whole now), of the commit, the cache folder and the
    stored entry's name (the command line keeps a note of them, errscan.launch). The
    options are those of `scan`.
    """
    out = stream if stream is not None else sys.stdout
    running = scan(target, **options)
    if not running.use_cache:
        output.write(running, fmt, path, out, __version__)
        return running.stats
    store = replay.Replay(running.cache_root)
    entry = running.replay_key(fmt)
    hit = store.load(entry)
    if hit is not None:
        if running._warn is not None and (
            running._opts.filters.include or running._opts.filters.exclude
        ):
            running.files  # noqa: B018 - lists the files, for the warnings of globs that take none
        running.close()
        chunks, (files, sites, file_errors), same = hit
        outfile.write_bytes(chunks, path, out, same)
        if kept is not None:
            kept(running._source, running.cache_root, entry)
        return ScanStats(files, sites, file_errors, running.elapsed)
    with store.recorder(entry) as recorder:
        rendered = recorder.tee(output.render(running, fmt, __version__))
        outfile.write_bytes(rendered, path, out, behind=background.run)
        if not any(error.transient for error in running.file_errors):
            recorder.stats = running.stats  # an output with a time-out is not kept
    replay.prune(store, replay.DEFAULT_MAX_BYTES)
    if kept is not None and recorder.kept:
        kept(running._source, running.cache_root, entry)
    return running.stats


@contextlib.contextmanager
def _kept_state(opts: _Options, lineage: str) -> Iterator[state.State]:
    """The last scan's state for this lineage, or with use_cache=False a private one."""
    kept = state.State.open(opts.cache_root, lineage) if opts.use_cache else state.State.private()
    prune = functools.partial(state.prune, opts.cache_root, cache.DEFAULT_MAX_BYTES // 4)
    try:
        yield kept
    finally:
        kept.close(then=prune if opts.use_cache else None)  # pruned once it is closed


@contextlib.contextmanager
def _result_store(opts: _Options) -> Iterator[cache.ResultCache]:
    """The result cache, or with use_cache=False an in-memory one for this scan alone."""
    if opts.use_cache:
        results = cache.ResultCache.open(opts.cache_root, _BUILD, opts.context)
    else:
        results = cache.ResultCache.in_memory(_BUILD, opts.context)
    try:
        yield results
        if opts.use_cache and results.added:
            results.prune(cache.DEFAULT_MAX_BYTES)
    finally:
        results.close()


def scan_options(**options: Any) -> str:
    """The options that shape records, as the store keys a scan by them: as asked, an
    option not given as null (the scanned commit's config decides it, and the commit is
    in the key too), and whether the scanned repository's config was read."""
    chosen: dict[str, Any] = {k: options.get(k) for k in (*DEFAULTS, "repo_name")}
    chosen["repo_config"] = options.get("repo_config", True)
    return json.dumps({k: list(v) if isinstance(v, tuple | list) else v
                       for k, v in chosen.items()}, sort_keys=True)  # fmt: skip


def store_scan(
    result: ScanResult, db: str | Path | None = None, **options: Any
) -> store_stage.StoredScan:
    """Keep a scan in the store (one transaction; the same scan again is a no-op)."""
    store = store_stage.Store.open(db)
    try:
        return store.save(result, scan_options(**options), _commit_date(result, options))
    finally:
        store.close()


def _commit_date(result: ScanResult, options: dict[str, Any]) -> str | None:
    """The commit's date, where the repository is at hand (a local path or the clone cache)."""
    try:
        where = repo.parse_target(str(options.get("target", ""))).repo
        target = repo.Target(where, result.commit)  # the sha: no network, whatever REV was
        return repo.commit_date(repo.resolve(target, _cache_root(options.get("cache_dir"))))
    except InputError:
        return None


def stored_result(target: str, db: str | Path | None = None, **options: Any) -> ScanResult:
    """The stored scan of REPO@REV (the REV resolved to its commit first)."""
    parsed = repo.parse_target(target)
    offline = _stored_offline(parsed, db, options.get("repo_name"))
    if offline is not None:
        return offline
    cache = _cache_root(options.get("cache_dir"))
    commit = repo.resolve(parsed, cache, options.get("repo_name"))
    try:
        store = store_stage.Store.open(db, create=False)
    except InputError as missing:
        if "no store at" not in str(missing):
            raise
        raise InputError(f"no stored scan of {commit.repo} at {commit.sha[:12]}") from None
    try:
        found = store.for_commit(commit.repo, commit.sha)
        if found is None:  # stored under another name (--repo-name): the commit decides
            named = [s for s in store.scans() if s.commit == commit.sha]
            found = named[-1] if len({s.repo for s in named}) == 1 else None
        if found is None:
            raise InputError(f"no stored scan of {commit.repo} at {commit.sha[:12]}")
        return store.result(found)
    finally:
        store.close()


def _stored_offline(
    target: repo.Target, db: str | Path | None, name: str | None
) -> ScanResult | None:
    """The stored scan of a remote REPO@FULLSHA, found without asking the network (what
    `track` stored is exported by its sha, offline); None where that cannot be said."""
    rev = (target.rev or "").lower()
    if len(rev) != 40 or repo.HEX.fullmatch(rev) is None or repo.is_local(target.repo):
        return None
    try:
        store = store_stage.Store.open(db, create=False)
    except InputError:
        return None
    try:
        found = store.for_commit(repo.display_name(name or target.repo)[0], rev)
        return store.result(found) if found is not None else None
    finally:
        store.close()


def diff(old: str, new: str, db: str | Path | None = None, **options: Any) -> diff_stage.Diff:
    """What changed between two scans: two files errscan wrote, or REPO@A and a rev B of
    the same repository (each side read from the store, else scanned now)."""
    if Path(old).is_file() and Path(new).is_file():
        before, after = load_records(old), load_records(new)
        old_commit = before[0].commit if before else ""
        new_commit = after[0].commit if after else ""
        return diff_stage.diff(before, after, old_commit, new_commit)
    target = repo.parse_target(old)
    sides = []
    for rev in (target.rev or "HEAD", new):
        where = f"{target.repo}@{rev}"
        try:
            sides.append(stored_result(where, db, **options))
        except InputError as missing:
            if "no stored scan" not in str(missing):
                raise
            sides.append(extract(where, **options))
    return diff_stage.diff(sides[0].records, sides[1].records, sides[0].commit, sides[1].commit)


def load_records(path: str | Path) -> list[ErrorRecord]:
    """Records from a file errscan wrote: jsonl (file-error lines skipped) or json."""
    return _records_in(_read(path), path)


def _read(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc


def _records_in(data: bytes, path: str | Path) -> list[ErrorRecord]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not errscan output: {path}: not UTF-8 ({exc.reason})") from exc
    try:
        if text.lstrip().startswith("{") and '"records"' in text[:4096] and "\n{" not in text:
            rows = json.loads(text)["records"]
        else:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        return [ErrorRecord.from_dict(row) for row in rows if "id" in row]
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"not errscan output: {path}: {exc}") from exc


def find_record(record_id: str, records: Sequence[ErrorRecord]) -> ErrorRecord:
    """The record with this id, or the only one whose id starts with it."""
    found = [r for r in records if r.id == record_id] or [
        r for r in records if r.id.startswith(record_id.lower())
    ]
    if len(found) != 1 or len(record_id) < 4:
        reason = "no record" if not found else "several records"
        raise InputError(f"{reason} with id {record_id!r}")
    return found[0]


def page(
    record: ErrorRecord,
    records: Sequence[ErrorRecord],
    fmt: str = "markdown",
    enrichment: store_stage.StoredEnrichment | None = None,
) -> str:
    """The record as a knowledge-base page: Markdown, standalone HTML, or JSON (the
    record, its related records' ids and messages, and the enrichment where one is
    stored); with an enrichment of its facts, its three sections marked AI-assisted."""
    by_id = {r.id: r for r in records}
    if fmt == "json":
        data: dict[str, Any] = {
            "record": record.to_dict(),
            "related": [
                {"id": r.id, "exception": r.exception, "message": r.message, "file": r.file,
                 "line": r.line}
                for r in (by_id.get(i) for i in record.related) if r is not None
            ],
            "enrichment": None if enrichment is None else {
                "model": enrichment.model, "prompt": enrichment.prompt, **enrichment.answer
            },
        }  # fmt: skip
        return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    if fmt == "html":
        return page_stage.html_page(record, by_id.get, enrichment)
    return page_stage.markdown(record, by_id.get, enrichment)


def build_site(
    out: str | Path,
    db: str | Path | None = None,
    repos: Sequence[str] = (),
    *,
    base_url: str = "",
    jobs: int | None = None,
    changed: Callable[[str, bool], None] | None = None,
) -> site_stage.Report:
    """Build the static site of the latest stored scan of each repository (of `repos`
    where named) into `out`, the error pages in `jobs` processes (default: the CPUs):
    only files whose bytes change are written, its search index included. `changed` is
    told the path of each file written (False) or removed (True), as it is: what a sync
    or a cache purge needs, the report holding counts only."""
    path = Path(db) if db is not None else store_stage.default_path()
    return site_stage.build(path, Path(out), repos, version=__version__, build_id=_BUILD,
                            base_url=base_url, jobs=jobs, changed=changed)  # fmt: skip


def enrichment_of(
    record: ErrorRecord, records: Sequence[ErrorRecord], db: str | Path | None = None
) -> store_stage.StoredEnrichment | None:
    """The stored enrichment of the record's current facts (by any model), if any."""
    from errscan.enrichment import digest, facts

    path = Path(db) if db is not None else store_stage.default_path()
    if not path.exists():
        return None
    by_id = {r.id: r for r in records}
    store = store_stage.Store.open(path, create=False)
    try:
        return store.enrichment(record.id, digest(facts(record, by_id.get)))
    finally:
        store.close()


def stored_records(targets: Sequence[str] = (), db: str | Path | None = None) -> list[ErrorRecord]:
    """The records of stored scans: of each REPO@REV, or of the latest scan of each
    REPO (a name as stored), or with no target, the latest scan of every repository."""
    path = Path(db) if db is not None else store_stage.default_path()
    if not path.exists():
        raise InputError(f"no store at {path}")
    records: list[ErrorRecord] = []
    for target in targets:
        if "@" in target:
            records += stored_result(target, path).records
            continue
        store = store_stage.Store.open(path, create=False)
        try:
            latest = store.latest(target)
            if latest is None:
                raise InputError(f"no stored scan of {target}")
            records += store.records(latest)
        finally:
            store.close()
    if not targets:
        store = store_stage.Store.open(path, create=False)
        try:
            records = list(store.all_records())
        finally:
            store.close()
    return records


def enrich(
    endpoint: enrich_stage.Endpoint,
    targets: Sequence[str] = (),
    *,
    db: str | Path | None = None,
    concurrency: int = 4,
    limit: int | None = None,
    force: bool = False,
    progress: Callable[[enrich_stage.Summary], None] | None = None,
    summary: enrich_stage.Summary | None = None,
) -> enrich_stage.Summary:
    """Ask `endpoint`'s model for the prose of every record of the stored scans (see
    stored_records) that has none for its current facts; store each answer as it comes.
    A Ctrl-C returns the summary so far (`interrupted`); a later call resumes."""
    from errscan import enrichment as enrich_stage

    records = stored_records(targets, db)
    store = store_stage.Store.open(db, create=False)
    try:
        jobs, skipped = enrich_stage.plan(records, store, endpoint.model, force)
        summary = summary if summary is not None else enrich_stage.Summary()
        summary.skipped = skipped
        chosen = jobs[:limit] if limit is not None else jobs
        return enrich_stage.run(chosen, endpoint, store, concurrency, progress, summary)
    finally:
        store.close()


def lookup(text: str, records: Sequence[ErrorRecord]) -> list[matching.Match]:
    """The records that could have produced a message, `Type: message` or traceback."""
    return matching.lookup(text, records)


def records_of(
    *,
    source: str | Path | None = None,
    target: str | None = None,
    db: str | Path | None = None,
    **options: Unpack[ScanOptions],
) -> tuple[list[ErrorRecord], str]:
    """The records of a file errscan wrote (`source`), of a scan of REPO@REV (`target`,
    with `options` as scan takes them), or else of the latest stored scan of each
    repository in the store `db`; and a key that names them (for lookup_index), a digest
    of what decides them."""
    if source is not None and target is not None:
        raise InputError("give the records with --from FILE or --scan REPO@REV")
    if source is not None:
        data = _read(source)  # read once: parsed, and digested for the index's key
        key = replay.key("from", hashlib.sha256(data).hexdigest(), _BUILD)
        return _records_in(data, source), key
    if target is not None:
        running = scan(target, **options)
        return list(running), running.replay_key("records")
    path = Path(db) if db is not None else store_stage.default_path()
    if not path.exists():
        raise InputError(f"no store at {path}: give --from FILE or --scan REPO@REV, or --db PATH")
    store = store_stage.Store.open(path, create=False)
    try:
        latest = store.latest_scans()
        records = [record for found in latest for record in store.records(found)]
    finally:
        store.close()
    scans = [(found.id, found.repo, found.commit, found.scanned_at) for found in latest]
    return records, replay.key("store", path.resolve(), scans, _BUILD)


def lookup_index(
    records: Sequence[ErrorRecord], key: str | None = None, cache_dir: str | Path | None = None
) -> matching.TemplateIndex:
    """The records compiled for many lookups (`index.lookup(text)`); with the `key` that
    records_of gave them, the compiled tables are kept in the cache and reused."""
    if key is None:
        return matching.TemplateIndex(records)
    return matching.CompiledIndexes(_cache_root(cache_dir)).index(records, key)


def record_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of a record as errscan writes it."""
    from importlib import resources

    text = (resources.files("errscan") / "record.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def cache_info(cache_dir: str | Path | None = None) -> cache.CacheInfo:
    """Where the cache is, and what it holds: per-file results and stored outputs."""
    root = _cache_root(cache_dir)
    if (root / "results.sqlite").exists():
        results = cache.ResultCache.open(root, __version__, 0)
        try:
            info = results.info()
        finally:
            results.close()
    else:  # nothing cached yet: said without making the cache
        info = cache.CacheInfo(str(root / "results.sqlite"), 0, 0)
    outputs, output_bytes = replay.usage(replay.Replay(root))
    states, state_bytes = state.usage(root)
    indexes, index_bytes = matching.CompiledIndexes(root).usage()
    configs, config_bytes = settings.usage(root)
    return dataclasses.replace(
        info,
        outputs=outputs,
        output_bytes=output_bytes,
        states=states,
        state_bytes=state_bytes,
        indexes=indexes,
        index_bytes=index_bytes,
        configs=configs,
        config_bytes=config_bytes,
    )


def prune_cache(
    cache_dir: str | Path | None = None, max_bytes: int | None = None
) -> tuple[int, cache.CacheInfo]:
    """Drop least recently used entries until `max_bytes` remain (default: the result
    cache's own bound): compiled lookup indexes, stored outputs, then scan states (all
    cheap to make again from the results), and the repositories' settings kept per
    commit and the notes of command lines (errscan.launch; all of them for a budget of 0,
    else the newest settings.MAX_KEPT and launch.KEPT): how many, and what is left."""
    if max_bytes is None:
        max_bytes = cache.DEFAULT_MAX_BYTES
    root = _cache_root(cache_dir)
    background.wait()  # no state or cache of an earlier scan closing
    dropped = settings.prune(root, settings.MAX_KEPT if max_bytes > 0 else 0)
    dropped += launch.prune(root, launch.KEPT if max_bytes > 0 else 0)
    results = cache.ResultCache.open(root, __version__, 0)
    try:
        held = results.info().bytes
        _, state_bytes = state.usage(root)
        _, output_bytes = replay.usage(replay.Replay(root))
        indexes = matching.CompiledIndexes(root)
        dropped += indexes.prune(max(0, max_bytes - held - state_bytes - output_bytes))
        index_bytes = indexes.usage()[1]
        budget = max(0, max_bytes - held - state_bytes - index_bytes)
        pruned, kept = replay.prune(replay.Replay(root), budget)
        dropped += pruned
        dropped += state.prune(root, max(0, max_bytes - held - kept - index_bytes))
        dropped += results.prune(max(0, max_bytes - kept - index_bytes - state.usage(root)[1]))
    finally:
        results.close()
    return dropped, cache_info(root)


def _cache_root(cache_dir: str | Path | None) -> Path:
    return Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()


def extract_source(
    code: str | bytes, path: str = "mod.py", *, context: int = 15
) -> list[ErrorRecord]:
    """The records of one file's source; a file that does not parse gives no records."""
    result = scan_stage.scan_file(path, code, context)
    index = index_stage.Index.of({path: result.summary})
    ordered = sorted(result.sites, key=lambda site: (site.line, site.col))
    site_ids = link.ids("", path, (link.key_fields(site) for site in ordered))
    kept = state.State.private()
    try:
        kept.ranking.add(
            path, [(i, related.features(s)) for i, s in zip(site_ids, ordered, strict=True)]
        )
        kept.ranking.settle()
        kept.ranking.rank()
        lists = kept.ranking.lists(path)
    finally:
        kept.close()
    return link.link(
        result.sites, "", "", lambda _file, _line: None, index, lambda i: lists.get(i, ())
    )
