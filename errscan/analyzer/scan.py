"""SourceFiles -> per-file results: parse each file and pull out its sites, over a process pool.

Workers encode each result for the result cache and, where the cache is a file, write it
there themselves, handing back only the names of the classes and factories the file
defines: results never pass through the main process, whose memory then holds only what
is in flight. A fresh result and a cached one take the same path back (cache.decode).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sqlite3
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, TypeVar

from errscan import background
from errscan.analyzer import cache, link
from errscan.analyzer.files import BlobEntry, Listing, SourceFile, Unread, chunks
from errscan.analyzer.index import StoredSummary
from errscan.analyzer.parse import parse
from errscan.extractors import bindings, sites, summary
from errscan.models import FileError, FileResult, FileSummary

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

_BATCH_BYTES = 256 * 1024  # files go to a worker in batches of about this much source
_BATCH_FILES = 32
_WORKER_BATCHES = 256  # batches the pool's workers take before fresh ones replace them
# below this much source, forking workers costs more than it saves: click (0.44 MB) and
# Jinja2 (0.49 MB) take as long either way; werkzeug (0.75 MB) 11% less time in workers,
# rich (1.2 MB) 19%, setuptools (1.5 MB) 23% (medians of 7 cold scans each)
_POOL_MIN_BYTES = 1 << 19
_CHUNK = 256  # entries whose stored names or features are read back at once
_FRESH_SITES = 5_000  # sites whose ranking features the first pass holds (Features)
_SITES_CHUNK = 16  # entries whose stored sites are read back at once (10-30 KB each)
Reader = Callable[[Iterable[BlobEntry]], Iterator[SourceFile]]
# names, ranking features; the encoded result unless stored; its sites and summary where
# asked for (Held)
Scanned = tuple[bytes, bytes, cache.Encoded | None, tuple[bytes, bytes] | None]
_T = TypeVar("_T")
_U = TypeVar("_U")
_stored_by_worker: cache.ResultCache | None = None  # in a worker: the cache it writes to
_in_worker = False


def prepare(
    read: Reader,
    listing: Listing,
    results: cache.ResultCache,
    jobs: int,
    radius: int,
    timeout: float | None,
    progress: Callable[[int, int], None] | None,
    register: Callable[[str, str, list[str], list[str]], None],
    ranking: Features | None = None,
    held: Held | None = None,
) -> Scanner:
    """First pass: give every file a stored result (scanning those the cache lacks, or
    holds unreadable), and hand `register` the path, blob id, classes and factories of
    each file. Gives back the scanner, still open, for the whole-scan work to share its
    pool. `ranking` keeps the ranking features of the files scanned now, as they come;
    `held` their sites and summaries."""
    todo = 0
    size = 0
    for chunk in chunks(listing, _CHUNK):
        found = results.get_many([entry.sha for entry in chunk], column="names")
        picked = []
        for entry in chunk:
            names = cache.decode_names(found[entry.sha]) if entry.sha in found else None
            if names is not None and not names[2]:
                register(entry.path, entry.sha, names[0], names[1])
            else:
                picked.append(entry.path)
                size += entry.size
        if len(picked) == len(chunk) and picked:  # every file of a run of paths
            listing.mark_between(picked[0], picked[-1])
        else:
            listing.mark(picked)
        todo += len(picked)
    done = len(listing) - todo
    if progress is not None:
        progress(done, len(listing))
    workers = max(1, min(jobs, todo)) if size >= _POOL_MIN_BYTES else 1
    fresh: list[tuple[str, cache.Encoded]] = []
    store = None if str(results.path) == ":memory:" else (str(results.path), results.digest)
    scanner = Scanner(workers, radius, timeout, store)
    try:
        # largest first: no straggler at the end
        wanted = (lambda: held.wanted) if held is not None else None
        for source_file, scanned in scanner.scanned(read(listing.marked()), wanted):
            names_data, ranked, encoded, kept = scanned
            names = cache.decode_names(names_data)
            assert names is not None  # just encoded by scan_file
            register(source_file.path, source_file.sha, names[0], names[1])
            if ranking is not None:
                ranking.add(source_file.path, ranked)
            if held is not None and kept is not None:
                held.add(source_file.sha, kept)
            if encoded is None:
                results.added += 1  # a worker stored it
            else:
                fresh.append((source_file.sha, encoded))
            if len(fresh) >= 200:
                results.put_many(fresh)
                fresh.clear()
            done += 1
            if progress is not None:
                progress(done, len(listing))
        results.put_many(fresh)
    except BaseException:
        scanner.close()
        raise
    return scanner


class Repair:
    """Scans again, and stores again, a file whose cache entry went since the first pass
    (another errscan's prune) or whose value is damaged: whatever the second pass reads
    of a file (sites, summary, features) is what a fresh scan gives, never empty."""

    def __init__(
        self,
        read: Reader,
        listing: Listing,
        results: cache.ResultCache,
        radius: int,
        timeout: float | None,
    ) -> None:
        self._read = read
        self._listing = listing
        self._results = results
        self._radius = radius
        self._timeout = timeout

    def __call__(self, path: str) -> cache.Encoded:
        entry = self._listing.entry(path)
        source_file = next(self._read([entry]))
        scanned = scan_file(path, source_file.data, self._radius, self._timeout, partial=True)
        encoded = cache.encode(scanned)
        self._results.put_many([(entry.sha, encoded)])
        return encoded

    def complete(self, path: str) -> FileSummary | None:
        """A file's whole summary (none of it deferred), scanned again and stored in
        place of the partial one; None where it cannot be read now."""
        entry = self._listing.entry(path)
        return complete(path, entry, self._read, self._radius, self._timeout, self._results)

    def summary(self, path: str) -> StoredSummary:
        """A file's summary, from the cache, else scanned again."""
        found = self._results.summary(self._listing.sha(path))
        if found is None:
            found = cache.decode_summary(self(path)[1])
        assert found is not None  # just encoded
        return found


def complete(
    path: str,
    entry: BlobEntry,
    read: Reader,
    radius: int,
    timeout: float | None,
    results: cache.ResultCache | None,
) -> FileSummary | None:
    """A file's whole summary, none of it deferred (Repair.complete): scanned again, its
    result stored in `results` for the next scan to find whole; None where the file
    cannot be read now (or not within `timeout`, as the first pass's)."""
    source_file = next(read([entry]))
    scanned = scan_file(path, source_file.data, radius, timeout)
    if scanned.error is not None:
        return None
    if results is not None:
        results.put_many([(entry.sha, cache.encode(scanned))])
    return scanned.summary


Ranked = list[tuple[str, list[object]]]  # a file's sites as (id, ranking features)
_HELD_BYTES = 16 << 20  # encoded sites and summaries the first pass holds (Held), at most


class Held:
    """The encoded sites and summaries of the files the first pass scans, by blob id,
    while they come to at most `limit` bytes (else none, from the file past it on): the
    linking workers, forked after, read them here rather than from the cache, and
    decode them as they would the cache's (the same bytes)."""

    def __init__(self, limit: int | None = None) -> None:
        self._left = _HELD_BYTES if limit is None else limit
        self.results: dict[str, tuple[bytes, bytes]] = {}
        self.wanted = True  # whether more are held

    def add(self, sha: str, kept: tuple[bytes, bytes]) -> None:
        if not self.wanted:
            return
        self._left -= len(kept[0]) + len(kept[1])
        if self._left < 0:
            self.wanted = False  # those held stay: their files are linked without the cache
            return
        self.results[sha] = kept


class Features:
    """The ranking features of the files the first pass scans, decoded and given their
    ids as they come back (while the workers scan the rest), so that the whole-scan work
    need not read them from the cache: while they number at most `limit` sites, where
    holding them costs little (a first ranking holds as many), else none."""

    def __init__(self, repo: str, limit: int | None = None) -> None:
        self._repo = repo
        self._left = _FRESH_SITES if limit is None else limit
        self._files: dict[str, Ranked] | None = {}

    def add(self, path: str, data: bytes) -> None:
        if self._files is None:
            return
        decoded = cache.decode_features(data)
        if decoded is None:
            return  # read from the cache, which repairs it
        self._left -= len(decoded)
        if self._left < 0:
            self._files = None
            return
        self._files[path] = _ranked(self._repo, path, decoded)

    def pop(self, path: str) -> Ranked | None:
        return self._files.pop(path, None) if self._files is not None else None


def features(
    entries: Iterable[BlobEntry],
    results: cache.ResultCache,
    repo: str,
    repair: Repair,
    fresh: Features | None = None,
) -> Iterator[tuple[str, Ranked]]:
    """Each file's sites as (id, ranking features), for related errors (every file, those
    without sites too): as `fresh` holds them, else read from the cache."""
    for chunk in chunks(entries, _CHUNK):
        held = {e.path: fresh.pop(e.path) for e in chunk} if fresh is not None else {}
        wanted = [entry.sha for entry in chunk if held.get(entry.path) is None]
        stored = results.get_many(wanted, column="features") if wanted else {}
        for entry in chunk:
            ranked = held.get(entry.path)
            if ranked is not None:
                yield entry.path, ranked
                continue
            decoded = cache.decode_features(stored[entry.sha]) if entry.sha in stored else None
            if decoded is None:
                decoded = cache.decode_features(repair(entry.path)[3])
                assert decoded is not None  # just encoded
            yield entry.path, _ranked(repo, entry.path, decoded)


def _ranked(repo: str, path: str, decoded: list[tuple[list[str], list[object]]]) -> Ranked:
    """A file's decoded features (id key fields, features) as (id, features)."""
    site_ids = link.ids(repo, path, (key for key, _ in decoded))
    return [(i, f) for i, (_, f) in zip(site_ids, decoded, strict=True)]


def stored(
    entries: Iterable[BlobEntry], results: cache.ResultCache, repair: Repair
) -> Iterator[FileResult]:
    """Second pass: each file's result in path order, read back a chunk at a time, so
    memory holds one chunk whatever the repository's size."""
    for chunk in chunks(entries, _SITES_CHUNK):
        found = results.get_many([entry.sha for entry in chunk])
        for entry in chunk:
            result = cache.decode(found[entry.sha], entry.path) if entry.sha in found else None
            if result is None:
                result = cache.decode(repair(entry.path)[0], entry.path)
                assert result is not None  # just encoded
            yield result


_LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def scan_file(
    path: str,
    data: bytes | str | Unread,
    radius: int,
    timeout: float | None = None,
    partial: bool = False,
) -> FileResult:
    """One file's sites, or the error that stopped it; never raises for bad input.

    `data` Unread: why the content was not read (git lacks it, or it is too large).
    `timeout`: seconds of work on the file before it becomes a (transient) file error.
    The limit interrupts Python code, such as the extractors, not the C parser itself.
    `partial`: the summary defers what only some classes need (summary.summarize).
    """
    if isinstance(data, Unread):
        return FileResult(path, error=FileError(path, data.reason, data.transient))
    if isinstance(data, bytes) and data.startswith(_LFS_POINTER):
        reason = "Git LFS pointer: the file's content is not in the repository"
        return FileResult(path, error=FileError(path, reason))
    try:
        with _time_limit(timeout):
            return _scan(path, data, radius, partial)
    except _TimedOut:
        reason = f"timed out after {timeout:g} s"
        return FileResult(path, error=FileError(path, reason, transient=True))


def _scan(path: str, data: bytes | str, radius: int, partial: bool) -> FileResult:
    """One file's result; whatever reading it raises (but a time limit) is its file error."""
    try:
        with _headroom():
            parsed = parse(data, path)
            if isinstance(parsed, FileError):
                return FileResult(path, error=parsed)
            constants = bindings.Constants(parsed.tree)
            imported = list(summary.imports(parsed.tree))
            found = sites.extract(parsed.tree, parsed.src, radius, constants, imported)
            facts = summary.summarize(
                parsed.tree, parsed.src, constants, found.factories, imported,
                found.local_imports, partial,
            )  # fmt: skip
    except RecursionError:  # past the headroom, which is the same in every process
        reason = f"too deeply nested (more than {_HEADROOM} frames to read)"
        return FileResult(path, error=FileError(path, reason))
    except MemoryError:  # the machine's state, not the file's: never kept
        return FileResult(path, error=FileError(path, "out of memory", transient=True))
    except _TimedOut:
        raise
    except Exception as exc:  # a bug of errscan's: this file's error, not the scan's end
        reason = f"errscan failed on this file: {type(exc).__name__}: {exc}"
        return FileResult(path, error=FileError(path, " ".join(reason.split()), transient=True))
    return FileResult(path, sites=tuple(found.sites), summary=facts)


# Python frames that parsing and extracting one file may use above the caller's: a file
# too deep for them is too deep wherever it is read (a pool worker forked from a deep
# stack, a library caller's thread), not only in some processes. CPython runs 12,000
# frames of ast.unparse on 3.10-3.13 without exhausting the C stack.
_HEADROOM = 6000


@contextlib.contextmanager
def _headroom() -> Iterator[None]:
    depth = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + _HEADROOM)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


