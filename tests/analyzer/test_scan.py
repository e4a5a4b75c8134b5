"""Scanning one file: what a worker is left holding afterwards."""

from __future__ import annotations

import fcntl
import gc
import os
import sys
import threading
from pathlib import Path
from typing import cast

import pytest

import errscan
from errscan import background
from errscan.analyzer import cache, scan
from errscan.analyzer.scan import scan_file
from errscan.models import FileResult


def test_scanning_leaves_no_reference_cycles() -> None:
    """A worker collects garbage seldom (scan._worker_init): a cycle left per site would
    pile up over a large repository. errscan's own sources raise in most forms."""
    sources = sorted(Path(errscan.__file__).parent.rglob("*.py"))
    gc.collect()
    gc.disable()
    try:
        sites = 0
        for path in sources:
            result = scan.scan_file(str(path), path.read_bytes(), 3)
            sites += len(result.sites)
            cache.encode(result)
        del result
        left = gc.collect()
    finally:
        gc.enable()
    assert sites > 50
    assert left == 0


def test_fresh_workers_replace_the_pools_every_few_batches(
    basic_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's allocator keeps the holes of the files it parsed: after a number of
    batches, new workers take over, and the scan gives what one process gives."""
    serial = errscan.extract(str(basic_repo), jobs=1, use_cache=False)
    monkeypatch.setattr(scan, "_POOL_MIN_BYTES", 0)
    monkeypatch.setattr(scan, "_BATCH_FILES", 1)
    monkeypatch.setattr(scan, "_WORKER_BATCHES", 2)
    workers: list[set[int]] = []  # each pool's
    real = scan.Scanner._start

    def noting(self: scan.Scanner, nice: int = 0) -> None:
        real(self, nice)
        workers.append(set(self._pool._processes))  # type: ignore[union-attr]

    monkeypatch.setattr(scan.Scanner, "_start", noting)
    pooled = errscan.extract(str(basic_repo), jobs=2, use_cache=False)
    assert pooled.records == serial.records
    assert pooled.file_errors == serial.file_errors
    assert serial.stats.files >= 6
    assert len(workers) >= 3  # the first pool, then one every two files
    assert len(set().union(*workers)) == 2 * len(workers)  # each pool's processes new


def _at_depth(frames: int, path: str, source: bytes) -> FileResult:
    if frames:
        return _at_depth(frames - 1, path, source)
    return scan_file(path, source, 2)


@pytest.mark.parametrize("terms", [320, 1500, 20_000])
def test_how_deep_a_file_may_be_is_the_file_s_not_the_caller_s(terms: int) -> None:
    """A pool worker forks from a deep stack: a guard of 320 `+` terms once gave a record
    in one process and a kept file error in another."""
    source = f"if x == {' + '.join(['1'] * terms)}:\n    raise ValueError('deep')\n".encode()
    shallow = scan_file("deep.py", source, 2)
    for frames in (100, 800):
        assert _at_depth(frames, "deep.py", source) == shallow
    if terms <= 1500 or sys.version_info < (3, 11):  # 3.10's parser builds deeper trees
        assert shallow.error is None and [s.message for s in shallow.sites] == ["deep"]
    else:
        assert shallow.error is not None and not shallow.error.transient


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_first_pass_hands_over_the_ranking_features_it_makes(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """The features of the files scanned now come back with their names, so the
    whole-scan work reads none from the cache; past scan._FRESH_SITES sites none are
    held, and all are read from it. The records are the same either way."""
    monkeypatch.setattr(scan, "_POOL_MIN_BYTES", 0)
    asked: list[int] = []
    get_many = cache.ResultCache.get_many

    def counting(self: cache.ResultCache, shas: list[str], column: str = "data") -> object:
        if column == "features":
            asked.append(len(shas))
        return get_many(self, shas, column)

    monkeypatch.setattr(cache.ResultCache, "get_many", counting)
    held = errscan.extract(str(basic_repo), jobs=jobs, use_cache=False)
    assert asked == []
    monkeypatch.setattr(scan, "_FRESH_SITES", 1)
    read = errscan.extract(str(basic_repo), jobs=jobs, use_cache=False)
    assert sum(asked) == read.stats.files
    assert read.records == held.records


def test_a_summary_read_whole_again_keeps_to_the_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """scan.complete gives the file's whole summary, stored for the next scan; None where
    reading it whole outlasts the first pass's time limit (the index then takes its
    deferred classes as unread)."""
    import time

    from errscan.analyzer.files import BlobEntry, SourceFile

    code = b"class Base:\n    def __init__(self, x):\n        super().__init__(f'bad {x}')\n"
    entry = BlobEntry("m.py", "0" * 40, len(code))

    def read(entries: object) -> object:
        return iter([SourceFile(entry.path, entry.sha, code)])

    stored = cache.ResultCache.in_memory("build", 3)
    try:
        whole = scan.complete("m.py", entry, read, 3, 5.0, stored)  # type: ignore[arg-type]
        assert whole is not None and not whole.partial
        assert whole.classes[0].init_params == ("x",)
        kept = stored.summary(entry.sha)
        assert kept is not None and not kept.partial
    finally:
        stored.close()
    real = scan._scan

    def slow(path: str, data: bytes | str, radius: int, partial: bool) -> object:
        time.sleep(2)
        return real(path, data, radius, partial)

    monkeypatch.setattr(scan, "_scan", slow)
    assert scan.complete("m.py", entry, read, 3, 0.2, None) is None  # type: ignore[arg-type]


def test_a_retired_pool_is_waited_for_behind_the_scanner_s_close() -> None:
    """A first scan retires its linking workers as the last batch comes back, and closes
    the scanner later: the workers and the pool's manager thread (which the pool itself
    forgets once told to shut down without waiting) are waited for behind the close,
    before the process forks or exits (background.wait)."""
    scanner = scan.Scanner(2, 2)
    assert scanner._pool is not None
    assert list(scanner.map(abs, [-1, -2, 3])) == [1, 2, 3]
    processes = list(scanner._pool._processes.values())
    thread = cast(threading.Thread, scanner._pool._executor_manager_thread)
    assert thread is not None and thread.is_alive()
    scanner.retire()
    scanner.close()
    background.wait()
    assert not thread.is_alive()
    assert processes and all(process.exitcode == 0 for process in processes)


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="pipe sizes are Linux's")
def test_a_pool_s_pipes_hold_a_whole_batch_and_its_results() -> None:
    """A worker hands back some 200 KB of results per batch: through a 64 KB pipe it
    would wait, a pipe's worth at a time, for this process's threads to read them."""
    with open("/proc/sys/fs/pipe-max-size") as limit:
        most = int(limit.read())
    scanner = scan.Scanner(2, 2)
    try:
        assert scanner._pool is not None
        pipes = [scanner._pool._call_queue._reader, scanner._pool._result_queue._reader]  # type: ignore[attr-defined]
        sizes = [fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ) for pipe in pipes]
        assert sizes == [min(most, 1 << 20)] * 2
        assert list(scanner.map(abs, [-1, 2])) == [1, 2]
    finally:
        scanner.close()


def test_a_pool_s_workers_are_forked_as_it_starts() -> None:
    """The fork comes in the scanner's start, with this process as it is then (what a
    first scan's linking workers are to hold), not when a first batch is given; the
    start does not wait for the workers to be ready."""
    scanner = scan.Scanner(2, 2)
    try:
        assert scanner._pool is not None
        processes = scanner._pool._processes
        assert processes is not None and len(processes) == 2
        assert all(process.pid for process in processes.values())
        assert list(scanner.map(abs, [-3])) == [3]
    finally:
        scanner.close()


def test_fresh_workers_may_be_scheduled_below_this_process() -> None:
    """A first scan's linking workers yield the CPU to the main process and the ranking
    process, which the scan's end waits on."""
    own = os.nice(0)
    scanner = scan.Scanner(2, 2)
    try:
        assert list(scanner.map(os.nice, [0, 0])) == [own, own]
        scanner.retire()
        scanner.restart(nice=3)
        assert list(scanner.map(os.nice, [0, 0])) == [min(19, own + 3)] * 2
    finally:
        scanner.close()
    assert os.nice(0) == own
