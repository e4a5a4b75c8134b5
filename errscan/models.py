"""Frozen record types that every stage of errscan passes along; imports nothing of errscan."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import field
from typing import Any, NamedTuple, TypeVar

from errscan.frozen import frozen

_S = TypeVar("_S", bound="Site")
SITE_KINDS = ("raise", "reraise", "assert", "exit", "warning")
MESSAGE_SOURCES = (
    "literal", "fstring", "percent", "format", "concat", "variable", "constant",
    "keyword", "factory", "init", "none", "unresolved",
)  # fmt: skip


class MessagePart(NamedTuple):
    """One piece of a message template: literal `text`, or a runtime `expr`.

    A named tuple rather than a dataclass: a large scan builds hundreds of thousands of
    them from the cache, and a tuple is built several times faster; it is as immutable.
    """

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


@frozen
class Context:
    """Source lines around a site: lines start_line..end_line of the file, joined by newlines."""

    start_line: int
    end_line: int
    code: str


@frozen
class Site:
    """What one file alone tells of one raise, assert, exit or warning."""

    kind: str
    exception: str | None
    message: str | None
    message_parts: tuple[MessagePart, ...]
    message_source: str
    message_candidates: tuple[str, ...]
    args: tuple[str, ...]
    cause: str | None
    reraises: tuple[str, ...]
    guards: tuple[str, ...]
    env_vars: tuple[str, ...]
    trigger: str
    file: str
    line: int
    end_line: int
    col: int
    function: str
    context: Context
    # For the whole-scan stage, not written out:
    # the message argument's source text (the id falls back on it where `message` is null),
    message_expr: str | None = field(default=None, repr=False, compare=False)
    # the dotted name the exception resolves through (`errors.ConfigError`, `self._error`),
    exception_ref: str | None = field(default=None, repr=False, compare=False)
    # the raised call's arguments as (keyword or None, source), for __init__ composition.
    call_args: tuple[tuple[str | None, str], ...] = field(default=(), repr=False, compare=False)

    def sort_key(self) -> tuple[str, int, int]:
        return (self.file, self.line, self.col)

    @classmethod
    def build(cls: type[_S], fields: dict[str, Any]) -> _S:
        """An instance from all its fields at once, without a frozen dataclass's
        per-field __setattr__ (a fifth of a rescan's time, reading from the cache)."""
        site = object.__new__(cls)
        site.__dict__.update(fields)
        return site


@frozen
class ErrorRecord(Site):
    """A site placed in its scan: id, resolved exception, repository, commit and link."""

    exception_qualname: str | None = None
    exception_bases: tuple[str, ...] = ()
    exception_doc: str | None = None
    related: tuple[str, ...] = ()
    id: str = ""
    repo: str = ""
    commit: str = ""
    url: str | None = None
    # where in the project the file is: "code", or "examples" or "docs" (kept, but marked)
    area: str = "code"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ErrorRecord:
        """A record back from its to_dict() form (a line of jsonl output)."""
        fields = dict(data)
        fields["message_parts"] = tuple(
            MessagePart(p.get("text"), p.get("expr"), p.get("conversion"), p.get("format_spec"))
            for p in data.get("message_parts", ())
        )
        fields["context"] = Context(**data["context"])
        for name in ("message_candidates", "args", "reraises", "guards", "env_vars",
                     "exception_bases", "related"):  # fmt: skip
            fields[name] = tuple(data.get(name, ()))
        fields.setdefault("message_expr", None)
        fields.setdefault("exception_ref", None)
        fields.setdefault("call_args", ())
        return cls.build(fields)

    def to_dict(self) -> dict[str, Any]:
        context = self.context
        return {
            "id": self.id,
            "repo": self.repo,
            "commit": self.commit,
            "kind": self.kind,
            "exception": self.exception,
            "exception_qualname": self.exception_qualname,
            "exception_bases": list(self.exception_bases),
            "exception_doc": self.exception_doc,
            "message": self.message,
            "message_parts": [part.to_dict() for part in self.message_parts],
            "message_source": self.message_source,
            "message_candidates": list(self.message_candidates),
            "args": list(self.args),
            "cause": self.cause,
            "reraises": list(self.reraises),
            "guards": list(self.guards),
            "env_vars": list(self.env_vars),
            "trigger": self.trigger,
            "related": list(self.related),
            "file": self.file,
            "line": self.line,
            "end_line": self.end_line,
            "col": self.col,
            "function": self.function,
            "area": self.area,
            "context": {
                "start_line": context.start_line,
                "end_line": context.end_line,
                "code": context.code,
            },
            "url": self.url,
        }


@frozen
class Import:
    """One name an import binds: `from .x import Y as Z` is Import("Z", 1, "x", "Y")."""

    local: str
    level: int
    module: str
    name: str | None


@frozen
class ClassInfo:
    """A class defined in a file: its bases as written, docstring, and message composition.

    `init_params`/`init_parts`: where __init__ passes a static template built from its
    parameters to super().__init__, the parameters in order and the template.
    """

    qualname: str
    bases: tuple[str, ...]
    doc: str | None
    init_params: tuple[str, ...] | None = None
    init_parts: tuple[MessagePart, ...] = ()
    # where __str__ composes the text on several paths: init_parts is the most general
    # template, and these the paths' own
    init_candidates: tuple[tuple[MessagePart, ...], ...] = ()
    from_str: bool = False  # the template is __str__'s, in terms of __init__'s parameters
    # what __init__ passes to super().__init__, as (keyword or None, source text)
    super_args: tuple[tuple[str | None, str], ...] = ()
    # __init__ never calls a base's __init__ (nor sets self.args, nor has a __new__):
    # the exception's args stay the call's positional arguments, which plain str() shows
    plain_args: bool = False
    # class-level constants (`code = "bhk3"`, `status = 404`) as (name, repr of the value)
    constants: tuple[tuple[str, str], ...] = ()
    # instance attributes __init__ sets from what its caller passes (`self.error_messages`
    # merged with an `error_messages` parameter): a message read from one is configurable
    caller_set: tuple[str, ...] = ()
    # parameters __init__ gives a value of its own where the call gives none (`if message
    # is None: message = f"{name} not found"`), with that value's template in terms of
    # the parameters: a part OR_DEFAULT + name stands for the argument, else for this
    init_defaults: tuple[tuple[str, tuple[MessagePart, ...]], ...] = ()
    # the base __init__ calls by name, where it is not the first of `bases` (configobj's
    # `ValidateError.__init__(self, text)` in a subclass of VdtValueError): the classes
    # between, whose __init__s never run, compose nothing (as written: `ValidateError`)
    init_of: str | None = None
    # what __init__ does, for a __str__ formatting a text with the instance's attributes
    # (ATTRS_FORMAT): ("param", name, "") / ("param=", name, default's source) in order,
    # ("*", name, ""), ("kwonly", ...) / ("kwonly=", ...), ("**", name, ""); ("attr", X,
    # P) of a top-level `self.X = P`, P "" where the value is no parameter or X is set
    # elsewhere in __init__ (X "*" where `self.__dict__` or setattr() may set any);
    # ("setattr", KW, "") of `for k, v in KW.items(): setattr(self, k, v)`; ("super()",
    # "", ""), then ("super", keyword or "" or "*" or "**", source) of each argument, of
    # a super().__init__ call at __init__'s top level. None where it defines no __init__
    init_setup: tuple[tuple[str, str, str], ...] | None = None
    # what __init__ and __str__ make (init_params, init_parts, init_candidates, from_str,
    # super_args, plain_args, caller_set, init_defaults, init_of, init_setup) was not read
    # (summarize's `partial`: a class not on the line of one named as an exception in its
    # file): those fields hold their defaults, and a reader needing them summarizes the
    # file whole
    deferred: bool = False


# (function qualname, parameters, the built class's arguments or None)
FactoryCall = tuple[str, tuple[str, ...], tuple[tuple[str | None, str], ...] | None]
# (factory qualname, the parameter its table is looked up by, (key, class as written) of
# each entry of the table)
FactoryTable = tuple[str, str, tuple[tuple[str, str], ...]]


@frozen
class FileSummary:
    """What other files need to know of one file: its imports, classes and factories.

    `factories`: (function qualname, the class it returns or raises, as written).
    `factory_calls`: (function qualname, its parameters, the arguments of the class it
    builds, as (keyword or None, source text) in terms of those parameters; None where
    its returns build it in more than one way).
    `aliases`: (name, dotted name as written) of a module's `ConnectionError =
    ProtocolError`, a class's other name (urllib3's).
    `tables`: the factories that build the class they look up by a parameter in a
    module's dict (elementpath's `error_class, default_message = XPATH_ERROR_CODES[code]`,
    then `return error_class(message, pcode, token)`), with that dict's entries.
    `partial`: some classes are `deferred`, and factory_calls holds only the factories
    that build a class named as an exception's (summarize's `partial`).
    """

    imports: tuple[Import, ...] = ()
    classes: tuple[ClassInfo, ...] = ()
    factories: tuple[tuple[str, str], ...] = ()
    factory_calls: tuple[FactoryCall, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    partial: bool = False
    tables: tuple[FactoryTable, ...] = ()


@frozen
class FileError:
    """A file that could not be read or parsed, and why."""

    file: str
    reason: str
    # A failure of this run rather than of the file (a time limit): never cached.
    transient: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "reason": self.reason}


@frozen
class FileResult:
    """The outcome of one file: its sites, or the error that stopped it."""

    file: str
    sites: tuple[Site, ...] = ()
    error: FileError | None = None
    summary: FileSummary = FileSummary()


@frozen
class ScanStats:
    files: int
    sites: int
    file_errors: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Deterministic part only: the seconds are left out of written output."""
        return {"files": self.files, "sites": self.sites, "file_errors": self.file_errors}


@frozen
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
