"""Commit -> the Python files to scan, read in one `git cat-file --batch` stream."""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import subprocess
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import IO, Any, TypeVar

import git

from errscan.errors import InputError

_T = TypeVar("_T")
_SUFFIXES = (".py", ".pyi")
_TEST_DIRS = frozenset({"tests", "test"})
_BLOB_MODES = frozenset({b"100644", b"100755", b"100664"})  # never 120000 links or 160000 gitlinks
_PAGE = 256  # listing rows read at once
_CACHE_KB = 256  # the listing database's page cache
_AHEAD = 64  # blobs asked of git before the first of them is read


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


class Listing:
    """A commit's files sorted by path, in a scratch SQLite database of the scan's own:
    memory holds a page cache of them whatever the repository's size, where any object or
    array per file would grow it. Its one connection serves one thread at a time (any).

    The database also takes other tables a scan needs over all its paths (the modules
    of index.ModuleTable).
    """

    def __init__(self, entries: Iterable[tuple[str, str, int]]) -> None:
        """`entries`: (path, hex blob id, size), paths distinct, in any order."""
        # "": a private database that SQLite keeps on disk past its page cache and
        # deletes when closed
        self.db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
        self.db.execute(f"PRAGMA cache_size = -{_CACHE_KB}")
        self.db.execute(
            "CREATE TABLE file (path TEXT PRIMARY KEY, sha TEXT NOT NULL, "
            "size INTEGER NOT NULL, marked INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID"
        )
        self._count = 0
        self.db.execute("BEGIN")
        for chunk in chunks(entries, _PAGE * 4):
            self.db.executemany("INSERT INTO file (path, sha, size) VALUES (?, ?, ?)", chunk)
            self._count += len(chunk)
        self.db.execute("COMMIT")

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[BlobEntry]:
        """The entries by path, a page at a time: other queries may run between items."""
        for path, sha, size in self._pages("path, sha, size"):
            yield BlobEntry(path, sha, size)

    def paths(self) -> Iterator[str]:
        for (path,) in self._pages("path"):
            yield path

    def _pages(self, columns: str) -> Iterator[tuple[Any, ...]]:
        """Rows by path, `columns` starting with the path, a page read whole at a time."""
        last = ""
        while rows := self.db.execute(
            f"SELECT {columns} FROM file WHERE path > ? ORDER BY path LIMIT ?",
            (last, _PAGE),
        ).fetchall():
            last = rows[-1][0]
            yield from rows

    def sha(self, path: str) -> str:
        """The blob id of the file at `path`; KeyError where the listing has none."""
        found = self.db.execute("SELECT sha FROM file WHERE path = ?", (path,)).fetchone()
        if found is None:
            raise KeyError(path)
        return str(found[0])

    def mark(self, paths: Iterable[str]) -> None:
        self.db.executemany("UPDATE file SET marked = 1 WHERE path = ?", ((p,) for p in paths))

    def marked(self) -> Iterator[BlobEntry]:
        """The marked entries, largest first (by path where sizes tie)."""
        rows = self.db.execute(
            "SELECT path, sha, size FROM file WHERE marked ORDER BY size DESC, path"
        )
        while page := rows.fetchmany(_PAGE):
            for path, sha, size in page:
                yield BlobEntry(path, sha, size)

    def close(self) -> None:
        self.db.close()


def chunks(items: Iterable[_T], size: int) -> Iterator[list[_T]]:
    """The items in lists of `size` (the last one shorter)."""
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


@dataclass(frozen=True)
class SourceFile:
    path: str
    sha: str
    data: bytes


def list_files(repo: git.Repo, commit: str, filters: Filters) -> Listing:
    """Regular-file blobs at `commit` that `filters` wants, sorted by path."""
    proc = repo.git.ls_tree("-r", "-z", "-l", "--full-tree", commit, as_process=True)
    try:
        listing = Listing(_wanted(_records(proc.proc.stdout), filters))
        proc.wait()
    except git.GitCommandError as exc:
        raise InputError(f"cannot list files of {commit}: {exc.stderr.strip()}") from exc
    return listing


def _records(stream: IO[bytes]) -> Iterator[bytes]:
    """NUL-ended records read a chunk at a time: memory never holds the whole output
    (2 MB at 20,000 files), whose pieces would stay behind as heap holes."""
    rest = b""
    while chunk := stream.read(1 << 16):
        records = (rest + chunk).split(b"\0")
        rest = records.pop()
        yield from records


def _wanted(records: Iterable[bytes], filters: Filters) -> Iterator[tuple[str, str, int]]:
    """The wanted blobs among `git ls-tree -r -z -l` records, in their (path) order."""
    for record in records:
        meta, tab, raw_path = record.partition(b"\t")
        if not tab:
            continue
        mode, kind, sha, size = meta.split()
        if kind != b"blob" or mode not in _BLOB_MODES:
            continue
        path = raw_path.decode("utf-8", "backslashreplace")
        if filters.wants(path):
            yield path, sha.decode("ascii"), int(size)


def read_files(repo: git.Repo, entries: Iterable[BlobEntry]) -> Iterator[SourceFile]:
    """The blobs' contents in order, from one `git cat-file --batch` process.

    `entries` is iterated once, in the caller's thread, a few dozen ahead of the blob
    read: git never waits on a full pipe of requests (a few KB), nor this process on
    git, which writes each blob out whole as soon as it is asked for.
    """
    pending: deque[BlobEntry] = deque()
    it = iter(entries)
    first = next(it, None)
    if first is None:
        return
    proc = repo.git.cat_file("--batch", as_process=True, istream=subprocess.PIPE)
    stdin: IO[bytes] = proc.proc.stdin
    stdout: IO[bytes] = proc.proc.stdout
    try:
        for entry in itertools.chain([first], it):
            pending.append(entry)
            with _asking(entry):
                stdin.write(entry.sha.encode("ascii") + b"\n")
            if len(pending) >= _AHEAD:
                with _asking(entry):
                    stdin.flush()
                while len(pending) > _AHEAD // 2:
                    yield _read_blob(stdout, pending.popleft())
        with _asking(None):
            stdin.close()
        while pending:
            yield _read_blob(stdout, pending.popleft())
    finally:
        proc.proc.kill()
        proc.proc.wait()


@contextlib.contextmanager
def _asking(entry: BlobEntry | None) -> Iterator[None]:
    """Writing requests to git: where it has gone, the scan cannot read its files."""
    try:
        yield
    except OSError as exc:
        what = f" {entry.path} ({entry.sha})" if entry is not None else ""
        raise InputError(f"cannot read{what} from git: {exc}") from exc


def _read_blob(stdout: IO[bytes], entry: BlobEntry) -> SourceFile:
    header = stdout.readline().split()
    if len(header) != 3:
        raise InputError(f"cannot read {entry.path} ({entry.sha}) from git")
    size = int(header[2])
    data = stdout.read(size)
    stdout.read(1)  # the newline after each object
    return SourceFile(entry.path, entry.sha, data)
