"""SourceFile bytes -> decoded text and syntax tree, or a FileError saying why not."""

from __future__ import annotations

import ast
import codecs
import io
import re
import tokenize
import warnings

from errscan.analyzer.downlevel import downlevel
from errscan.analyzer.files import unread_reason
from errscan.analyzer.isolated import Failed
from errscan.extractors.source import Source
from errscan.frozen import frozen
from errscan.models import FileError

# Syntax trees take about 2.5 KB a statement: 20 MB of `x=1` lines once took 12 GB. A
# file is parsed only within this bound and files.MAX_BYTES (real code runs about 40
# bytes a line: 8 MB of it is some 200,000 lines).
MAX_STATEMENTS = 400_000


@frozen
class Parsed:
    src: Source
    tree: ast.Module


def decode(data: bytes, path: str) -> str | FileError:
    """The text of a Python file, honouring a UTF-8 BOM and a PEP 263 coding cookie."""
    # a cookie is on one of the first two lines: without `coding` there, nor a BOM, the
    # file is UTF-8 (half of tokenize's time, which then says the same)
    second = data.find(b"\n", data.find(b"\n") + 1)
    head = data if second < 0 else data[:second]
    if b"coding" not in head and not data.startswith(codecs.BOM_UTF8):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass  # what tokenize says of it
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        return FileError(path, f"cannot decode: {_one_line(exc)}")


def parse(data: bytes | str, path: str) -> Parsed | FileError:
    """`data` as bytes is decoded first; as str it is taken as the decoded text.

    A file in syntax newer than this interpreter's is rewritten by LibCST into syntax it
    accepts (downlevel.py); context lines still show the file as it is.
    """
    too_large = unread_reason(len(data))
    if too_large is not None:
        return FileError(path, too_large.reason)
    text = decode(data, path) if isinstance(data, bytes) else data
    if isinstance(text, FileError):
        return text
    # counted only where the text is long enough to hold that many (each is a character)
    statements = text.count("\n") + text.count(";") if len(text) > MAX_STATEMENTS else 0
    if statements > MAX_STATEMENTS:
        reason = f"too many lines to parse: {statements:,} lines and semicolons"
        return FileError(path, f"{reason}; errscan parses at most {MAX_STATEMENTS:,}")
    try:
        return Parsed(Source(text, path), _ast_parse(text, path))
    except SyntaxError as exc:
        first_error = exc
    except (ValueError, RecursionError) as exc:
        return FileError(path, f"cannot parse: {_one_line(exc) or type(exc).__name__}")
    except MemoryError as exc:
        if _STACK_OVERFLOW in str(exc):  # the file's own depth (Python 3.12 says so)
            return FileError(path, "cannot parse: too deeply nested for Python's parser")
        # the machine's state, not the file's: never kept (3.10 and 3.11 raise it bare
        # for a parser stack overflow too)
        return FileError(path, "cannot parse: out of memory", transient=True)
    failure, transient = "", False
    try:
        newer = "\0" not in text and _NEWER_SYNTAX.search(text) is not None
        rewritten = downlevel(text) if newer else None
    except Failed as exc:
        rewritten, failure, transient = None, f"; {exc}", exc.transient
    if rewritten is not None:
        try:
            return Parsed(Source(rewritten, path, shown=text), _ast_parse(rewritten, path))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    where = f" (line {first_error.lineno})" if first_error.lineno else ""
    hint = " (Python 2 code?)" if _python2(text) else ""
    return FileError(path, f"syntax error{where}: {first_error.msg}{hint}{failure}", transient)


_STACK_OVERFLOW = "Parser stack overflowed"  # CPython's MemoryError past its parser's depth


def _ast_parse(text: str, path: str) -> ast.Module:
    with warnings.catch_warnings():
        # invalid escapes and the like: the scanned code's concern, not ours
        warnings.simplefilter("ignore")
        tree = ast.parse(text, filename=path)
    if _SURROGATE_ESCAPE.search(text):
        _spell_out_surrogates(tree)
    return tree


# `"\ud800"` in source is a string no UTF-8 output can hold: such escapes are the only way
# a decoded file's syntax tree can hold a lone surrogate
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")


def _spell_out_surrogates(tree: ast.Module) -> None:
    """Write lone surrogates in string constants as the escape that stands for them
    (`\\ud800`), as Python's backslashreplace error handler writes them out."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = node.value.encode("utf-8", "backslashreplace").decode("utf-8")


# What only a newer Python reads, and downlevel rewrites: f-strings (PEP 701), `type X =`
# and `def f[T]` / `class C[T]` (PEP 695), `except A, B:` (PEP 758), `except*` (PEP 654,
# Python 3.11). A file without any is not given to LibCST: its syntax error is its own.
_NEWER_SYNTAX = re.compile(
    r"(?<!\w)(?:[fF][rR]?|[rR][fF])[\"']"
    r"|^[ \t]*type[ \t]+\w"
    r"|^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w+[ \t]*\["
    r"|^[ \t]*except\b[^:\n]*,"
    r"|^[ \t]*except[ \t]*\*",
    re.MULTILINE,
)

# print statements, `raise E, "message"`, `except E, e:` with a lowercase name, backticks
# (`[ \t]*` at a line's start, not `\s*`, which would rescan every run of blank lines
# from each of its lines: quadratic)
_PYTHON2 = re.compile(
    r"^[ \t]*(print[ \t]+[\"'\w]|raise[ \t]+\w[\w.]*[ \t]*,|exec[ \t]+[\"']"
    r"|except[ \t]+[\w.]+[ \t]*,[ \t]*[a-z_]\w*[ \t]*:)"
    r"|`\w+`",
    re.MULTILINE,
)


def _python2(text: str) -> bool:
    return _PYTHON2.search(text) is not None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
