"""Frozen record types that every stage of errscan passes along; imports nothing of errscan."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

SITE_KINDS = ("raise", "reraise", "assert")
MESSAGE_SOURCES = ("literal", "fstring", "percent", "format", "concat", "none", "unresolved")


@dataclass(frozen=True)
class MessagePart:
    """One piece of a message template: literal `text`, or a runtime `expr`."""

    text: str | None = None
    expr: str | None = None
    conversion: str | None = None
    format_spec: str | None = None

    @property
    def placeholder(self) -> str:
        """The part as it reads in a template: the text, or `{expr!conv:spec}`."""
        if self.text is not None:
            return self.text
        conversion = f"!{self.conversion}" if self.conversion else ""
        spec = f":{self.format_spec}" if self.format_spec else ""
        return f"{{{self.expr}{conversion}{spec}}}"

    def to_dict(self) -> dict[str, Any]:
        if self.text is not None:
            return {"text": self.text}
        return {"expr": self.expr, "conversion": self.conversion, "format_spec": self.format_spec}


@dataclass(frozen=True)
class Context:
    """Source lines around a site: lines start_line..end_line of the file, joined by newlines."""

    start_line: int
    end_line: int
    code: str


@dataclass(frozen=True)
class Site:
    """What one file alone tells of one raise or assert statement."""

    kind: str
    exception: str | None
    message: str | None
    message_parts: tuple[MessagePart, ...]
    message_source: str
    args: tuple[str, ...]
    cause: str | None
    file: str
    line: int
    end_line: int
    col: int
    function: str
    context: Context
    # The message argument's source text: the id falls back on it where `message` is null.
    message_expr: str | None = field(default=None, repr=False, compare=False)

    def sort_key(self) -> tuple[str, int, int]:
        return (self.file, self.line, self.col)


@dataclass(frozen=True)
class ErrorRecord(Site):
    """A site placed in its scan: stable id, repository, commit and pinned link."""

    id: str = ""
    repo: str = ""
    commit: str = ""
    url: str | None = None

    def to_dict(self) -> dict[str, Any]:
        context = self.context
        return {
            "id": self.id,
            "repo": self.repo,
            "commit": self.commit,
            "kind": self.kind,
            "exception": self.exception,
            "message": self.message,
            "message_parts": [part.to_dict() for part in self.message_parts],
            "message_source": self.message_source,
            "args": list(self.args),
            "cause": self.cause,
            "file": self.file,
            "line": self.line,
            "end_line": self.end_line,
            "col": self.col,
            "function": self.function,
            "context": {
                "start_line": context.start_line,
                "end_line": context.end_line,
                "code": context.code,
            },
            "url": self.url,
        }


@dataclass(frozen=True)
class FileError:
    """A file that could not be read or parsed, and why."""

    file: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "reason": self.reason}


@dataclass(frozen=True)
class FileResult:
    """The outcome of one file: its sites, or the error that stopped it."""

    file: str
    sites: tuple[Site, ...] = ()
    error: FileError | None = None


@dataclass(frozen=True)
class ScanStats:
    files: int
    sites: int
    file_errors: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Deterministic part only: the seconds are left out of written output."""
        return {"files": self.files, "sites": self.sites, "file_errors": self.file_errors}


@dataclass(frozen=True)
class ScanResult:
    repo: str
    commit: str
    errscan_version: str
    records: tuple[ErrorRecord, ...]
    file_errors: tuple[FileError, ...]
    stats: ScanStats

    def __iter__(self) -> Iterator[ErrorRecord]:
        return iter(self.records)

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "commit": self.commit,
            "errscan_version": self.errscan_version,
            "records": [record.to_dict() for record in self.records],
            "file_errors": [error.to_dict() for error in self.file_errors],
            "stats": self.stats.to_dict(),
        }
