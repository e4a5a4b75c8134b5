"""Where an output goes: atomically into a file, or as it is to a device, a pipe or a
stream. Kept apart from the renderers (errscan.analyzer.output), so that a rescan
answered from its stored output (errscan.launch) loads nothing it does not use: not
pathlib, contextlib or functools either (paths are strings or os.PathLike here)."""

from __future__ import annotations

import os
import stat
import zlib

from errscan.errors import InputError
from errscan.tempname import beside, remove

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from io import FileIO
    from typing import IO, TextIO

    Where = str | os.PathLike[str]


def check_writable(path: Where) -> None:
    """Fail before any work where the output cannot be written."""
    path = os.fspath(path)
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise InputError(f"output directory not found: {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"output directory not writable: {parent}")
    if os.path.isdir(path):
        raise InputError(f"output path is a directory: {path}")


def write_bytes(
    chunks: Iterable[bytes],
    path: Where | None,
    stream: TextIO,
    same: Same | None = None,
    behind: Callable[[Callable[[], None]], None] | None = None,
) -> None:
    """Text already encoded as UTF-8 (a replayed output, copied as it is: no decoding
    and encoding again) to `stream`, or atomically to `path`, as output.write_chunks.
    `same`: the size and CRC-32 of what the chunks hold, where known (a stored output):
    a file at `path` that holds those bytes already is left as it is, not written again.
    `behind`: what runs work behind the caller (background.run), given the freeing of
    the file replaced (opened)."""
    if path is None:
        buffer = getattr(stream, "buffer", None)
        stream.flush()
        for chunk in chunks:
            if buffer is not None:
                buffer.write(chunk)
            else:  # a text-only stream (io.StringIO)
                stream.write(chunk.decode("utf-8"))
        (buffer or stream).flush()
        return
    if same is not None and holds(path, same):
        return
    with opened(path, behind) as out:
        for chunk in chunks:
            out.write(chunk)


# bytes' size and CRC-32, and the bytes themselves where held whole
Same = tuple[int, int, bytes | None]
_BLOCK = 1 << 20


def holds(path: Where, same: Same) -> bool:
    """Whether the regular file at `path` (a link's target) holds the bytes `same` tells:
    compared with them where they are held, else by digest."""
    size, crc32, data = same
    opened = _open_regular(path)
    if opened is None:
        return False
    fd, info = opened
    try:
        with open(fd, "rb", buffering=0) as found:
            if info.st_size != size:
                return False
            return _equal(found, data) if data is not None else crc32_of(found) == crc32
    except OSError:
        return False


def crc32_of(stream: IO[bytes]) -> int:
    """The CRC-32 of the rest of `stream`, read a block at a time."""
    digest = 0
    while block := stream.read(_BLOCK):
        digest = zlib.crc32(block, digest)
    return digest


def _equal(found: FileIO, data: bytes) -> bool:
    """Whether the rest of `found` is `data`, read a block at a time."""
    at = 0
    while block := found.read(_BLOCK):
        if block != data[at : at + len(block)]:
            return False
        at += len(block)
    return at == len(data)


class opened:  # a class named as the function it was: `with opened(path) as out`
    """`path` to write bytes to: in place for a device or a pipe, else a temp file beside
    it, renamed over it once all is written (removed if not). A reader sees the old file
    or the new one whole, and an interrupted write leaves the old one. Like rsync's and
    mypy's, the file is not synced to the disk before its rename: an fsync cost a scan
    some 15 ms of waiting on the disk, against a machine's crash (where ext4 and btrfs
    flush a file renamed over another on their own).

    The rename frees the old file's blocks, which took ext4 7 ms for Django's 5 MB
    output: with `behind` (background.run), the old file is held open across the rename
    and let go of by work run behind the caller, so that the freeing is done there."""

    def __init__(
        self, path: Where, behind: Callable[[Callable[[], None]], None] | None = None
    ) -> None:
        self._path = os.fspath(path)
        self._behind = behind
        self._tmp: str | None = None  # None: written in place
        self._out: IO[bytes] | None = None

    def __enter__(self) -> IO[bytes]:
        path = self._path
        if os.path.exists(path) and not os.path.isfile(path):
            self._out = open(path, "wb")
            return self._out
        if os.path.islink(path):
            path = self._path = os.path.realpath(path)
        check_writable(path)
        fd, self._tmp = beside(path)
        try:
            os.chmod(self._tmp, _file_mode(path))
            self._out = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            remove(self._tmp)
            raise
        return self._out

    def __exit__(self, kind: type[BaseException] | None, *_rest: object) -> None:
        out, tmp = self._out, self._tmp
        assert out is not None
        if tmp is None:
            out.close()
            return
        try:
            out.close()
            if kind is None:
                self._replace(tmp)
                return
        except BaseException:
            remove(tmp)
            raise
        remove(tmp)  # the body raised: the old file stays

    def _replace(self, tmp: str) -> None:
        behind = self._behind
        old = _open_regular(self._path) if behind is not None else None
        try:
            os.replace(tmp, self._path)
        except BaseException:
            if old is not None:
                _let_go(old[0])
            raise
        if old is not None and behind is not None:
            fd = old[0]
            behind(lambda: _let_go(fd))


def _open_regular(path: Where) -> tuple[int, os.stat_result] | None:
    """A descriptor of the regular file at `path` (a link's target), and what it is,
    where there is one to open."""
    try:
        # without waiting: a named pipe opened to read would wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            return fd, info
    except OSError:
        pass
    os.close(fd)
    return None


def _let_go(fd: int) -> None:
    try:  # noqa: SIM105 (contextlib is not loaded on a replay)
        os.close(fd)
    except OSError:
        pass


def _file_mode(path: str) -> int:
    """The mode the output would have had if opened plainly: the old file's, or 0666 - umask."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
