"""Per-file sites -> records of the whole scan: stable ids and pinned links."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence

from errscan.analyzer.index import BUILTIN_EXCEPTIONS, Index
from errscan.extractors import trigger
from errscan.extractors.message import inline, merge
from errscan.models import ErrorRecord, MessagePart, Site

LinkFor = Callable[[str, int], "str | None"]


def key_fields(site: Site) -> list[str]:
    """What a site's id is made of besides repository and file: never its line, so moving
    code keeps the id. Enclosing function, kind, exception and message template; where the
    message is unresolved, the message argument's source text stands in for it."""
    message = site.message if site.message is not None else f"<expr>{site.message_expr or ''}"
    return [site.function, site.kind, site.exception or "", message]


def site_key(repo: str, file: str, fields: Sequence[str]) -> str:
    return "\x1f".join((repo, file, *fields))


def ids(repo: str, file: str, keys: Iterable[Sequence[str]]) -> list[str]:
    """The ids of one file's sites, given their key fields in (line, col) order."""
    seen: dict[str, int] = {}
    out = []
    for fields in keys:
        key = site_key(repo, file, fields)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        out.append(record_id(key, occurrence))
    return out


def record_id(key: str, occurrence: int) -> str:
    """16 hex chars; the n-th identical site in one function (n > 0) mixes n in."""
    text = key if occurrence == 0 else f"{key}\x1f#{occurrence}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def link(
    sites: Iterable[Site],
    repo: str,
    commit: str,
    url_for: LinkFor,
    index: Index,
    related: Callable[[str], tuple[str, ...]] = lambda _id: (),
) -> list[ErrorRecord]:
    """One file's records in (line, col) order, each with its id, resolved exception,
    related records and URL."""
    ordered = sorted(sites, key=Site.sort_key)
    records = []
    site_ids = ids(repo, ordered[0].file, (key_fields(s) for s in ordered)) if ordered else []
    for site, site_id in zip(ordered, site_ids, strict=True):
        info = index.exception_info(_qualname(site, index))
        composed = (
            _composed(site, info.init.init_params, info.init.init_parts) if info.init else None
        )
        fields = {
            **site.__dict__,
            "exception_qualname": info.qualname,
            "exception_bases": info.bases,
            "exception_doc": info.doc,
            "id": site_id,
            "related": related(site_id),
            "repo": repo,
            "commit": commit,
            "url": url_for(site.file, site.line),
        }
        if trigger.MODULE in site.trigger:
            module = index.module_of(site.file) or site.file
            fields["trigger"] = site.trigger.replace(trigger.MODULE, module)
        source = "init"
        if composed is None and info.qualname and info.qualname.startswith("builtins."):
            composed = _builtin_str(site, info.qualname[9:])
            source = site.message_source
        if composed is not None:
            text = "".join(part.placeholder for part in composed)
            fields.update(
                message=text,
                message_parts=composed,
                message_source=source,
                message_candidates=(text,),
            )
        # every field at once (see Site.build): ErrorRecord(**fields) cost a fifth of a rescan
        records.append(ErrorRecord.build(fields))
    return records


def _qualname(site: Site, index: Index) -> str | None:
    """The exception class a site throws, fully qualified, where the scan can tell."""
    ref = site.exception_ref
    if ref is None or site.kind == "reraise":
        return None
    if site.message_source == "factory" or not ref.rsplit(".", 1)[-1][:1].isupper():
        return index.factory_class(site.file, ref, site.function)
    return index.resolve(site.file, ref)


def _composed(
    site: Site, params: tuple[str, ...] | None, parts: tuple[MessagePart, ...]
) -> tuple[MessagePart, ...] | None:
    """The message an exception class's __init__ composes, with the call's arguments in."""
    if params is None or site.kind not in ("raise", "exit") or site.message_source == "factory":
        return None
    if params and not site.call_args:
        return None  # `raise E` of a class whose __init__ needs arguments: nothing to compose
    bound: dict[str, str] = {}
    positional = [text for keyword, text in site.call_args if keyword is None]
    if len(positional) > len(params):
        return None  # *args and the like: the call does not fit what we read of __init__
    bound.update(zip(params, positional, strict=False))
    bound.update((keyword, text) for keyword, text in site.call_args if keyword is not None)
    out: list[MessagePart] = []
    for part in parts:
        if part.expr is None or part.expr not in bound:
            out.append(part)
            continue
        argument = MessagePart(
            expr=bound[part.expr], conversion=part.conversion, format_spec=part.format_spec
        )
        out.append(inline(argument))
    return tuple(merge(out))


_OS_ERRORS = frozenset(name for name, cls in BUILTIN_EXCEPTIONS.items() if issubclass(cls, OSError))


def _builtin_str(site: Site, name: str) -> tuple[MessagePart, ...] | None:
    """What str() of a builtin exception makes of its arguments, where it is not the
    message itself: KeyError quotes it, OSError(errno, text[, file]) adds the numbers,
    and several arguments print as a tuple."""
    if site.kind not in ("raise", "exit") or not site.message_parts:
        return None
    positional = [text for keyword, text in site.call_args if keyword is None]
    if name in _OS_ERRORS and len(positional) in (2, 3):
        parts = [
            MessagePart(text="[Errno "),
            inline(MessagePart(expr=positional[0])),
            MessagePart(text="] "),
            *site.message_parts,
        ]
        if len(positional) == 3:
            parts += [
                MessagePart(text=": "),
                inline(MessagePart(expr=positional[2], conversion="r")),
            ]
        return tuple(merge(parts))
    if len(positional) > 1 and name != "SystemExit":
        items: list[MessagePart] = [MessagePart(text="(")]
        for i, text in enumerate(positional):
            if i:
                items.append(MessagePart(text=", "))
            items.append(inline(MessagePart(expr=text, conversion="r")))
        return tuple(merge([*items, MessagePart(text=")")]))
    if name == "KeyError" and len(positional) == 1:
        return _key_error(site.message_parts)
    return None


def _key_error(parts: tuple[MessagePart, ...]) -> tuple[MessagePart, ...]:
    """str(KeyError(m)) is repr(m): the message as a quoted string literal."""
    text = "".join(part.text or "" for part in parts)
    quote = '"' if "'" in text and '"' not in text else "'"
    escaped = [MessagePart(text=repr(p.text)[1:-1]) if p.text else p for p in parts]
    return tuple(merge([MessagePart(text=quote), *escaped, MessagePart(text=quote)]))
