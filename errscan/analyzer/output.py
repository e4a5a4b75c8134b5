"""Records -> jsonl or json text, written atomically to a file or to a stream."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from errscan.errors import InputError
from errscan.models import ScanResult

FORMATS = ("jsonl", "json")


def _dumps(data: Any, indent: int | None = None) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, indent=indent)


def render(result: ScanResult, fmt: str) -> Iterator[str]:
    """The output text in chunks; the same result always gives the same text.

    jsonl: one record a line, then one `{"type": "file_error", ...}` line per file error.
    json: one document with repo, commit, errscan_version, records, file_errors and stats.
    """
    if fmt == "json":
        yield _dumps(result.to_dict(), indent=2) + "\n"
        return
    if fmt != "jsonl":
        raise InputError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    for record in result.records:
        yield _dumps(record.to_dict()) + "\n"
    for error in result.file_errors:
        yield _dumps({"type": "file_error", **error.to_dict()}) + "\n"


def check_writable(path: Path) -> None:
    """Fail before any work where the output cannot be written."""
    parent = path.parent
    if not parent.is_dir():
        raise InputError(f"output directory not found: {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"output directory not writable: {parent}")
    if path.is_dir():
        raise InputError(f"output path is a directory: {path}")


def write(result: ScanResult, fmt: str, path: Path | None, stream: TextIO) -> None:
    """Write to `stream`, or atomically to `path`: all of it, or the old file untouched."""
    if path is None:
        for chunk in render(result, fmt):
            stream.write(chunk)
        stream.flush()
        return
    check_writable(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, _file_mode(path))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            for chunk in render(result, fmt):
                out.write(chunk)
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
