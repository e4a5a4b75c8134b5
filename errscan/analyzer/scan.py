"""SourceFiles -> per-file results: parse each file and pull out its sites, over a process pool.

Workers return each result already encoded for the result cache, so a fresh result and a
cached one take the same path back (cache.decode) and the cache is filled on the way.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from errscan.analyzer import cache
from errscan.analyzer.files import SourceFile
from errscan.analyzer.parse import parse
from errscan.extractors import sites
from errscan.models import FileError, FileResult

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

_BATCH_BYTES = 256 * 1024  # files go to a worker in batches of about this much source
_BATCH_FILES = 32


def scan_file(path: str, data: bytes | str, radius: int) -> FileResult:
    """One file's sites, or the error that stopped it; never raises for bad input."""
    parsed = parse(data, path)
    if isinstance(parsed, FileError):
        return FileResult(path, error=parsed)
    try:
        found = sites.extract(parsed.tree, parsed.src, radius)
    except (RecursionError, MemoryError) as exc:
        return FileResult(path, error=FileError(path, f"too deeply nested: {type(exc).__name__}"))
    return FileResult(path, sites=tuple(found))


def _worker_init() -> None:
    # Syntax trees hold no reference cycles and die with their file: collecting
    # generations while they are built only costs time.
    gc.freeze()
    gc.set_threshold(200_000, 50, 100)


def _scan_batch(batch: list[tuple[str, bytes]], radius: int) -> list[bytes]:
    return [cache.encode(scan_file(path, data, radius)) for path, data in batch]


class Scanner:
    """Runs scan_file over files in `jobs` processes (in this one for jobs=1), keeping order.

    At most a few batches per worker are in flight, so memory holds a handful of files'
    sources at a time whatever the repository's size.
    """

    def __init__(self, jobs: int, radius: int) -> None:
        self.radius = radius
        self.jobs = jobs
        self._pool: ProcessPoolExecutor | None = None
        if jobs > 1:
            # imported here: a warm rescan never needs a pool, nor the import time
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # fork is cheap, and safe here: the pool starts before any thread of ours does
            context = multiprocessing.get_context("fork")
            self._pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_worker_init)
            self._pool.submit(int).result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Scanner:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def encoded(self, files: Iterable[SourceFile]) -> Iterator[tuple[SourceFile, bytes]]:
        """Each file with its encoded result, in input order."""
        if self._pool is None:
            for source_file in files:
                data = _scan_batch([(source_file.path, source_file.data)], self.radius)[0]
                yield _without_data(source_file), data
            return
        pending: deque[tuple[list[SourceFile], Future[list[bytes]]]] = deque()
        for batch in _batches(files):
            work = [(f.path, f.data) for f in batch]
            pending.append(
                (
                    [_without_data(f) for f in batch],
                    self._pool.submit(_scan_batch, work, self.radius),
                )
            )
            while len(pending) > 3 * self.jobs:
                yield from _drain(pending.popleft())
        while pending:
            yield from _drain(pending.popleft())


def _without_data(source_file: SourceFile) -> SourceFile:
    return SourceFile(source_file.path, source_file.sha, b"")


def _drain(
    item: tuple[list[SourceFile], Future[list[bytes]]],
) -> Iterator[tuple[SourceFile, bytes]]:
    batch, future = item
    yield from zip(batch, future.result(), strict=True)


def _batches(files: Iterable[SourceFile]) -> Iterator[list[SourceFile]]:
    batch: list[SourceFile] = []
    size = 0
    for source_file in files:
        batch.append(source_file)
        size += len(source_file.data)
        if size >= _BATCH_BYTES or len(batch) >= _BATCH_FILES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
