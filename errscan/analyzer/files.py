"""Commit -> the Python files to scan, read in one `git cat-file --batch` stream."""

from __future__ import annotations

import bisect
import io
import subprocess
import threading
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import IO, TypeVar, overload

import git

from errscan.errors import InputError

_T = TypeVar("_T")
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


class MadeOnDemand(Sequence[_T]):
    """A sequence whose items are made when asked for, by `_item(i)`: the compact
    holders below keep no object per item."""

    __slots__ = ()

    def _item(self, i: int) -> _T:
        raise NotImplementedError

    @overload
    def __getitem__(self, item: int) -> _T: ...
    @overload
    def __getitem__(self, item: slice) -> list[_T]: ...
    def __getitem__(self, item: int | slice) -> _T | list[_T]:
        if isinstance(item, slice):
            return [self._item(i) for i in range(*item.indices(len(self)))]
        if item < 0:
            item += len(self)
        if not 0 <= item < len(self):
            raise IndexError("index out of range")
        return self._item(item)

    def __iter__(self) -> Iterator[_T]:
        return (self._item(i) for i in range(len(self)))


class Packed(MadeOnDemand[str]):
    """Strings held as one text and an array of where each ends: a scan's paths and
    module names cost about their characters, where a list of str objects costs 50
    more bytes apiece and leaves the small-object allocator fragmented. Items are made
    when asked for."""

    __slots__ = ("_ends", "_text")

    def __init__(self, items: Iterable[str]) -> None:
        # written as they come: no list of the items, even for a while
        text = io.StringIO()
        self._ends = array("q")
        end = 0
        for item in items:
            text.write(item)
            end += len(item)
            self._ends.append(end)
        self._text = text.getvalue()

    def __len__(self) -> int:
        return len(self._ends)

    def _item(self, i: int) -> str:
        return self._text[self._ends[i - 1] if i else 0 : self._ends[i]]

    def find(self, item: str) -> int:
        """Where `item` is in these strings, sorted; -1 where it is not."""
        i = bisect.bisect_left(self, item)
        return i if i < len(self._ends) and self._item(i) == item else -1


class Listing(MadeOnDemand[BlobEntry]):
    """A commit's files sorted by path, held compactly: the paths packed, the blob ids
    as raw bytes and the sizes as an array (36 bytes a file beside its path's
    characters, where BlobEntry objects take 250); entries are made when asked for."""

    __slots__ = ("_ids", "_sizes", "_width", "paths")

    def __init__(self, entries: Iterable[tuple[str, str, int]]) -> None:
        """`entries`: (path, hex blob id, size), paths distinct, best sorted (as git
        lists them): they are packed as they come, and sorted afterwards only where
        they were not."""
        ids = bytearray()
        sizes = array("q")
        in_order = True
        last: str | None = None
        width = None

        def packed() -> Iterator[str]:
            nonlocal in_order, last, width
            for path, sha, size in entries:
                if last is not None and path <= last:
                    in_order = False
                last = path
                raw = bytes.fromhex(sha)
                # SHA-1 ids, or SHA-256 ones in a repository of that object format
                if width is None:
                    width = len(raw)
                elif len(raw) != width:
                    raise ValueError("blob ids of mixed lengths")
                ids.extend(raw)
                sizes.append(size)
                yield path

        self.paths = Packed(packed())
        self._width = width or 20
        self._ids = bytes(ids)
        self._sizes = sizes
        if not in_order:
            self._sort()

    def _sort(self) -> None:
        order = sorted(range(len(self.paths)), key=self.paths.__getitem__)
        self.paths = Packed(self.paths[i] for i in order)
        self._ids = b"".join(self._ids[i * self._width : (i + 1) * self._width] for i in order)
        self._sizes = array("q", (self._sizes[i] for i in order))

    def __len__(self) -> int:
        return len(self.paths)

    def sha(self, path: str) -> str:
        """The blob id of the file at `path`; KeyError where the listing has none."""
        i = self.paths.find(path)
        if i < 0:
            raise KeyError(path)
        return self._id(i)

    def _id(self, i: int) -> str:
        return self._ids[i * self._width : (i + 1) * self._width].hex()

    def _item(self, i: int) -> BlobEntry:
        return BlobEntry(self.paths[i], self._id(i), self._sizes[i])


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
