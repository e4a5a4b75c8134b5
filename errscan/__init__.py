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

from errscan.analyzer import files, link, repo, scan
from errscan.errors import InputError
from errscan.models import ErrorRecord, FileError, ScanResult, ScanStats, Site

__version__ = "0.1.0"
__all__ = [
    "ErrorRecord",
    "FileError",
    "InputError",
    "ScanResult",
    "__version__",
    "default_cache_dir",
    "extract",
    "extract_source",
]

Progress = Callable[[int, int], None]


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
    progress: Progress | None = None,
) -> ScanResult:
    """Scan REPO@REV: resolve the commit, read its Python files, and return every site.

    Raises InputError for bad input (unknown path or revision, network failure).
    """
    started = time.perf_counter()
    if context < 0:
        raise InputError(f"context must be 0 or more lines, not {context}")
    cache = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    commit = repo.resolve(repo.parse_target(target), cache, repo_name)
    handle = repo.open_repo(commit.git_dir)
    wanted = files.Filters(include_tests, tuple(include), tuple(exclude))
    entries = files.list_files(handle, commit.sha, wanted)
    found: list[Site] = []
    file_errors: list[FileError] = []
    for done, result in enumerate(scan.scan(files.read_files(handle, entries), context), 1):
        found.extend(result.sites)
        if result.error is not None:
            file_errors.append(result.error)
        if progress is not None:
            progress(done, len(entries))
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


def extract_source(
    code: str | bytes, path: str = "mod.py", *, context: int = 15
) -> list[ErrorRecord]:
    """The records of one file's source; a file that does not parse gives no records."""
    result = scan.scan_file(path, code, context)
    return link.link(result.sites, "", "", lambda _file, _line: None)
