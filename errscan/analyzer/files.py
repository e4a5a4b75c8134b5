"""Commit -> the Python files to scan, read in one `git cat-file --batch` stream (a local
repository's files checked out as they are in the commit: from its work tree)."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import stat
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from fnmatch import fnmatchcase
from typing import IO, Any, TypeVar

from errscan.analyzer.gitcmd import Git
from errscan.errors import InputError
from errscan.frozen import frozen
from errscan.models import FileError

_T = TypeVar("_T")
_SUFFIXES = (".py", ".pyi")
_RAW_SUFFIXES = tuple(suffix.encode("ascii") for suffix in _SUFFIXES)
_TEST_DIRS = frozenset({"tests", "test"})
_BLOB_MODES = frozenset({b"100644", b"100755", b"100664"})  # never 120000 links or 160000 gitlinks
_PAGE = 256  # listing rows read at once
_CACHE_KB = 256  # the listing database's page cache
_AHEAD = 64  # blobs asked of git before the first of them is read


@frozen
class Filters:
    """Which paths a scan takes: test code and vendored code out unless asked for, then
    --include/--exclude globs.

    Globs follow ruff's rules on the repo-relative POSIX path: `*` crosses `/`, `**/`
    also matches no folder at all, a glob that matches a folder takes everything in it
    (`src/pip/_vendor`), and a glob without `/` matches a folder or file name anywhere.
    """

    include_tests: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    include_vendored: bool = False
    # test code beyond the fixed rules: globs by the same rules (the test-paths setting),
    # and the scanned project's pytest `testpaths` (from its root) and `python_files`
    test_paths: tuple[str, ...] = ()
    pytest_paths: tuple[str, ...] = ()
    test_files: tuple[str, ...] = ()

    def wants(self, path: str) -> bool:
        if not path.endswith(_SUFFIXES):
            return False
        if not self.include_tests and self.is_test(path):
            return False
        if not self.include_vendored and is_vendored(path):
            return False
        if self.include and not any(matches(path, glob) for glob in self.include):
            return False
        return not any(matches(path, glob) for glob in self.exclude)

    def chooser(self) -> Callable[[str], bool]:
        """`wants`, quicker over many paths: where no glob or pytest setting applies, the
        answer for a path is its folder's (a test or vendored folder in it), asked once
        per folder, and its name's (a test file's name, a Python suffix)."""
        if self.include or self.exclude or self.test_paths or self.pytest_paths or self.test_files:
            return self.wants
        folders: dict[str, bool] = {}
        tests, vendored = not self.include_tests, not self.include_vendored

        def wants(path: str) -> bool:
            folder, _, name = path.rpartition("/")
            if not name.endswith(_SUFFIXES):
                return False
            if tests and (name in ("conftest.py", "conftest.pyi") or _test_name(name)):
                return False
            taken = folders.get(folder)
            if taken is None:
                parts = folder.split("/")
                taken = folders[folder] = not (
                    (tests and not _TEST_DIRS.isdisjoint(parts))
                    or (vendored and not _VENDORED_DIRS.isdisjoint(parts))
                )
            return taken

        return wants

    def is_test(self, path: str) -> bool:
        """Test code: by the fixed rules (is_test), a test-paths glob, or the scanned
        project's pytest settings. Under a testpaths folder named as tests are (pytest's
        `testing/`: is_test_folder), all is test code; under another (the package itself,
        `sympy`, `src`, whose tests sit among its code), the files named as its
        python_files patterns say, which pytest collects there; without testpaths,
        such files anywhere."""
        if is_test(path) or any(matches(path, glob) for glob in self.test_paths):
            return True
        if self.pytest_paths:
            under = [glob for glob in self.pytest_paths if _under(path, glob)]
            if any(is_test_folder(glob) for glob in under):
                return True
            if not under:
                return False
        return any(_named(path, pattern) for pattern in self.test_files)


def is_test_folder(path: str) -> bool:
    """Whether a folder's name says it holds tests: a word of one of its parts (split at
    `_`, `-` and `.`) is test, tests or testing (unittests, tests2 too): `testing`,
    `unit_tests`, `test-suite`; not a package's own name (`sympy`, `src`, `contest`,
    `pytest_httpx`)."""
    return any(_TEST_WORD.fullmatch(word) for word in _WORDS.split(path.lower()))


_WORDS = re.compile(r"[/_.-]")
_TEST_WORD = re.compile(r"(?:unit|functional|integration|i)?tests?\d*|testing")


_VENDORED_DIRS = frozenset({"_vendor", "vendor", "third_party", "extern"})


def is_vendored(path: str) -> bool:
    """Code a project carries of other projects: under a `_vendor/`, `vendor/`,
    `third_party/` or `extern/` folder."""
    return not _VENDORED_DIRS.isdisjoint(path.split("/")[:-1])


_AREAS = {
    "examples": "examples", "example": "examples",
    "docs": "docs", "doc": "docs", "docs_src": "docs", "documentation": "docs",
}  # fmt: skip
AREAS = ("code", "examples", "docs")


def area(path: str) -> str:
    """Where in the project a file is, by its first folder that says: "examples" (an
    `examples/` or `example/` folder), "docs" (`docs/`, `doc/`, `docs_src/`,
    `documentation/`), else "code"."""
    for folder in path.split("/")[:-1]:
        found = _AREAS.get(folder)
        if found is not None:
            return found
    return "code"


def matches(path: str, glob: str) -> bool:
    """Whether `glob` takes `path`, by the rules Filters states."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    globs = {glob.rstrip("/"), glob.rstrip("/").replace("**/", "")}
    if "/" not in glob.rstrip("/"):
        return any(fnmatchcase(part, g) for g in globs for part in parts)
    return any(fnmatchcase(prefix, g) for g in globs for prefix in prefixes)


