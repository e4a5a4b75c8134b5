"""Records -> jsonl or json text, written atomically to a file or to a stream."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Protocol, TextIO

from errscan.analyzer.repo import display_name
from errscan.errors import InputError
from errscan.escape import csv_cell
from errscan.models import ErrorRecord, FileError, ScanStats
from errscan.tempname import gathered, mkstemp

FORMATS = ("jsonl", "json", "sarif")
EXPORT_FORMATS = (*FORMATS, "csv")
_CSV_FIELDS = (
    "id",
    "repo",
    "commit",
    "kind",
    "exception",
    "exception_qualname",
    "message",
    "message_source",
    "file",
    "line",
    "end_line",
    "function",
    "area",
    "trigger",
    "url",
)


class Scanned(Protocol):
    """A scan to write: a finished ScanResult, or a Scan whose records are still coming.

    `file_errors` and `stats` are read only after the records have been iterated.
    """

    @property
    def repo(self) -> str: ...

    @property
    def commit(self) -> str: ...

    def __iter__(self) -> Iterator[ErrorRecord]: ...

    @property
    def file_errors(self) -> Sequence[FileError]: ...

    @property
    def stats(self) -> ScanStats: ...


def _dumps(data: Any, indent: int | None = None) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, indent=indent)


def render(scanned: Scanned, fmt: str, version: str) -> Iterator[str]:
    """The output text in chunks, record by record; the same scan always gives the same text.

    jsonl: one record a line, then one `{"type": "file_error", ...}` line per file error.
    json: one document with repo, commit, errscan_version, records, file_errors and stats,
    in that order (records before file errors, so the document streams).
    """
    if fmt == "jsonl":
        blocks = getattr(scanned, "jsonl_blocks", None)
        if blocks is not None:  # a Scan: files' records as rendered, some kept from before
            yield from gathered(blocks())
        else:
            yield from gathered(jsonl_block([record]) for record in scanned)
        for error in scanned.file_errors:
            yield _dumps({"type": "file_error", **error.to_dict()}) + "\n"
        return
    if fmt == "sarif":
        records = list(scanned)
        web = display_name(scanned.repo)[1] if scanned.repo else None
        from errscan.analyzer import sarif  # here: only this format needs it

        yield from sarif.render(records, scanned.repo, scanned.commit, version, web)
        return
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(_CSV_FIELDS)
        for record in scanned:
            row = record.to_dict()
            writer.writerow(["" if row[f] is None else csv_cell(str(row[f])) for f in _CSV_FIELDS])
        yield out.getvalue()
        return
    if fmt != "json":
        raise InputError(f"unknown format {fmt!r}: choose from {', '.join(EXPORT_FORMATS)}")
    yield "{\n"
    yield _member("repo", scanned.repo)
    yield _member("commit", scanned.commit)
    yield _member("errscan_version", version)
    yield '  "records": ['
    separator = "\n"
    for record in scanned:
        yield separator + textwrap.indent(_dumps(record.to_dict(), indent=2), "    ")
        separator = ",\n"
    yield "\n  ],\n" if separator != "\n" else "],\n"
    yield _member("file_errors", [error.to_dict() for error in scanned.file_errors])
    yield _member("stats", scanned.stats.to_dict(), last=True)
    yield "}\n"


def jsonl_block(records: Iterable[ErrorRecord]) -> str:
    """Records as jsonl lines, each ended by a newline."""
    return "".join(_dumps(record.to_dict()) + "\n" for record in records)


def _member(name: str, value: Any, last: bool = False) -> str:
    """One top-level member of the json document, indented as json.dumps(indent=2) would."""
    text = textwrap.indent(_dumps(value, indent=2), "  ").lstrip()
    return f"  {_dumps(name)}: {text}{'' if last else ','}\n"


def check_writable(path: Path) -> None:
    """Fail before any work where the output cannot be written."""
    parent = path.parent
    if not parent.is_dir():
        raise InputError(f"output directory not found: {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"output directory not writable: {parent}")
    if path.is_dir():
        raise InputError(f"output path is a directory: {path}")


def write(scanned: Scanned, fmt: str, path: Path | None, stream: TextIO, version: str) -> None:
    """Render `scanned` to `stream`, or atomically to `path`."""
    write_chunks(render(scanned, fmt, version), path, stream)


def write_chunks(chunks: Iterable[str], path: Path | None, stream: TextIO) -> None:
    """Write to `stream`, or atomically to `path`: all of it, or the old file untouched.

    A path that is a device or a pipe (`-o /dev/stdout`, `-o /dev/null`) is written to as
    it is, never replaced; a symbolic link is followed to the file it names.
    """
    if path is None:
        for chunk in chunks:
            stream.write(chunk)
        stream.flush()
        return
    with _opened(path) as out:
        for chunk in chunks:
            out.write(chunk.encode("utf-8"))


def write_bytes(chunks: Iterable[bytes], path: Path | None, stream: TextIO) -> None:
    """As write_chunks, for text already encoded as UTF-8 (a replayed output, copied as
    it is: no decoding and encoding again)."""
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
    with _opened(path) as out:
        for chunk in chunks:
            out.write(chunk)


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[IO[bytes]]:
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
