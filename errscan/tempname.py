"""A new file under a name no other process holds, for writing before a rename into place,
a whole file written so (write_atomically), and text gathered into large writes
(gathered).

The standard library's `tempfile.mkstemp`, without its import (shutil, random and the
compression modules: a few milliseconds of every warm rescan, which writes its output
through here): the same O_EXCL creation, mode 0600 and retries. Nor does it load
pathlib or contextlib (errscan.launch).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_ATTEMPTS = 100


def mkstemp(prefix: str, suffix: str, directory: str | os.PathLike[str]) -> tuple[int, str]:
    """An open descriptor and the path of a new file `directory/PREFIX<random>SUFFIX`;
    OSError where none can be made (FileExistsError after as many tries as tempfile's)."""
    for _ in range(_ATTEMPTS):
        path = os.path.join(directory, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, _FLAGS, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name under {directory} after {_ATTEMPTS} tries")


def beside(path: str | os.PathLike[str]) -> tuple[int, str]:
    """mkstemp for a file to be renamed over `path`: `.NAME.<random>.tmp` in its folder."""
    folder, name = os.path.split(os.fspath(path))
    return mkstemp(f".{name}.", ".tmp", folder or ".")


def write_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """`data` as the whole of `path`: written to a new file beside it, then renamed over
    it, so that a reader sees the old bytes or the new, never a part. OSError where that
    cannot be done, the temp file then removed."""
    fd, tmp = beside(path)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        remove(tmp)
        raise


def remove(path: str) -> bool:
    """Remove a file, where it is there to remove (no error otherwise): whether it went."""
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def gathered(blocks: Iterable[str], size: int = 1 << 16) -> Iterator[str]:
    """Blocks of text gathered into writes of at least `size` characters."""
    pending: list[str] = []
    held = 0
    for block in blocks:
        pending.append(block)
        held += len(block)
        if held >= size:
            yield "".join(pending)
            pending, held = [], 0
    if pending:
        yield "".join(pending)