def _named(path: str, pattern: str) -> bool:
    """pytest's python_files match: the file name, or for a pattern with a `/`, the path
    (from the root or below any folder)."""
    if "/" in pattern:
        return fnmatchcase(path, pattern) or fnmatchcase(path, f"*/{pattern}")
    return fnmatchcase(path.rsplit("/", 1)[-1], pattern)


def _under(path: str, glob: str) -> bool:
    """Whether `path` is `glob`, or lies in a folder it matches, from the root."""
    parts = path.split("/")
    return any(fnmatchcase("/".join(parts[: i + 1]), glob) for i in range(len(parts)))


def pytest_files(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """The project's python_files patterns that tell test files apart: one that takes
    any Python file (`*.py`) would make the whole project tests (pytest, without
    testpaths, collects so from its root folder, but a catalogue would keep nothing)."""
    return tuple(p for p in patterns if not fnmatchcase("x_y.py", p))


def is_test(path: str) -> bool:
    *folders, name = path.split("/")
    if _TEST_DIRS.intersection(folders) or name in ("conftest.py", "conftest.pyi"):
        return True
    return _test_name(name)


def _test_name(name: str) -> bool:
    stem = name.rsplit(".", 1)[0]
    return stem.startswith("test_") or stem.endswith("_test")


@frozen(slots=True)
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
        import sqlite3  # here: a warm replay lists no files

        self.db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
        self.db.execute(f"PRAGMA cache_size = -{_CACHE_KB}")
        self.db.execute(
            "CREATE TABLE file (path TEXT PRIMARY KEY, sha TEXT NOT NULL, "
            "size INTEGER NOT NULL, marked INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID"
        )
        self._count = 0
        self.refused: list[FileError] = []  # files of the commit not read (list_files)
        self.unmatched: list[str] = []  # --include/--exclude globs that took no file
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

    def entry(self, path: str) -> BlobEntry:
        """The file at `path`; KeyError where the listing has none."""
        found = self.db.execute("SELECT sha, size FROM file WHERE path = ?", (path,)).fetchone()
        if found is None:
            raise KeyError(path)
        return BlobEntry(path, str(found[0]), int(found[1]))

    def sha(self, path: str) -> str:
        """The blob id of the file at `path`; KeyError where the listing has none."""
        return self.entry(path).sha

    def resize(self, sizes: Iterable[tuple[str, int]]) -> None:
        """Set the sizes of the files named (a listing made without them)."""
        self.db.executemany("UPDATE file SET size = ? WHERE path = ?", ((n, p) for p, n in sizes))

    def mark(self, paths: Iterable[str]) -> None:
        self.db.executemany("UPDATE file SET marked = 1 WHERE path = ?", ((p,) for p in paths))

    def mark_between(self, first: str, last: str) -> None:
        """Mark every file from `first` to `last` by path (a first scan marks them all:
        one statement, rather than one a file)."""
        self.db.execute("UPDATE file SET marked = 1 WHERE path BETWEEN ? AND ?", (first, last))

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


@frozen
class Unread:
    """Why a file's content was not read; `transient` where a later scan may read it."""

    reason: str
    transient: bool = False


MAX_BYTES = 8 << 20  # a larger file is not read: parsing it could take gigabytes
_MISSING = Unread("the blob is not in the repository (a partial clone?); not fetched", True)


@frozen
class SourceFile:
    path: str
    sha: str
    data: bytes | Unread


def unread_reason(size: int) -> Unread | None:
    """Why a blob of `size` bytes (-1: git does not have it) is not read, or None."""
    if size < 0:
        return _MISSING
    if size > MAX_BYTES:
        return Unread(f"file too large: {size:,} bytes; errscan reads at most {MAX_BYTES:,}")
    return None


class Ahead:
    """`git ls-tree` of a commit begun ahead of its listing (list_files), its output going
    to a temporary file: git reads the tree and every blob's size while this process
    goes on (loading the scan's modules, say). Closed by list_files, or by the caller
    where it is never listed (the process killed where it still runs)."""

    def __init__(self, repo: Git, commit: str) -> None:
        import tempfile

        self.commit = commit
        # held past this call, as the process writes them: closed by close()
        self.output = tempfile.TemporaryFile()  # noqa: SIM115
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            self._proc = repo.popen(
                *_LS_TREE, "-l", "--end-of-options", commit, stdout=self.output, stderr=self.errors
            )
        except BaseException:
            self.close()
            raise

    def listed(self) -> bool:
        """Wait for git: whether it listed the tree (else the files tell it again)."""
        return self._proc.wait() == 0

    def close(self) -> None:
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        self.output.close()
        self.errors.close()


_LS_TREE = ("ls-tree", "-r", "-z", "--full-tree")


def list_files(repo: Git, commit: str, filters: Filters, ahead: Ahead | None = None) -> Listing:
    """Regular-file blobs at `commit` that `filters` wants, sorted by path. `ahead`: its
    `git ls-tree`, begun before (closed here); where it failed, the tree is listed again."""
    if ahead is not None:
        with contextlib.closing(ahead):
            if ahead.commit == commit and ahead.listed():
                ahead.output.seek(0)
                return _listing(_records(ahead.output), filters)
    try:
        return _ls_tree(repo, commit, filters, sized=True)
    except InputError as first:
        # `-l` reads every blob's size, and a partial clone lacks some blobs (never
        # fetched): list the tree alone, then ask for the sizes git has
        try:
            listing = _ls_tree(repo, commit, filters, sized=False)
        except InputError:
            raise first from None
    listing.resize(_sizes(repo, listing, commit))
    return listing


def _ls_tree(repo: Git, commit: str, filters: Filters, sized: bool) -> Listing:
    import tempfile

    with tempfile.TemporaryFile() as errors:
        args = (*_LS_TREE, *(["-l"] if sized else []))
        proc = repo.popen(*args, "--end-of-options", commit, stderr=errors)
        assert proc.stdout is not None
        try:
            listing = _listing(_records(proc.stdout), filters)
        finally:
            proc.stdout.close()
            status = proc.wait()
        if status != 0:
            listing.close()
            errors.seek(0)
            said = " ".join(errors.read(4096).decode("utf-8", "replace").split())
            raise InputError(f"cannot list files of {commit}: {said or f'exit code {status}'}")
    return listing


def _listing(records: Iterable[bytes], filters: Filters) -> Listing:
    """The Listing of `git ls-tree -r -z` records: the files `filters` wants, those it
    refuses (refused), and the globs that take none (unmatched)."""
    refused: list[FileError] = []
    hits: set[str] | None = set() if filters.include or filters.exclude else None
    listing = Listing(_wanted(records, filters, refused, hits))
    listing.refused = refused
    if hits is not None:
        listing.unmatched = [g for g in (*filters.include, *filters.exclude) if g not in hits]
    return listing


def _sizes(repo: Git, listing: Listing, commit: str) -> Iterator[tuple[str, int]]:
    """(path, size) of every listed blob, -1 for those git does not have (a partial
    clone's), from `rev-list --missing=print` and one `cat-file --batch-check`: both
    report a missing blob rather than fetch it, or die, as `cat-file --batch` would."""
    walked = repo.run("rev-list", "--objects", "--missing=print", "--no-walk", commit)
    missing = {line[1:].strip() for line in walked.splitlines() if line.startswith("?")}
    entries = [entry for entry in listing if entry.sha not in missing]
    asked = "".join(f"{entry.sha}\n" for entry in entries).encode("ascii")
    proc = repo.popen("cat-file", "--batch-check", stdin=True)
    answer, _ = proc.communicate(asked)
    for entry, line in zip(entries, answer.splitlines(), strict=False):
        sha, _, size = line.decode("ascii", "replace").partition(" blob ")
        if sha == entry.sha and size.isdigit():
            yield entry.path, int(size)
    for entry in listing:
        if entry.sha in missing:
            yield entry.path, -1


def _records(stream: IO[bytes]) -> Iterator[bytes]:
    """NUL-ended records read a chunk at a time: memory never holds the whole output
    (2 MB at 20,000 files), whose pieces would stay behind as heap holes."""
    rest = b""
    while chunk := stream.read(1 << 16):
        records = (rest + chunk).split(b"\0")
        rest = records.pop()
        yield from records


def _wanted(
    records: Iterable[bytes], filters: Filters, refused: list[FileError], hits: set[str] | None
) -> Iterator[tuple[str, str, int]]:
    """The wanted blobs among `git ls-tree -r -z -l` records, in their (path) order.

    A wanted file whose name is not UTF-8, or that names `.` or `..` (git refuses to
    check such a tree out; a crafted one holds it), is not read: it goes to `refused`.
    """
    globs = (*filters.include, *filters.exclude)
    wants = filters.chooser()
    for record in records:
        if hits is None and not record.endswith(_RAW_SUFFIXES):
            continue  # not a Python file (nor a glob to count its matches)
        meta, tab, raw_path = record.partition(b"\t")
        if not tab:
            continue
        mode, kind, sha, *size = meta.split()  # no size without `ls-tree -l`
        if kind != b"blob" or mode not in _BLOB_MODES:
            continue
        try:
            path, utf8 = raw_path.decode("utf-8"), True
        except UnicodeDecodeError:
            path, utf8 = raw_path.decode("utf-8", "backslashreplace"), False
        if hits is not None:
            # a glob is matched once: after that it is not tried again for the warning
            hits.update(g for g in globs if g not in hits and matches(path, g))
        if not wants(path):
            continue
        reason = _unsafe_name(path, utf8)
        if reason is not None:
            if len(refused) < _MAX_REFUSED:
                refused.append(FileError(path, reason))
            continue
        yield path, sha.decode("ascii"), int(size[0]) if size else 0


_MAX_REFUSED = 1000  # refused names reported, at most: a crafted tree can hold millions


def _unsafe_name(path: str, utf8: bool) -> str | None:
    """Why a file's name is not taken as a path of the repository, or None."""
    if not utf8:
        return "file name is not UTF-8: not read"
    if any(part in ("", ".", "..", ".git") for part in path.split("/")):
        return "file name leaves the repository (an empty, `.`, `..` or `.git` part): not read"
    return None


def read_files(
    repo: Git, entries: Iterable[BlobEntry], work_tree: WorkTree | None = None
) -> Iterator[SourceFile]:
    """The blobs' contents in order, from one `git cat-file --batch` process.

    `entries` is iterated once, in the caller's thread, a few dozen ahead of the blob
    read: git never waits on a full pipe of requests (a few KB), nor this process on
    git, which writes each blob out whole as soon as it is asked for. With `work_tree`,
    a file whose copy there is the blob (WorkTree.blob) is read from it instead, and
    git is started only for the others.
    """
    pending: deque[tuple[BlobEntry, bytes | None]] = deque()  # None: asked of git
    proc = None
    stdin: IO[bytes] | None = None
    stdout: IO[bytes] | None = None
    try:
        for entry in entries:
            found = work_tree.blob(entry) if work_tree is not None else None
            pending.append((entry, found))
            if found is None and unread_reason(entry.size) is None:  # else never asked of git
                if proc is None:
                    proc = repo.popen("cat-file", "--batch", stdin=True)
                    assert proc.stdin is not None and proc.stdout is not None
                    stdin, stdout = proc.stdin, proc.stdout
                assert stdin is not None
                with _asking(entry):
                    stdin.write(entry.sha.encode("ascii") + b"\n")
            if len(pending) >= _AHEAD:
                if stdin is not None:
                    with _asking(entry):
                        stdin.flush()
                while len(pending) > _AHEAD // 2:
                    yield _next(stdout, pending)
        if stdin is not None:
            with _asking(None):
                stdin.close()
        while pending:
            yield _next(stdout, pending)
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
            assert stdin is not None and stdout is not None
            with contextlib.suppress(OSError):  # requests left unsent: git is gone
                stdin.close()
            stdout.close()


def _next(stdout: IO[bytes] | None, pending: deque[tuple[BlobEntry, bytes | None]]) -> SourceFile:
    entry, found = pending.popleft()
    if found is not None:
        return SourceFile(entry.path, entry.sha, found)
    return _read_blob(stdout, entry)


class WorkTree:
    """A local repository's checked-out files, read where they are the commit's blobs:
    the same bytes as git's (the object id of what is read is the blob's), without
    inflating them from git's packs. Nothing is taken on trust: no symbolic link is
    followed (a file's or a folder's), only a regular file of the blob's size is read,
    and one whose id differs (edited, converted by a checkout filter) is read from git.
    Nothing of the work tree but such a file's bytes is used, and only as the blob."""

    def __init__(self, top: str) -> None:
        self.top = top
        # the folders opened last, by path ("" the top): a file's read opens its own
        # folder only where it is not among them, rather than every folder of its path
        # (Django's 875 files took 4,877 opens and closes, and 875 + 165 with them)
        self._folders: dict[str, int] = {}

    def close(self) -> None:
        """Close the folders held open (a later read opens them again)."""
        folders, self._folders = self._folders, {}
        for fd in folders.values():
            os.close(fd)

    def _folder(self, path: str) -> int:
        """An open descriptor of the folder at `path` (held: never closed by the caller),
        reached from the top a part at a time without following a link."""
        fd = self._folders.pop(path, None)
        if fd is None:
            if path:
                parent, _, part = path.rpartition("/")
                fd = os.open(part, _FOLDER_FLAGS, dir_fd=self._folder(parent))
            else:
                fd = os.open(self.top, _FOLDER_FLAGS)
            while len(self._folders) >= _FOLDERS_HELD:  # the least recently used go
                os.close(self._folders.pop(next(iter(self._folders))))
        self._folders[path] = fd  # the most recently used last
        return fd

    def blob(self, entry: BlobEntry) -> bytes | None:
        """The file's bytes where they are the blob's, else None."""
        hashing = _OBJECT_IDS.get(len(entry.sha))
        if hashing is None or unread_reason(entry.size) is not None:
            return None
        where, _, name = entry.path.rpartition("/")
        fd = -1
        try:
            folder = self._folder(where)
            # looked at before it is opened: a device's open can do something
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if not stat.S_ISREG(found.st_mode) or found.st_size != entry.size:
                return None
            fd = os.open(name, _FILE_FLAGS, dir_fd=folder)
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode) or found.st_size != entry.size:
                return None  # replaced since
            chunks = []
            left = entry.size + 1  # one byte more: a file grown since is not the blob
            while left > 0 and (chunk := os.read(fd, left)):
                chunks.append(chunk)
                left -= len(chunk)
        except OSError:
            return None
        finally:
            if fd >= 0:
                os.close(fd)
        data = b"".join(chunks)
        if len(data) != entry.size:
            return None
        digest = hashing(b"blob %d\0" % len(data))
        digest.update(data)
        return data if digest.hexdigest() == entry.sha else None


