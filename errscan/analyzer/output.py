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
from errscan.models import ErrorRecord, FileError, MessagePart, ScanStats
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
    return "".join(record_line(record) + "\n" for record in records)


_quoted = json.encoder.encode_basestring  # json.dumps(str, ensure_ascii=False), in C


def record_line(record: ErrorRecord) -> str:
    """_dumps(record.to_dict()): written directly, key by key in sorted order, in 60% of
    json.dumps' time (Django's 2,091 records: 47 -> 28 ms). A field of another type than
    a record's own (a record read back from a hand-edited line) goes to json.dumps."""
    r, c = record, record.context
    q = _quoted
    try:
        if not (
            type(r.col) is int and type(r.line) is int and type(r.end_line) is int
            and type(c.start_line) is int and type(c.end_line) is int
        ):  # fmt: skip
            raise TypeError("not an int")  # (a bool is an int to json.dumps, not here)
        parts = ", ".join(map(_part_json, r.message_parts))
        return (
            f'{{"area": {q(r.area)}, "args": {_strings(r.args)}, "cause": {_maybe(r.cause)}, '
            f'"col": {r.col}, "commit": {q(r.commit)}, "context": {{"code": {q(c.code)}, '
            f'"end_line": {c.end_line}, "start_line": {c.start_line}}}, '
            f'"end_line": {r.end_line}, "env_vars": {_strings(r.env_vars)}, '
            f'"exception": {_maybe(r.exception)}, '
            f'"exception_bases": {_strings(r.exception_bases)}, '
            f'"exception_doc": {_maybe(r.exception_doc)}, '
            f'"exception_qualname": {_maybe(r.exception_qualname)}, "file": {q(r.file)}, '
            f'"function": {q(r.function)}, "guards": {_strings(r.guards)}, "id": {q(r.id)}, '
            f'"kind": {q(r.kind)}, "line": {r.line}, "message": {_maybe(r.message)}, '
            f'"message_candidates": {_strings(r.message_candidates)}, '
            f'"message_parts": [{parts}], "message_source": {q(r.message_source)}, '
            f'"related": {_strings(r.related)}, "repo": {q(r.repo)}, '
            f'"reraises": {_strings(r.reraises)}, "trigger": {q(r.trigger)}, '
            f'"url": {_maybe(r.url)}}}'
        )
    except (TypeError, AttributeError):
        return _dumps(record.to_dict())


def _maybe(value: str | None) -> str:
    return "null" if value is None else _quoted(value)


def _strings(values: Sequence[str]) -> str:
    if not isinstance(values, (tuple, list)):
        raise TypeError("not a sequence")  # (json.dumps writes a tuple or list alike)
    return f"[{', '.join(map(_quoted, values))}]"


def _part_json(part: MessagePart) -> str:
    if not isinstance(part, tuple):
        raise TypeError("not a part")
    if part.text is not None:
        return f'{{"text": {_quoted(part.text)}}}'
    return (
        f'{{"conversion": {_maybe(part.conversion)}, "expr": {_maybe(part.expr)}, '
        f'"format_spec": {_maybe(part.format_spec)}}}'
    )


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
