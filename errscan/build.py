"""What shapes errscan's output besides the repository and the options: errscan's own code,
the interpreter (its `ast`, `ast.unparse`, float sums) and LibCST. Every cache key holds
`ident()`; `signature()` tells, without reading the code, whether `ident()` could differ
from the one a note of errscan.launch was made under."""

from __future__ import annotations

import os
import sys

from errscan import __version__

TYPE_CHECKING = False  # typing is not loaded: a replayed rescan needs none of it
if TYPE_CHECKING:
    import hashlib
    from typing import Any

_PACKAGE = os.path.dirname(os.path.realpath(__file__))


def _sources() -> list[str]:
    """errscan's own Python files, by path: os.walk, a third of Path.rglob's time (a
    warm rescan's note is checked by their states, errscan.launch, which loads no
    pathlib)."""
    found: list[str] = []
    for folder, folders, names in os.walk(_PACKAGE):
        folders[:] = [name for name in folders if name != "__pycache__"]  # bytecode only
        found.extend(os.path.join(folder, name) for name in names if name.endswith(".py"))
    return sorted(found)


_ahead: list[Any] = []  # ident_ahead's thread
_worked_out: list[str | BaseException] = []  # what it worked out: ident's answer, or error


def ident_ahead() -> None:
    """Work out ident() now, in a thread of its own: most of its time is reading and
    hashing errscan's sources (67 files, 0.9 MB: 2-3 ms), which lets the main thread load
    modules meanwhile (the errscan command's first scan asks ident() as the API loads,
    before it forks any process)."""
    if _ahead:  # asked already
        return
    import threading

    def work() -> None:
        try:
            _worked_out.append(_ident())
        except BaseException as error:  # given to ident()'s caller
            _worked_out.append(error)

    _ahead.append(threading.Thread(target=work, name="errscan-ident", daemon=True))
    _ahead[0].start()


def ident() -> str:
    """The version and a digest of errscan's own sources (cached results and outputs of
    other code, an edited checkout under the same version, are never taken for ours),
    the interpreter's, and LibCST's version."""
    if not _ahead:
        return _ident()
    _ahead[0].join()
    found = _worked_out[0]
    if isinstance(found, BaseException):
        raise found
    return found


def _ident() -> str:
    import hashlib

    digest = hashlib.sha256(__version__.encode())
    for source in _sources():
        with open(source, "rb") as code:
            digest.update(code.read())
    return (
        f"{__version__}+{digest.hexdigest()[:12]}"
        f"|{sys.implementation.name}-{'.'.join(map(str, sys.version_info[:3]))}"
        f"|{libcst_version()}"
    )


def libcst_version() -> str:
    """LibCST's installed version, read from its metadata folder without importing it
    (it rewrites files in syntax newer than this Python, so it shapes their records)."""
    spec = _spec_of("libcst")
    if spec is None or spec.origin is None:
        return "libcst-none"
    site = os.path.dirname(os.path.dirname(os.path.realpath(spec.origin)))
    try:
        names = os.listdir(site)
    except OSError:
        names = []
    found = sorted(n for n in names if n.startswith("libcst-") and n.endswith(".dist-info"))
    return found[-1] if found else "libcst-unknown"


def _spec_of(name: str) -> Any:
    """importlib.util.find_spec(name) for a top-level module, without importlib.util
    (contextlib, functools and collections: 4 ms of a 26 ms warm rescan): the loaded
    module's spec, else the first the import system's finders give."""
    module = sys.modules.get(name)
    if module is not None:
        return getattr(module, "__spec__", None)
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, None) if find is not None else None
        if spec is not None:
            return spec
    return None


def signature() -> str:
    """A digest of what `ident()` reads, as the file system describes it rather than by
    content: each source's path, inode, size, and modification and change times (a
    change time no program can set back), the interpreter, and LibCST's version. Equal
    signatures mean equal idents; OSError where a source cannot be looked at."""
    digest = blake2b(f"{__version__}|{sys.executable}|{sys.version}".encode())
    for source in _sources():
        st = os.stat(source)
        digest.update(
            f"{source}|{st.st_ino}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}\n".encode(
                "utf-8", "surrogateescape"
            )
        )
    digest.update(libcst_version().encode())
    return digest.hexdigest()


def blake2b(data: bytes) -> hashlib.blake2b:
    """A BLAKE2b digest (16 bytes) from CPython's own module where it has one: hashlib
    loads OpenSSL first, which took 3 ms of a 45 ms warm rerun (errscan.launch)."""
    try:
        from _blake2 import blake2b as made
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b as made
    return made(data, digest_size=16)