class _TimedOut(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float | None) -> Iterator[None]:
    """Raise _TimedOut in this thread after `seconds` (main thread only; else no limit)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _worker_init(store: tuple[str, str] | None, nice: int = 0) -> None:
    """`store`: the result cache's path and digest, for the worker to write results to;
    `nice`: how much lower than this process's the worker's scheduling priority is."""
    global _stored_by_worker
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    # A connection of the worker's own, never one inherited through fork; the main
    # process keeps its own open (and so its hold on the write-ahead log's index) until
    # the pool has shut down.
    if store is not None:
        with contextlib.suppress(OSError, sqlite3.Error):  # else results go back to the main
            _stored_by_worker = cache.ResultCache(Path(store[0]), store[1])
    # Ctrl-C reaches the whole process group: the main process ends the scan, and a
    # worker that also took the interrupt would only print a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the errscan command's SIGTERM handler unwinds its own scan: a worker just ends
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Syntax trees hold no reference cycles and die with their file: collecting
    # generations while they are built only costs time. Each batch starts by collecting
    # the young generation instead (scan_file leaves no cycles, but a traceback kept
    # for a file error holds its frames): garbage never outlives a batch.
    gc.freeze()
    gc.set_threshold(200_000, 50, 100)
    global _in_worker
    _in_worker = True


def preload() -> None:
    """Import what a process pool needs in a thread of its own, while this one waits on
    git listing the files: a scan that starts a pool then finds it loaded (Scanner waits
    for background work before it forks), one that needs none has lost nothing."""
    background.run(_import_pool)


def _import_pool() -> None:
    import concurrent.futures.process  # noqa: F401
    import multiprocessing  # noqa: F401


def worker_cache() -> cache.ResultCache | None:
    """In a pool worker: its own connection to the result cache, where it has one."""
    return _stored_by_worker


def _scan_batch(
    batch: list[tuple[str, str, bytes | Unread]],
    radius: int,
    timeout: float | None,
    held: bool = False,
) -> list[Scanned]:
    """`held`: each file's sites and summary given back too (Held)."""
    if _in_worker:
        gc.collect(0)
    encoded = [
        cache.encode(scan_file(path, data, radius, timeout, partial=True))
        for path, _, data in batch
    ]
    if _stored_by_worker is not None:
        try:
            _stored_by_worker.put_many(
                (sha, e) for (_, sha, _), e in zip(batch, encoded, strict=True)
            )
        except sqlite3.Error:
            pass  # locked past the wait, or the disk full: the main process stores them
        else:
            return [(e[2], e[3], None, (e[0], e[1]) if held else None) for e in encoded]
    return [(e[2], e[3], e, (e[0], e[1]) if held else None) for e in encoded]


