"""errscan: every raise and assert of a Git repository at a pinned commit, as records.

result = errscan.extract("owner/name@v1.2.0")
for record in result.records:
    print(record.id, record.exception, record.message, record.url)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import git

from errscan.analyzer import cache, files, link, repo, scan
from errscan.errors import InputError
from errscan.models import ErrorRecord, FileError, FileResult, ScanResult, ScanStats

__version__ = "0.1.0"
__all__ = [
    "ErrorRecord",
    "FileError",
    "InputError",
    "ScanResult",
    "__version__",
    "cache_info",
    "default_cache_dir",
    "extract",
    "extract_source",
    "prune_cache",
]

Progress = Callable[[int, int], None]
_POOL_MIN_BYTES = 512 * 1024


def default_cache_dir() -> Path:
    """ERRSCAN_CACHE_DIR, else the user cache dir (XDG_CACHE_HOME or ~/.cache) / errscan."""
    explicit = os.environ.get("ERRSCAN_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "errscan"


def extract(
    target: str,
    *,
    include_tests: bool = False,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    context: int = 15,
    cache_dir: str | Path | None = None,
    repo_name: str | None = None,
    jobs: int | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
) -> ScanResult:
    """Scan REPO@REV: resolve the commit, read its Python files, and return every site.

    Files whose blob was extracted before (in any repository) come from the result
    cache; the rest are parsed in `jobs` processes (default: the number of CPUs).
    Raises InputError for bad input (unknown path or revision, network failure).
    """
    started = time.perf_counter()
    if context < 0:
        raise InputError(f"context must be 0 or more lines, not {context}")
    cache_root = _cache_root(cache_dir)
    commit = repo.resolve(repo.parse_target(target), cache_root, repo_name)
    handle = repo.open_repo(commit.git_dir)
    wanted = files.Filters(include_tests, tuple(include), tuple(exclude))
    entries = files.list_files(handle, commit.sha, wanted)
    results = cache.ResultCache.open(cache_root, __version__, context) if use_cache else None
    try:
        per_file = _file_results(handle, entries, results, context, jobs, progress)
    finally:
        if results is not None:
            results.close()
    found = [site for result in per_file for site in result.sites]
    file_errors = sorted(
        (result.error for result in per_file if result.error is not None), key=lambda e: e.file
    )
    records = link.link(found, commit.repo, commit.sha, commit.url)
    stats = ScanStats(
        files=len(entries),
        sites=len(records),
        file_errors=len(file_errors),
        seconds=time.perf_counter() - started,
    )
    return ScanResult(
        repo=commit.repo,
        commit=commit.sha,
        errscan_version=__version__,
        records=tuple(records),
        file_errors=tuple(file_errors),
        stats=stats,
    )


def _file_results(
    handle: git.Repo,
    entries: Sequence[files.BlobEntry],
    results: cache.ResultCache | None,
    context: int,
    jobs: int | None,
    progress: Progress | None,
) -> list[FileResult]:
    """Every entry's result: cached ones first, then the rest scanned and cached."""
    done: list[FileResult] = []
    stored = results.get_many([entry.sha for entry in entries]) if results is not None else {}
    misses = []
    for entry in entries:
        hit = cache.decode(stored[entry.sha], entry.path) if entry.sha in stored else None
        if hit is None:
            misses.append(entry)
        else:
            done.append(hit)
    if progress is not None:
        progress(len(done), len(entries))
    fresh: list[tuple[str, bytes]] = []
    misses.sort(key=lambda entry: -entry.size)  # largest first: no straggler at the end
    with scan.Scanner(_worker_count(jobs, misses), context) as scanner:
        for source_file, data in scanner.encoded(files.read_files(handle, misses)):
            result = cache.decode(data, source_file.path)
            assert result is not None  # just encoded by scan_file
            done.append(result)
            fresh.append((source_file.sha, data))
            if progress is not None:
                progress(len(done), len(entries))
    if results is not None:
        results.put_many(fresh)
        if fresh:
            results.prune(cache.DEFAULT_MAX_BYTES)
    return done


def _worker_count(jobs: int | None, misses: Sequence[files.BlobEntry]) -> int:
    """The pool pays for itself only on enough source; a few files are scanned in-process."""
    wanted = jobs if jobs is not None else (os.cpu_count() or 1)
    if sum(entry.size for entry in misses) < _POOL_MIN_BYTES:
        return 1
    return max(1, min(wanted, len(misses)))


def cache_info(cache_dir: str | Path | None = None) -> cache.CacheInfo:
    """The result cache's path, entry count and size."""
    results = cache.ResultCache.open(_cache_root(cache_dir), __version__, 0)
    try:
        return results.info()
    finally:
        results.close()


def prune_cache(
    cache_dir: str | Path | None = None, max_bytes: int = cache.DEFAULT_MAX_BYTES
) -> tuple[int, cache.CacheInfo]:
    """Drop least recently used results down to `max_bytes`: how many, and what is left."""
    results = cache.ResultCache.open(_cache_root(cache_dir), __version__, 0)
    try:
        dropped = results.prune(max_bytes)
        return dropped, results.info()
    finally:
        results.close()


def _cache_root(cache_dir: str | Path | None) -> Path:
    return Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()


def extract_source(
    code: str | bytes, path: str = "mod.py", *, context: int = 15
) -> list[ErrorRecord]:
    """The records of one file's source; a file that does not parse gives no records."""
    result = scan.scan_file(path, code, context)
    return link.link(result.sites, "", "", lambda _file, _line: None)
