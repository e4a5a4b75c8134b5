"""Commit -> the Python files to scan, read in one `git cat-file --batch` stream."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import IO

import git

from errscan.errors import InputError

_SUFFIXES = (".py", ".pyi")
_TEST_DIRS = frozenset({"tests", "test"})
_BLOB_MODES = frozenset({b"100644", b"100755", b"100664"})  # never 120000 links or 160000 gitlinks


@dataclass(frozen=True)
class Filters:
    """Which paths a scan takes: test code out unless asked for, then --include/--exclude globs.

    Globs match the repo-relative POSIX path with fnmatch rules (`*` crosses `/`).
    """

    include_tests: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def wants(self, path: str) -> bool:
        if not path.endswith(_SUFFIXES):
            return False
        if not self.include_tests and is_test(path):
            return False
        if self.include and not any(fnmatchcase(path, glob) for glob in self.include):
            return False
        return not any(fnmatchcase(path, glob) for glob in self.exclude)


def is_test(path: str) -> bool:
    *folders, name = path.split("/")
    if _TEST_DIRS.intersection(folders) or name in ("conftest.py", "conftest.pyi"):
        return True
    stem = name.rsplit(".", 1)[0]
    return stem.startswith("test_") or stem.endswith("_test")


@dataclass(frozen=True, slots=True)
class BlobEntry:
    """A file of the commit; a scan holds one per file, so it has no __dict__."""

    path: str
    sha: str
    size: int


@dataclass(frozen=True)
class SourceFile:
    path: str
    sha: str
    data: bytes


def list_files(repo: git.Repo, commit: str, filters: Filters) -> list[BlobEntry]:
    """Regular-file blobs at `commit` that `filters` wants, sorted by path."""
    try:
        out: bytes = repo.git.ls_tree(
            "-r", "-z", "-l", "--full-tree", commit, stdout_as_string=False
        )
    except git.GitCommandError as exc:
        raise InputError(f"cannot list files of {commit}: {exc.stderr.strip()}") from exc
    entries = []
    for record in out.split(b"\0"):
        meta, tab, raw_path = record.partition(b"\t")
        if not tab:
            continue
        mode, kind, sha, size = meta.split()
        if kind != b"blob" or mode not in _BLOB_MODES:
            continue
        path = raw_path.decode("utf-8", "backslashreplace")
        if filters.wants(path):
            entries.append(BlobEntry(path, sha.decode("ascii"), int(size)))
    entries.sort(key=lambda entry: entry.path)
    return entries


def read_files(repo: git.Repo, entries: Sequence[BlobEntry]) -> Iterator[SourceFile]:
    """The blobs' contents in order, from one `git cat-file --batch` process."""
    if not entries:
        return
    proc = repo.git.cat_file("--batch", as_process=True, istream=subprocess.PIPE)
    stdin: IO[bytes] = proc.proc.stdin
    stdout: IO[bytes] = proc.proc.stdout
    writer = threading.Thread(target=_request, args=(stdin, entries), daemon=True)
    writer.start()
    try:
        for entry in entries:
            header = stdout.readline().split()
            if len(header) != 3:
                raise InputError(f"cannot read {entry.path} ({entry.sha}) from git")
            size = int(header[2])
            data = stdout.read(size)
            stdout.read(1)  # the newline after each object
            yield SourceFile(entry.path, entry.sha, data)
    finally:
        proc.proc.kill()
        proc.proc.wait()
        writer.join()


def _request(stdin: IO[bytes], entries: Sequence[BlobEntry]) -> None:
    try:
        for entry in entries:
            stdin.write(entry.sha.encode("ascii") + b"\n")
        stdin.close()
    except (BrokenPipeError, ValueError, OSError):
        pass  # the reader stopped early and closed the pipe
