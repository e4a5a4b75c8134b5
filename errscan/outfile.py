"""Where an output goes: atomically into a file, or as it is to a device, a pipe or a
stream. Kept apart from the renderers (errscan.analyzer.output), so that a rescan
answered from its stored output (errscan.launch) loads nothing it does not use."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from errscan.errors import InputError
from errscan.tempname import mkstemp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
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


def write_bytes(chunks: Iterable[bytes], path: Path | None, stream: TextIO) -> None:
    """Text already encoded as UTF-8 (a replayed output, copied as it is: no decoding
    and encoding again) to `stream`, or atomically to `path`, as output.write_chunks."""
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
    with opened(path) as out:
        for chunk in chunks:
            out.write(chunk)


@contextlib.contextmanager
def opened(path: Path) -> Iterator[IO[bytes]]:
    """`path` to write bytes to: in place for a device or a pipe, else a temp file beside
    it, synced and renamed over it once all is written (removed if not)."""
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
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _file_mode(path: Path) -> int:
    """The mode the output would have had if opened plainly: the old file's, or 0666 - umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
