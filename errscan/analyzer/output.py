"""Records -> jsonl or json text, written atomically to a file or to a stream."""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

from errscan.analyzer.repo import display_name
from errscan.errors import InputError
from errscan.escape import csv_cell
from errscan.models import ErrorRecord, FileError, ScanStats
from errscan.outfile import opened
from errscan.tempname import gathered

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
    with opened(path) as out:
        for chunk in chunks:
            out.write(chunk.encode("utf-8"))