_OBJECT_IDS = {40: hashlib.sha1, 64: hashlib.sha256}  # by the length of a hex object id
_FOLDERS_HELD = 64  # folder descriptors a WorkTree holds open at most
_NOFOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW  # a FIFO never blocks the open


@contextlib.contextmanager
def _asking(entry: BlobEntry | None) -> Iterator[None]:
    """Writing requests to git: where it has gone, the scan cannot read its files."""
    try:
        yield
    except OSError as exc:
        what = f" {entry.path} ({entry.sha})" if entry is not None else ""
        raise InputError(f"cannot read{what} from git: {exc}") from exc


def _read_blob(stdout: IO[bytes] | None, entry: BlobEntry) -> SourceFile:
    unread = unread_reason(entry.size)
    if unread is not None:
        return SourceFile(entry.path, entry.sha, unread)
    assert stdout is not None  # git was asked for it
    header = stdout.readline().split()
    if header == [entry.sha.encode("ascii"), b"missing"]:
        return SourceFile(entry.path, entry.sha, _MISSING)
    if len(header) != 3:
        raise InputError(f"cannot read {entry.path} ({entry.sha}) from git")
    size = int(header[2])
    data = stdout.read(size)
    stdout.read(1)  # the newline after each object
    return SourceFile(entry.path, entry.sha, data)


