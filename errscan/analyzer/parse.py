"""SourceFile bytes -> decoded text and syntax tree, or a FileError saying why not."""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from dataclasses import dataclass

from errscan.analyzer.downlevel import downlevel
from errscan.analyzer.isolated import Failed
from errscan.extractors.source import Source
from errscan.models import FileError


@dataclass(frozen=True)
class Parsed:
    src: Source
    tree: ast.Module


def decode(data: bytes, path: str) -> str | FileError:
    """The text of a Python file, honouring a UTF-8 BOM and a PEP 263 coding cookie."""
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
    text = decode(data, path) if isinstance(data, bytes) else data
    if isinstance(text, FileError):
        return text
    try:
        return Parsed(Source(text, path), _ast_parse(text, path))
    except SyntaxError as exc:
        first_error = exc
    except (ValueError, RecursionError, MemoryError) as exc:
        return FileError(path, f"cannot parse: {_one_line(exc) or type(exc).__name__}")
    failure, transient = "", False
    try:
        rewritten = downlevel(text) if "\0" not in text else None
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
