"""Python's built-in exception classes, by name, each with the names of its classes in
method resolution order (itself first, BaseException last): shared by the analyzer, the
lookup and the site without the one importing the other.

A table of Python 3.13's classes rather than the running interpreter's: records are the
same whichever Python errscan runs on (3.10 has no ExceptionGroup, 3.13 alone has
PythonFinalizationError). A test holds it to the interpreter's own classes.
"""

from __future__ import annotations

# each class's bases, as Python 3.13 defines them
_BASES: dict[str, tuple[str, ...]] = {
    "ArithmeticError": ("Exception",),
    "AssertionError": ("Exception",),
    "AttributeError": ("Exception",),
    "BaseException": (),
    "BaseExceptionGroup": ("BaseException",),
    "BlockingIOError": ("OSError",),
    "BrokenPipeError": ("ConnectionError",),
    "BufferError": ("Exception",),
    "BytesWarning": ("Warning",),
    "ChildProcessError": ("OSError",),
    "ConnectionAbortedError": ("ConnectionError",),
    "ConnectionError": ("OSError",),
    "ConnectionRefusedError": ("ConnectionError",),
    "ConnectionResetError": ("ConnectionError",),
    "DeprecationWarning": ("Warning",),
    "EOFError": ("Exception",),
    "EncodingWarning": ("Warning",),
    "Exception": ("BaseException",),
    "ExceptionGroup": (
        "BaseExceptionGroup",
        "Exception",
    ),
    "FileExistsError": ("OSError",),
    "FileNotFoundError": ("OSError",),
    "FloatingPointError": ("ArithmeticError",),
    "FutureWarning": ("Warning",),
    "GeneratorExit": ("BaseException",),
    "ImportError": ("Exception",),
    "ImportWarning": ("Warning",),
    "IndentationError": ("SyntaxError",),
    "IndexError": ("LookupError",),
    "InterruptedError": ("OSError",),
    "IsADirectoryError": ("OSError",),
    "KeyError": ("LookupError",),
    "KeyboardInterrupt": ("BaseException",),
    "LookupError": ("Exception",),
    "MemoryError": ("Exception",),
    "ModuleNotFoundError": ("ImportError",),
    "NameError": ("Exception",),
    "NotADirectoryError": ("OSError",),
    "NotImplementedError": ("RuntimeError",),
    "OSError": ("Exception",),
    "OverflowError": ("ArithmeticError",),
    "PendingDeprecationWarning": ("Warning",),
    "PermissionError": ("OSError",),
    "ProcessLookupError": ("OSError",),
    "PythonFinalizationError": ("RuntimeError",),
    "RecursionError": ("RuntimeError",),
    "ReferenceError": ("Exception",),
    "ResourceWarning": ("Warning",),
    "RuntimeError": ("Exception",),
    "RuntimeWarning": ("Warning",),
    "StopAsyncIteration": ("Exception",),
    "StopIteration": ("Exception",),
    "SyntaxError": ("Exception",),
    "SyntaxWarning": ("Warning",),
    "SystemError": ("Exception",),
    "SystemExit": ("BaseException",),
    "TabError": ("IndentationError",),
    "TimeoutError": ("OSError",),
    "TypeError": ("Exception",),
    "UnboundLocalError": ("NameError",),
    "UnicodeDecodeError": ("UnicodeError",),
    "UnicodeEncodeError": ("UnicodeError",),
    "UnicodeError": ("ValueError",),
    "UnicodeTranslateError": ("UnicodeError",),
    "UnicodeWarning": ("Warning",),
    "UserWarning": ("Warning",),
    "ValueError": ("Exception",),
    "Warning": ("Exception",),
    "ZeroDivisionError": ("ArithmeticError",),
}


def _order(name: str) -> tuple[str, ...]:
    """A class's method resolution order, by name: the class, then its bases' orders
    merged, each class after every class below it (the one diamond here, ExceptionGroup
    over BaseExceptionGroup and Exception, meets at BaseException)."""
    merged = [c for base in _BASES[name] for c in _order(base)]
    return (name, *(c for i, c in enumerate(merged) if c not in merged[i + 1 :]))


# other names of a class: `IOError` is OSError itself, and so its order
_ALIASES = {"EnvironmentError": "OSError", "IOError": "OSError"}
BUILTIN_EXCEPTIONS: dict[str, tuple[str, ...]] = {
    name: _order(_ALIASES.get(name, name)) for name in sorted([*_BASES, *_ALIASES])
}


def is_builtin_subclass(name: str, base: str) -> bool:
    """Whether the built-in exception `name` is `base` or a subclass of it."""
    return base in BUILTIN_EXCEPTIONS.get(name, ())
