"""SourceFile bytes -> decoded text and syntax tree, or a FileError saying why not."""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from dataclasses import dataclass

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
    """`data` as bytes is decoded first; as str it is taken as the decoded text."""
    text = decode(data, path) if isinstance(data, bytes) else data
    if isinstance(text, FileError):
        return text
    try:
        with warnings.catch_warnings():
            # invalid escapes and the like: the scanned code's concern, not ours
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return FileError(path, f"syntax error{where}: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return FileError(path, f"cannot parse: {_one_line(exc) or type(exc).__name__}")
    return Parsed(Source(text, path), tree)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