def root_files(repo: Git, commit: str, names: Iterable[str]) -> dict[str, bytes]:
    """The contents of those of `names` that are regular files at the root of `commit`
    (never a link, which git would give as its target's name), up to 1 MiB each: one
    `git cat-file --batch`, asked for the root tree, then for those blobs."""
    wanted = set(names)
    proc = repo.popen("cat-file", "--batch", stdin=True)
    assert proc.stdin is not None and proc.stdout is not None
    found: dict[str, bytes] = {}
    try:
        tree = _ask(proc.stdin, proc.stdout, f"{commit}^{{tree}}", b"tree", 16 << 20)
        width = len(commit) // 2  # SHA-1 or SHA-256 object names
        at = 0
        while tree and at < len(tree):
            space = tree.index(b" ", at)
            nul = tree.index(b"\0", space)
            mode, name = tree[at:space], tree[space + 1 : nul].decode("utf-8", "replace")
            sha = tree[nul + 1 : nul + 1 + width].hex()
            at = nul + 1 + width
            if name in wanted and mode in _BLOB_MODES:
                data = _ask(proc.stdin, proc.stdout, sha, b"blob", 1 << 20)
                if data is not None:
                    found[name] = data
    except (OSError, ValueError):
        return {}  # git went away, or a tree not as git writes them: nothing read
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    return found


def _ask(stdin: IO[bytes], stdout: IO[bytes], name: str, kind: bytes, limit: int) -> bytes | None:
    """Object `name` from a running `cat-file --batch`: its content if it is a `kind` of
    at most `limit` bytes, else None (a larger one is read through and dropped)."""
    stdin.write(name.encode("ascii") + b"\n")
    stdin.flush()
    header = stdout.readline().split()
    if len(header) != 3 or not header[2].isdigit():
        return None  # "<name> missing"
    size = int(header[2])
    if header[1] == kind and size <= limit:
        data = stdout.read(size)
        stdout.read(1)
        return data
    left = size + 1
    while left > 0:
        left -= len(stdout.read(min(left, 1 << 16)) or b"\0" * left)
    return None