class Scanner:
    """Runs scan_file over files in `jobs` processes (in this one for jobs=1), keeping order.

    At most a few batches per worker are in flight, so memory holds a handful of files'
    sources at a time whatever the repository's size.
    """

    def __init__(
        self,
        jobs: int,
        radius: int,
        timeout: float | None = None,
        store: tuple[str, str] | None = None,
    ) -> None:
        """`store`: the path and digest of a result cache file the workers write to."""
        self.radius = radius
        self.timeout = timeout
        self.jobs = jobs
        self._pool: ProcessPoolExecutor | None = None
        self._store = store
        # a retired pool's thread, which shutdown(wait=False) lets go of: joined later
        self._retiring: threading.Thread | None = None
        if jobs > 1:
            self._start()

    def _start(self, nice: int = 0) -> None:
        # imported here: a warm rescan never needs a pool, nor the import time
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork is cheap, and safe here: no thread of ours runs when a pool starts (a
        # replaced pool's threads have ended with its shutdown, a state closing behind
        # an earlier scan is waited for)
        background.settle()
        context = multiprocessing.get_context("fork")
        self._pool = ProcessPoolExecutor(
            self.jobs, mp_context=context, initializer=_worker_init, initargs=(self._store, nice)
        )
        _widen_pipes(self._pool)
        # A first task forks every worker now, in this call, before the pool's threads
        # start (ProcessPoolExecutor's way with fork, Python 3.10 to 3.13). Not waited
        # for: the workers start up (their cache connection) while this process goes on.
        self._pool.submit(int)

    def retire(self) -> None:
        """Let the workers end, for `restart` to replace them: meanwhile the pool takes
        no work."""
        if self._pool is not None:
            # the pool forgets its manager thread as it shuts down without waiting: kept
            # here, so that wait_retired can wait for it (its end is the pool's threads')
            self._retiring = getattr(self._pool, "_executor_manager_thread", None)
            self._pool.shutdown(wait=False)

    def wait_retired(self) -> None:
        """Wait for the workers' end, and for the pool's threads' (after `retire` too)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        if self._retiring is not None:
            self._retiring.join()
            self._retiring = None

    def restart(self, nice: int = 0) -> None:
        """Fresh workers, forked from this process as it is now (holding what the main
        process set up since the pool started), once the old ones have ended; `nice`: as
        _worker_init takes it."""
        if self._pool is not None:
            self.wait_retired()
            self._start(nice)

    @property
    def pooled(self) -> bool:
        """Whether `map` runs its work in other processes."""
        return self._pool is not None

    def close(self) -> None:
        """End the workers, and wait for them; after `retire`, behind the scan
        (background.py: before the process forks again or exits), for a retired pool has
        done all its work and its workers take some milliseconds to go (Django's linking
        workers 5 ms, which the scan's last writes then overlap)."""
        pool, retiring = self._pool, self._retiring
        self._retiring = None
        if pool is not None and retiring is not None:

            def ended() -> None:
                pool.shutdown(wait=True)
                retiring.join()

            background.run(ended)
        elif pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Scanner:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def map(self, work: Callable[[_T], _U], items: Iterable[_T]) -> Iterator[_U]:
        """`work` over the items, in the pool where there is one, in order, with one
        item more than the workers in flight. `work` must be a module's function, its
        items picklable."""
        if self._pool is None:
            yield from map(work, items)
            return
        pending: deque[Future[_U]] = deque()
        for item in items:
            pending.append(self._pool.submit(work, item))
            while len(pending) > self.jobs:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()

    def submit(self, work: Callable[[_T], _U], items: Iterable[_T]) -> Iterator[_U]:
        """`work` over the items, all given to the pool at once (where there is one: else
        done one by one as the results are asked for), the results in order. For a few
        items with small results: all may be held at once."""
        if self._pool is None:
            return map(work, items)
        futures = [self._pool.submit(work, item) for item in items]
        return (future.result() for future in futures)

    def scanned(
        self, files: Iterable[SourceFile], held: Callable[[], bool] | None = None
    ) -> Iterator[tuple[SourceFile, Scanned]]:
        """Each file, in input order, with the names it defines and its encoded result
        (None where a worker stored it); `held`: whether the files' sites and summaries
        are wanted too, asked before each batch."""
        if self._pool is None:
            for source_file in files:
                work = [(source_file.path, source_file.sha, source_file.data)]
                wanted = held is not None and held()
                data = _scan_batch(work, self.radius, self.timeout, wanted)[0]
                yield _without_data(source_file), data
            return
        pending: deque[tuple[list[SourceFile], Future[list[Scanned]]]] = deque()
        for done, batch in enumerate(_batches(files), 1):
            if done % _WORKER_BATCHES == 0:
                # fresh workers: a worker's allocator keeps the holes of every file it
                # parsed, and its memory would creep up with the repository's size
                while pending:
                    yield from _drain(pending.popleft())
                self.restart()
            assert self._pool is not None
            work = [(f.path, f.sha, f.data) for f in batch]
            wanted = held is not None and held()
            pending.append(
                (
                    [_without_data(f) for f in batch],
                    self._pool.submit(_scan_batch, work, self.radius, self.timeout, wanted),
                )
            )
            while len(pending) > 3 * self.jobs:
                yield from _drain(pending.popleft())
        while pending:
            yield from _drain(pending.popleft())


_PIPE_BYTES = 1 << 20  # Linux's most for a user's pipe, unless raised (fs.pipe-max-size)


def _widen_pipes(pool: ProcessPoolExecutor) -> None:
    """Let the pool's pipes hold a whole batch, and a whole batch's results (some 200 KB
    each: held sites and summaries): a worker then hands its results back and takes its
    next batch without waiting for this process's threads to read or write them a 64 KB
    pipe at a time. Those threads run when the main thread lets them have the GIL:
    handing back its results took each of Django's first-pass workers 17-22 ms in all,
    then 14 ms. Linux only; where the pipes cannot grow (the user's pipe memory used
    up), they stay as they are."""
    import fcntl

    grow = getattr(fcntl, "F_SETPIPE_SZ", None)
    if grow is None:
        return
    # private, the same on Python 3.10 to 3.13: a multiprocessing Queue and SimpleQueue
    for queue in (getattr(pool, "_call_queue", None), getattr(pool, "_result_queue", None)):
        reader = getattr(queue, "_reader", None)
        if reader is not None:
            with contextlib.suppress(OSError, ValueError):
                fcntl.fcntl(reader.fileno(), grow, _PIPE_BYTES)


def _without_data(source_file: SourceFile) -> SourceFile:
    return SourceFile(source_file.path, source_file.sha, b"")


def _drain(
    item: tuple[list[SourceFile], Future[list[Scanned]]],
) -> Iterator[tuple[SourceFile, Scanned]]:
    batch, future = item
    yield from zip(batch, future.result(), strict=True)


def _batches(files: Iterable[SourceFile]) -> Iterator[list[SourceFile]]:
    batch: list[SourceFile] = []
    size = 0
    for source_file in files:
        batch.append(source_file)
        size += len(source_file.data) if isinstance(source_file.data, bytes) else 0
        if size >= _BATCH_BYTES or len(batch) >= _BATCH_FILES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
