"""Exception classes of the standard library, as the running interpreter has them.

`from pickle import PicklingError` names a class whose traceback reads
`_pickle.PicklingError`; `copy.error` is `copy.Error`; `socket.timeout` is
`TimeoutError`. The class a name denotes is read from the module itself, imported into
errscan's own interpreter: only modules of a fixed list, whose import defines names
and runs nothing else (no `antigravity`, `this` or `tkinter`), and never a module of
the scanned repository, which is not on any path errscan imports from. The answers
depend on the interpreter, which every cache key holds.
"""

from __future__ import annotations

import builtins
import functools
import importlib

# modules whose import only defines names (and whose exceptions real code raises)
# fmt: off
_SAFE = frozenset([
    "argparse", "asyncio", "binascii", "bz2", "calendar", "codecs", "collections",
    "concurrent.futures", "configparser", "contextlib", "copy", "csv", "dataclasses",
    "datetime", "dbm", "decimal", "email.errors", "enum", "errno", "fnmatch", "ftplib",
    "functools", "getopt", "gzip", "hashlib", "hmac", "html.parser", "http.client",
    "http.cookiejar", "http.cookies", "imaplib", "importlib", "importlib.metadata", "inspect",
    "io", "ipaddress", "itertools", "json", "json.decoder", "locale", "lzma", "mailbox",
    "math", "multiprocessing", "netrc", "numbers", "operator", "os", "pathlib", "pickle",
    "plistlib", "poplib", "queue", "random", "re", "select", "shelve", "shlex", "shutil",
    "signal", "smtplib", "socket", "sqlite3", "ssl", "statistics", "string", "struct",
    "subprocess", "tarfile", "tempfile", "textwrap", "threading", "time", "tokenize",
    "tomllib", "traceback", "typing", "unittest", "urllib.error", "urllib.parse", "uuid",
    "warnings", "wave", "weakref", "xml.dom", "xml.etree.ElementTree", "xml.parsers.expat",
    "xml.sax", "xmlrpc.client", "zipfile", "zipimport", "zlib", "zoneinfo",
])
# fmt: on


_CANONICAL: dict[str, type[BaseException]] = {}  # the classes `canonical` named, by that name


@functools.lru_cache(maxsize=1024)
def exception_class(dotted: str) -> type[BaseException] | None:
    """The exception class `module.Name` is, for a module of the list (or a name
    `canonical` gave); else None."""
    if dotted in _CANONICAL:
        return _CANONICAL[dotted]
    module, _, name = dotted.rpartition(".")
    if module not in _SAFE or not name.isidentifier():
        return None
    try:
        found = getattr(importlib.import_module(module), name, None)
    except Exception:  # a module this interpreter lacks (tomllib before 3.11, say)
        return None
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return None


def canonical(dotted: str) -> str | None:
    """The qualified name the class `dotted` has at run time (`copy.error` ->
    `copy.Error`, `socket.timeout` -> `builtins.TimeoutError`); None where `dotted` is
    not an exception class of a listed module."""
    cls = exception_class(dotted)
    if cls is None:
        return None
    simple: str = cls.__name__
    if vars(builtins).get(simple) is cls:
        return f"builtins.{simple}"
    name = f"{cls.__module__}.{cls.__qualname__}"
    _CANONICAL[name] = cls
    return name


def mro(qualname: str) -> list[str] | None:
    """A standard class's method resolution order, qualified (builtins as `builtins.X`),
    object left out; None for a class this is not."""
    cls = exception_class(qualname)
    if cls is None:
        return None
    return [f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__ if c is not object]


def ancestors(qualname: str) -> list[str]:
    """The simple names of a standard class's bases, nearest first, up to Exception."""
    cls = exception_class(qualname)
    if cls is None:
        return []
    out = []
    for base in cls.__mro__[1:]:
        if not issubclass(base, BaseException):
            continue
        out.append(base.__name__)
        if base in (Exception, BaseException):
            break
    return out


@functools.lru_cache(maxsize=1024)
def composes_text(dotted: str) -> bool:
    """Whether the standard class `dotted` makes its text itself: a class of its line,
    below the builtins, defines __init__ or __str__ (http.client.LineTooLong('header
    line') says 'got more than 65536 bytes when reading header line')."""
    cls = exception_class(dotted)
    if cls is None:
        return False
    for base in cls.__mro__:
        if vars(builtins).get(base.__name__) is base:
            return False
        if "__init__" in vars(base) or "__str__" in vars(base):
            return True
    return False
