"""Where an output goes: atomically into a file, or as it is to a device, a pipe or a
stream. Kept apart from the renderers (errscan.analyzer.output), so that a rescan
answered from its stored output (errscan.launch) loads nothing it does not use."""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import zlib
from pathlib import Path

from errscan.errors import InputError
from errscan.tempname import mkstemp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from io import FileIO
    from typing import IO, TextIO


def check_writable(path: Path) -> None:
    """Fail before any work where the output cannot be written."""
    parent = path.parent
    if not parent.is_dir():
        raise InputError(f"output directory not found: {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"output directory not writable: {parent}")
    if path.is_dir():
        raise InputError(f"output path is a directory: {path}")


def write_bytes(
    chunks: Iterable[bytes],
    path: Path | None,
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


def holds(path: Path, same: Same) -> bool:
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


@contextlib.contextmanager
def opened(
    path: Path, behind: Callable[[Callable[[], None]], None] | None = None
) -> Iterator[IO[bytes]]:
    """`path` to write bytes to: in place for a device or a pipe, else a temp file beside
    it, renamed over it once all is written (removed if not). A reader sees the old file
    or the new one whole, and an interrupted write leaves the old one. Like rsync's and
    mypy's, the file is not synced to the disk before its rename: an fsync cost a scan
    some 15 ms of waiting on the disk, against a machine's crash (where ext4 and btrfs
    flush a file renamed over another on their own).

    The rename frees the old file's blocks, which took ext4 7 ms for Django's 5 MB
    output: with `behind` (background.run), the old file is held open across the rename
    and let go of by work run behind the caller, so that the freeing is done there."""
    if path.exists() and not path.is_file():
        with open(path, "wb") as special:
            yield special
        return
    path = path.resolve() if path.is_symlink() else path
    check_writable(path)
    fd, tmp = mkstemp(f".{path.name}.", ".tmp", path.parent)
    try:
        os.chmod(tmp, _file_mode(path))
        with os.fdopen(fd, "wb") as out:
            yield out
        old = _open_regular(path) if behind is not None else None
        try:
            os.replace(tmp, path)
        except BaseException:
            if old is not None:
                _let_go(old[0])
            raise
        if old is not None and behind is not None:
            behind(functools.partial(_let_go, old[0]))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _open_regular(path: Path) -> tuple[int, os.stat_result] | None:
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
    with contextlib.suppress(OSError):
        os.close(fd)


def _file_mode(path: Path) -> int:
    """The mode the output would have had if opened plainly: the old file's, or 0666 - umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
