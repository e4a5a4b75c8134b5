"""Per-file sites -> records of the whole scan: stable ids and pinned links."""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import json
import os
import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from errscan.analyzer import files, stdlib
from errscan.analyzer.index import ExceptionInfo, Index
from errscan.builtin_exceptions import BUILTIN_EXCEPTIONS
from errscan.extractors import trigger
from errscan.extractors.exception import RAISED_BEFORE, looks_like_class_name
from errscan.extractors.message import (
    DEFAULT,
    PLACEHOLDER,
    form_of,
    inline,
    literal_value,
    merge,
    template,
)
from errscan.extractors.source import Source, canonical
from errscan.extractors.summary import (
    ATTRS_FORMAT,
    CLASS_CONSTANT,
    CLASS_NAME,
    FIRST_ARGUMENT,
    FORMAT_CONSTANT,
    FORWARDED_ARGS,
    FORWARDED_KEYWORDS,
    JOINED_LINES,
    NOT_GIVEN,
    OPTIONAL_BRANCH,
    OR_CONSTANT,
    OR_DEFAULT,
    PERCENT_OF,
    UNKNOWN_STR,
)
from errscan.models import ClassInfo, ErrorRecord, MessagePart, Site

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
    known_ids: Sequence[str] | None = None,
) -> list[ErrorRecord]:
    """One file's records in (line, col) order, each with its id, resolved exception,
    related records and URL. `known_ids`: the records' ids, as `ids` gives them for the
    file (the first pass's ranking features hold them), one a site."""
    ordered = sorted(sites, key=Site.sort_key)
    records = []
    if known_ids is not None and len(known_ids) == len(ordered):
        site_ids = list(known_ids)
    else:
        site_ids = ids(repo, ordered[0].file, (key_fields(s) for s in ordered)) if ordered else []
    for site, site_id in zip(ordered, site_ids, strict=True):
        if _raises_what_was_raised_before(site, index):
            site = _as_reraise(site)
        called = _called_class(site, index)
        if called is not None and site.message_source == "factory":
            # `raise error("...")` of a class named in lower case (mutagen's): a class's
            # call, its argument's form the message's
            site = dataclasses.replace(site, message_source=form_of(site.message_expr))
        qualname, by_method = (called, False) if called is not None else _qualname(site, index)
        qualname = _ALIASES.get(qualname, qualname) if qualname is not None else None
        handed = _handed_class(site, index) if qualname is None else None
        info = index.exception_info(_os_error_subclass(site, qualname or handed))
        init = _effective_init(info)
        composed = _composed(site, init, init.init_parts) if init else None
        if handed is not None:  # the factory's own arguments, not the class's: not read
            init, composed = None, (MessagePart(expr=UNKNOWN_STR),)
        # the class passes on the argument the site read: the site's text; or its repr
        # (the Python tutorial's `__str__` returning `repr(self.value)`): the site's
        # text, quoted as repr quotes it
        shown = _shown_argument(composed, site)
        passed_on = shown in ("", "s")
        quoted = shown == "r"
        # the argument's text spliced in whole (click's `BadParameter(ngettext("...1 was
        # given.", "...{len} were given.", n).format(...))`): the site's own candidates
        # are the text's too (the plural), besides the class's paths
        spliced = not passed_on and site.message is not None and composed == site.message_parts
        if passed_on or quoted:
            composed = site.message_parts
        if info.runs:  # astroid's `self.message.format(**vars(self))`
            formatted = _attrs_text(site, info)
            composed = formatted if formatted is not None else (MessagePart(expr=UNKNOWN_STR),)
            init, spliced = None, False  # nor the paths of what its __init__s pass on
        if composed is None and init is not None and _str_may_read_more(init, info, site):
            composed = (MessagePart(expr=UNKNOWN_STR),)
        if composed is not None and any(part.expr == FIRST_ARGUMENT for part in composed):
            # a __str__ reading args[0] of a call without arguments (sympy's `raise
            # ArgumentIndexError`): str() itself fails
            composed = (MessagePart(expr=UNKNOWN_STR),)
        if composed is None and init is not None and _formats_arguments(init):
            # a format string the call gives as no literal (`str(e) + ": %s"`): the text
            # is what formatting it makes, not the argument
            composed = (MessagePart(expr=UNKNOWN_STR),)
        others = []  # the paths of a __str__, each composed the same way
        if init is not None and composed is not None and not quoted:
            composed = _with_constants(composed, info.constants, site.call_args, info.qualname)
            for parts in init.init_candidates:
                found = _composed(site, init, parts)
                if found is not None and not any(p.expr == FIRST_ARGUMENT for p in found):
                    others.append(
                        _with_constants(found, info.constants, site.call_args, info.qualname)
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
            "area": files.area(site.file),
        }
        if trigger.MODULE in site.trigger:
            module = index.module_of(site.file) or site.file
            fields["trigger"] = site.trigger.replace(trigger.MODULE, module)
        if (
            (info.key_quoted or quoted)
            and composed
            and not any(p.expr == UNKNOWN_STR for p in composed)
        ):
            # KeyError's str(): the repr, in the quotes repr picks (either, where a
            # `{x!r}` part decides it at run time)
            whole = [composed, *others]
            composed, *others = [_key_error(parts) for parts in whole]
            others += [_key_error(parts, flip=True) for parts in whole]
        source = "init"
        made = _factory_message(site, index, info, by_method)
        if made is not None:  # what the factory gives its class, the call's arguments in
            (composed, *others), source = made
        elif composed is None and info.args_str:
            composed, flipped = _in_either_quotes(functools.partial(_args_str, site))
            others += flipped
            source = site.message_source
        elif (
            composed is None
            and info.builtin_base
            and not (info.qualname or "").startswith("builtins.")
        ):
            # a subclass keeping a builtin's __init__ and __str__: KeyError's quotes,
            # SyntaxError's place, OSError's numbers
            base = info.builtin_base
            composed = _special_str(site, f"builtins.{base}")
            if composed is None:
                composed, flipped = _in_either_quotes(functools.partial(_builtin_str, site, base))
                others += flipped
            source = site.message_source
        elif composed is None and info.init_unread and site.kind == "raise":
            # an __init__ errscan cannot read makes the text: not the call's argument
            composed, source = (MessagePart(expr=UNKNOWN_STR),), site.message_source
        elif composed is None and info.qualname is not None:
            composed = _special_str(site, info.qualname)
            if composed is None and info.qualname.startswith("builtins."):
                name = info.qualname[9:]
                composed, flipped = _in_either_quotes(functools.partial(_builtin_str, site, name))
                others += flipped
            elif composed is None and stdlib.composes_text(info.qualname):
                composed = (MessagePart(expr=UNKNOWN_STR),)  # not the first argument, then
            source = site.message_source
        if source == "none" and composed and any(part.text or part.expr for part in composed):
            source = "init"  # no text given, one made by the class (SyntaxError(): "None")
        if composed is not None and site.message_source == DEFAULT and source == "init":
            source = DEFAULT  # `self.msg or "..."` composed by the class: still a default
        if composed is not None:
            text = "".join(part.placeholder for part in composed)
            paths = ["".join(part.placeholder for part in parts) for parts in others]
            fields.update(
                message=text,
                message_parts=composed,
                message_source=source,
                message_candidates=site.message_candidates
                if passed_on
                else tuple(
                    dict.fromkeys([text, *paths, *(site.message_candidates if spliced else ())])
                ),
            )
        if composed and all(part.expr == UNKNOWN_STR for part in composed):
            # a class whose __str__ errscan cannot read: unresolved, not a guess
            fields.update(
                message=None, message_parts=(), message_source="unresolved",
                message_candidates=(),
            )  # fmt: skip
        elif composed and site.message is None and not _said(fields):
            # `raise E(msg)` of an unread message, composed into `{msg}`: still
            # unresolved, not a template that matches any message
            fields.update(
                message=None, message_parts=(), message_source="unresolved",
                message_candidates=(),
            )  # fmt: skip
        if fields["message_source"] == "none" and not _known_text(info):
            # `raise BadRequest()` of a class errscan cannot read (a dependency's, or one
            # above a repository class): its own __str__ may well say something
            fields.update(message_source="unresolved")
        # every field at once (see Site.build): ErrorRecord(**fields) cost a fifth of a rescan
        records.append(ErrorRecord.build(fields))
    return records


# what a factory errscan cannot read is handed as a key or code rather than a text: a
# lowercase identifier (`make_error("invalid")`), or an uppercase one holding a digit or an
# underscore (elementpath's `self.error("XPTY0004")`, `NOT_FOUND`)
_KEY = re.compile(r"[a-z][a-z0-9_]*|[A-Z][A-Z0-9_]*[0-9_][A-Z0-9_]*")


def _with_constants(
    parts: tuple[MessagePart, ...],
    constants: tuple[tuple[str, str], ...],
    call_args: tuple[tuple[str | None, str], ...] = (),
    qualname: str | None = None,
) -> tuple[MessagePart, ...]:
    """A __str__'s class constants (`self.code`) as the class raised has them, its
    `self.__class__.__name__` as the name of the class raised (`qualname`), and an
    __init__'s `self.fmt.format(**kwargs)` with the call's keyword arguments in."""
    if not any(
        p.expr and (p.expr.startswith((CLASS_CONSTANT, FORMAT_CONSTANT)) or p.expr == CLASS_NAME)
        for p in parts
    ):
        return parts
    values = dict(constants)
    out: list[MessagePart] = []
    for part in parts:
        if part.expr == CLASS_NAME and qualname:
            out.append(MessagePart(text=qualname.rsplit(".", 1)[-1]))
            continue
        if part.expr is not None and part.expr.startswith(FORMAT_CONSTANT):
            out.extend(_formatted(values.get(part.expr[len(FORMAT_CONSTANT) :]), call_args))
            continue
        if part.expr is None or not part.expr.startswith(CLASS_CONSTANT):
            out.append(part)
            continue
        name = part.expr[len(CLASS_CONSTANT) :]
        value = values.get(name)
        if value is None:  # not in the classes errscan followed: what it is is not known
            out.append(part._replace(expr=f"self.{name}"))
        else:
            out.append(inline(part._replace(expr=value)))
    return tuple(merge(out))


_Parts = tuple[MessagePart, ...]


def _attrs_text(site: Site, info: ExceptionInfo) -> _Parts | None:
    """The text of a class whose __str__ formats a text with the instance's attributes
    (summary.ATTRS_FORMAT, astroid's errors), the call's arguments followed through each
    __init__ of the line (info.runs) to the attributes they set; None where a step is
    not read, or an attribute the text reads is set twice."""
    if site.kind != "raise" or site.message_source == "factory":
        return None
    if site.message_source == "unresolved" and not site.call_args:
        return None  # `raise cached`, an instance made before: what it was made of is not known
    if any(arg.startswith("**") for arg in site.args) or any(
        keyword is None and text.startswith("*") for keyword, text in site.call_args
    ):
        return None  # `E(**error.args[0])`: which arguments is not known
    args: list[tuple[str | None, _Parts]] = [(k, _argument(t)) for k, t in site.call_args]
    attributes: dict[str, _Parts | None] = {}
    for cls in info.runs:
        setup = cls.init_setup
        marker = next(
            (p.expr for p in cls.init_parts if p.expr and p.expr.startswith(ATTRS_FORMAT)), None
        )
        if setup is None:
            if marker is not None:
                return None
            continue  # no __init__ of its own: the next one runs, given the same
        bound = _bound_setup(setup, args)
        if bound is None:
            return None
        named, extra = bound
        for kind, first, second in setup:
            if kind == "attr":
                value = named.get(second) if second else None
                attributes[first] = None if first in attributes else value
            elif kind == "setattr":
                for keyword, given in extra:
                    attributes[keyword] = None if keyword in attributes else given
        if marker is not None and cls.from_str:
            param, left_out, fallback = marker[len(ATTRS_FORMAT) :].split("|")
            message = named.get(param)
            if left_out:
                attributes.pop(left_out, None)
            if message is None:
                return None
            return _format_attributes(message, attributes, fallback == "!")
        if not any(kind == "super()" for kind, _, _ in setup):
            return None  # its bases' __init__s never run
        passed: list[tuple[str | None, _Parts]] = []
        kwarg = next((name for kind, name, _ in setup if kind == "**"), None)
        for kind, keyword, text in setup:
            if kind != "super":
                continue
            if keyword == "**" and text == kwarg:
                passed.extend(extra)
                continue
            if keyword in ("*", "**"):
                return None
            value = _in_terms_of(text, named)
            if value is None:
                return None
            passed.append((keyword or None, value))
        args = passed
    return None


def _argument(text: str) -> _Parts:
    """A call's argument as a template: a string expression's, else the value itself (a
    literal too: `None` is formatted as what it is, not as a text)."""
    spliced = _string_argument(text)
    return spliced if spliced is not None else (MessagePart(expr=text),)


def _bound_setup(
    setup: tuple[tuple[str, str, str], ...], args: list[tuple[str | None, _Parts]]
) -> tuple[dict[str, _Parts], list[tuple[str, _Parts]]] | None:
    """The value of each of an __init__'s parameters (ClassInfo.init_setup) a call with
    `args` gives, and the keywords its `**` parameter takes; None where the call does
    not fit."""
    positional = [name for kind, name, _ in setup if kind in ("param", "param=")]
    keywords = {name for kind, name, _ in setup if kind in ("param", "param=", "kwonly", "kwonly=")}
    takes_rest = any(kind == "*" for kind, _, _ in setup)
    takes_keywords = any(kind == "**" for kind, _, _ in setup)
    named: dict[str, _Parts] = {}
    extra: list[tuple[str, _Parts]] = []
    given = [value for keyword, value in args if keyword is None]
    if len(given) > len(positional) and not takes_rest:
        return None
    named.update(zip(positional, given, strict=False))
    for keyword, value in args:
        if keyword is None:
            continue
        if keyword in keywords and keyword not in named:
            named[keyword] = value
        elif keyword not in keywords and takes_keywords:
            extra.append((keyword, value))
        else:
            return None
    for kind, name, default in setup:
        if name in named or kind not in ("param", "param=", "kwonly", "kwonly="):
            continue
        if not kind.endswith("="):
            return None  # a parameter without a default, not given
        named[name] = _argument(default)
    return named, extra


def _in_terms_of(text: str, named: Mapping[str, _Parts]) -> _Parts | None:
    """What an __init__ passes on (`text`, in terms of its parameters) as a template in
    terms of the call's arguments; None where that is not read."""
    if text in named:
        return named[text]
    parts = _string_argument(text)
    if parts is None:
        try:
            node = ast.parse(text, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if any(isinstance(n, ast.Name) and n.id in named for n in ast.walk(node)):
            return None
        return (MessagePart(expr=text),)
    out: list[MessagePart] = []
    for part in parts:
        value = named.get(part.expr) if part.expr is not None else None
        if part.expr is None or value is None:
            out.append(part)
        elif part.conversion in (None, "s") and not part.format_spec:
            out.extend(value)
        elif len(value) == 1 and value[0].expr is not None:
            out.append(inline(part._replace(expr=value[0].expr)))
        else:
            return None
    return tuple(merge(out))


def _format_attributes(
    text: _Parts, attributes: Mapping[str, _Parts | None], fallback: bool
) -> _Parts | None:
    """`text`.format(**attributes), its literal parts read as the format string (what a
    placeholder holds at run time is taken to hold no braces); where formatting fails
    (a field no attribute holds), `text` itself if `fallback`, else None."""
    out: list[MessagePart] = []
    for part in text:
        if part.text is None:
            out.append(inline(part))
            continue
        try:
            pieces = list(string.Formatter().parse(part.text))
        except ValueError:  # a lone brace
            return text if fallback else None
        for literal, field, spec, conversion in pieces:
            if literal:
                out.append(MessagePart(text=literal))
            if field is None:
                continue
            if not field.isidentifier() or field not in attributes:
                # `{}`, `{0}` (positional), `{x.y}`, or no such attribute: KeyError and
                # the like, unless an __init__ may set any attribute ("*")
                failed = field.isidentifier() or field == "" or field.isdigit()
                if failed and "*" not in attributes:
                    return text if fallback else None
                return None
            value = attributes[field]
            if value is None or (spec and "{" in spec):
                return None
            if conversion in (None, "s") and not spec:
                out.extend(inline(piece) for piece in value)
            elif len(value) == 1 and value[0].expr is not None:
                out.append(inline(MessagePart(expr=value[0].expr, conversion=conversion,
                                              format_spec=spec or None)))  # fmt: skip
            elif len(value) == 1 and value[0].text is not None:
                out.append(inline(MessagePart(expr=repr(value[0].text), conversion=conversion,
                                              format_spec=spec or None)))  # fmt: skip
            else:
                return None
    return tuple(merge(out))


def _known_text(info: ExceptionInfo) -> bool:
    """Whether errscan knows every class from the one raised up to a builtin: then a
    raise without arguments is one of no text, where no class composes one."""
    if info.qualname is None:
        return False
    if info.qualname.startswith("builtins."):
        return True
    return bool(info.bases) and info.bases[-1] in ("Exception", "BaseException")


def _factory_message(
    site: Site, index: Index, info: ExceptionInfo, by_method: bool = False
) -> tuple[list[tuple[MessagePart, ...]], str] | None:
    """The message of `raise factory(...)`: what the class makes of the arguments the
    factory gives it, those in terms of the call's, then the other paths' (a message
    the factory looks up, as the method's subclasses have it); a single unknown part
    where that cannot be read; with the message_source, "default" for a text its user
    may replace. None for other sites, and for a factory outside the repository, whose
    first argument may be its message. `by_method`: a factory method named as a class
    (Django's `DeserializationError.WithData`), which the site read as a class, its
    first argument as the text."""
    ref = site.exception_ref
    if ref is None or site.kind != "raise":
        return None
    if not by_method and (
        # "none": `raise self.wrong_syntax()`, no argument, the factory's texts its own
        site.message_source not in ("factory", "unresolved", "none")
        or looks_like_class_name(ref.rsplit(".", 1)[-1])
    ):
        return None
    unknown: list[tuple[MessagePart, ...]] = [(MessagePart(expr=UNKNOWN_STR),)]
    found = index.factory_at(site.file, ref, site.function)
    if found is None:
        # a factory errscan cannot read: a lone identifier-like literal is a key or a
        # code (`make_error("invalid")`), not the text, nor is an argument after the first
        text = site.message if site.message_source == "factory" else None
        if text is not None and (
            (_KEY.fullmatch(text) and site.message_parts[0].text == text) or _read_after_first(site)
        ):
            return unknown, "factory"
        return None
    _, _, made_as, params, built = found
    if built is not None and (FORWARDED_ARGS in built or FORWARDED_KEYWORDS in built):
        forwarded = _forwarded_message(site, index, info)
        return ([forwarded] if forwarded is not None else unknown), "factory"
    inner = _made_of(built, info) if built is not None else None
    if inner is None or any(part.expr == UNKNOWN_STR for part in inner):
        return unknown, "factory"
    if inner == ():  # a class whose text is empty whatever it is given (docutils's
        return [inner], "factory"  # DirectiveError calls Exception.__init__(self) alone)
    if index.factory_class(site.file, ref, site.function, follow=False) is None:
        # made through another factory: what this one builds are that one's arguments,
        # not the class's
        return unknown, "factory"
    if params and inner == (MessagePart(expr=params[0]),) and site.message_source == "factory":
        return None  # `def error(msg): return E(msg)`: the site's own reading of msg stands
    paths, configurable = (
        _looked_up(inner, params, site, index) if ref.startswith("self.") else ([inner], False)
    )
    of_cls = made_as == "cls"  # a classmethod's `return cls(...)`
    made = []
    for parts in paths:
        bound = _bound(site.call_args, params, parts)
        if bound and of_cls:
            bound = _cls_constants(bound, info)
        if bound and any(part.text and part.text.strip() for part in bound):
            made.append(bound)
    if len(made) != len(paths) or not made:
        return unknown, "factory"  # nothing but placeholders matches any text: no template
    return made, DEFAULT if configurable else "factory"


def _read_after_first(site: Site) -> bool:
    """Whether the site read its text from a positional argument after the first, which a
    factory errscan cannot read is not known to make its text of (bitstring's
    `_misplaced_prefix_error(s, "0b", "0101", e)`)."""
    positional = [text for keyword, text in site.call_args if keyword is None]
    return len(positional) > 1 and bool(site.args) and site.args[0] == positional[0]


def _cls_constants(parts: tuple[MessagePart, ...], info: ExceptionInfo) -> tuple[MessagePart, ...]:
    """A classmethod's `cls.NAME` of a class constant, in the text it gives `cls`, as the
    class raised has it: hypothesis's `return cls(f"{cls._BASE_MESSAGE}\\n\\n{detail}")`."""
    values = dict(info.constants)
    if not values:
        return parts
    out = []
    for part in parts:
        name = part.expr[4:] if part.expr is not None and part.expr.startswith("cls.") else None
        value = values.get(name) if name is not None else None
        out.append(part if value is None else inline(part._replace(expr=value)))
    return tuple(merge(out))


def _forwarded_message(
    site: Site, index: Index, info: ExceptionInfo
) -> tuple[MessagePart, ...] | None:
    """The text of `raise self.parse_error(UnexpectedCharError, c)` (tomlkit's), the call's
    arguments followed through factories that pass them on (`return
    self._src.parse_error(exception, *args, **kwargs)`) to the one that builds the class
    it is handed (`return exception(line, col, *args, **kwargs)`): what that class makes
    of them. None where a step cannot be read or the text says nothing literal."""
    path, ref, function, args = site.file, site.exception_ref, site.function, site.call_args
    for _ in range(_MAX_FORWARDS):
        if ref is None:
            return None
        found = index.factory_at(path, ref, function)
        if found is None:
            return None
        path, function, ref, params, built = found
        passed = _passed_on(args, params, built) if built is not None else None
        if passed is None:
            return None
        if ref in params:  # the class it is handed, built of what it passes on
            made = _made_of(passed, info)
            if made is None or not any(part.text and part.text.strip() for part in made):
                return None
            return made
        args = passed
    return None


_MAX_FORWARDS = 4


def _passed_on(
    args: tuple[tuple[str | None, str], ...],
    params: tuple[str, ...],
    built: tuple[tuple[str | None, str], ...],
    given_only: bool = True,
) -> tuple[tuple[str | None, str], ...] | None:
    """The arguments a factory of `params` gives what it builds (`built`, in terms of
    its parameters) when called with `args`: the call's extra positional arguments for
    its `*args`, its other keywords for its `**kwargs`. None where a parameter the
    factory passes on is not given (its default is not read; with `given_only` False,
    it is passed on as its name, which no later step reads as a literal), or where the
    call gives more than the factory takes."""
    positional = [text for keyword, text in args if keyword is None]
    bound = _arguments(args, params)
    extra = [(None, text) for text in positional[len(params) :]]
    extra_keywords = [(k, t) for k, t in args if k is not None and k not in params]
    if (extra and FORWARDED_ARGS not in built) or (
        extra_keywords and FORWARDED_KEYWORDS not in built
    ):
        return None
    out: list[tuple[str | None, str]] = []
    for keyword, text in built:
        if (keyword, text) == FORWARDED_ARGS:
            out += extra
        elif (keyword, text) == FORWARDED_KEYWORDS:
            out += extra_keywords
        elif text in params:
            if text not in bound and given_only:
                return None
            out.append((keyword, bound.get(text, text)))
        else:
            out.append((keyword, text))
    return tuple(out)


# `self.error_messages[key]`, maybe `.format(**kwargs)`: what _looked_up of summary writes
_LOOKUP = re.compile(r"self\.(\w+)\[(\w+)\](?:\.format\((?:\*\*(\w+))?\))?")


def _looked_up(
    parts: tuple[MessagePart, ...],
    params: tuple[str, ...],
    site: Site,
    index: Index,
) -> tuple[list[tuple[MessagePart, ...]], bool]:
    """`parts` with a message the factory method looks up by the key the call gives it
    (`self.make_error("invalid", input=value)` of a Field) read from the class dicts of
    the calling method's class: one path per value its class and subclasses give it,
    the format fields filled with the call's keyword arguments where the factory passes
    them all on. `[parts]` where nothing is looked up; [] where it cannot be read. With
    them, whether whoever makes the object may give other messages (marshmallow's and
    Django's `error_messages=` of a field): the class's text is then a default."""
    matched = [(i, _LOOKUP.fullmatch(p.expr)) for i, p in enumerate(parts) if p.expr]
    lookups = [(i, m) for i, m in matched if m is not None]
    if not lookups:
        return [parts], False
    if len(lookups) > 1:
        return [], False
    at, found = lookups[0]
    attribute, param, kwargs = found.groups()
    formatted = found.group(0) != f"self.{attribute}[{param}]"
    key = _string_given(site.call_args, params, param)
    if key is None:
        return [], False
    fills = {k: t for k, t in site.call_args if k is not None} if kwargs else {}
    values, configurable = index.looked_up(site.file, site.function, attribute, key)
    paths = []
    for value in values:
        try:  # the repr of a class dict's str, as the summary keeps it
            text = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return [], False
        if not isinstance(text, str):
            return [], False
        middle = _format_fields(text, fills) if formatted else (_text(text),)
        if middle is None:
            return [], False
        paths.append(tuple(merge([*parts[:at], *middle, *parts[at + 1 :]])))
    return paths, configurable


def _format_fields(text: str, fills: dict[str, str]) -> tuple[MessagePart, ...] | None:
    """A str.format template as parts, each field the keyword argument given for it
    (`{input}` with input=value is `{value}`), else its own name; None where the text
    is no format string or its fields are positional."""
    out: list[MessagePart] = []
    try:
        pieces = list(string.Formatter().parse(text))
    except ValueError:
        return None
    for literal, field, spec, conversion in pieces:
        if literal:
            out.append(_text(literal))
        if field is None:
            continue
        name = field.split(".", 1)[0].split("[", 1)[0]
        if not name.isidentifier():
            return None
        if field == name and name in fills and not conversion and not spec:
            spliced = _string_argument(fills[name])  # message=f"bad {x}": read in place
            if spliced is not None:
                out.extend(spliced)
                continue
        expr = fills.get(name, name) + field[len(name) :]
        out.append(inline(MessagePart(expr=expr, conversion=conversion, format_spec=spec or None)))
    return tuple(merge(out))


def _str_may_read_more(init: ClassInfo, info: ExceptionInfo, site: Site) -> bool:
    """Where a __str__ errscan cannot read falls back on the site's argument (as
    SQLAlchemy's shows the message given): whether what else it may read is set, so that
    the argument is not all of the text. That is a second positional argument, or an
    attribute an __init__ of the class's line sets from its caller, given by the call's
    keyword (`code="isce"`) or a true class constant of the class raised (`code =
    "xd2s"`): SQLAlchemy then adds "(Background on this error at: ...)"."""
    if not init.from_str or not any(part.expr == UNKNOWN_STR for part in init.init_parts):
        return False
    if sum(1 for keyword, _ in site.call_args if keyword is None) > 1:
        return True  # several arguments: the first is not all of the text (pip's "--user")
    if info.init_fed_unread:
        return True  # what reaches the class is not what the call gave (pathvalidate)
    # an attribute set from the caller, private or not: `self.__description =
    # kwargs.pop("description")` is set by `description=` (pathvalidate's), and what a
    # `**kwargs` of the call gives is not known
    given = {keyword.lstrip("_") for keyword, _ in site.call_args if keyword is not None}
    if given & {name.lstrip("_") for name in info.caller_set}:
        return True
    if info.caller_set and any(arg.startswith("**") for arg in site.args):
        return True
    constants = dict(info.constants)
    return any(
        literal_value(constants[name]) not in ((True, None), (True, False), (True, ""))
        for name in info.caller_set
        if name in constants
    )


def _shown_argument(composed: _Parts | None, site: Site) -> str | None:
    """Where a class's text is the argument the site read its message from and nothing
    else: the conversion it shows it with ("" for none), else None."""
    if (
        composed is None
        or len(composed) != 1
        or composed[0].text is not None
        or composed[0].format_spec
        or site.message is None
        or composed[0].expr != _message_argument(site)
    ):
        return None
    return composed[0].conversion or ""


def _message_argument(site: Site) -> str | None:
    """The source of the argument a site read its message from: the message keyword
    where it read one, else the only positional argument (None where unsure)."""
    if site.message_source == "keyword":
        return next((text for key, text in site.call_args if key in _MESSAGE_KEYWORDS), None)
    positional = [text for key, text in site.call_args if key is None]
    return positional[0] if len(positional) == 1 else None


def _formatted(
    value: str | None, call_args: tuple[tuple[str | None, str], ...]
) -> tuple[MessagePart, ...]:
    """A class's format string (the repr of a str constant) with a call's keyword
    arguments in its fields; a part not read where it is no such string, or the call
    gives positional arguments (which `**kwargs` does not take)."""
    unknown = (MessagePart(expr=UNKNOWN_STR),)
    try:  # the repr summary.py wrote of a class constant
        text = ast.literal_eval(value) if value is not None else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return unknown
    if not isinstance(text, str) or any(k is None for k, _ in call_args):
        return unknown
    made = _format_fields(text, {k: v for k, v in call_args if k is not None})
    return made if made is not None else unknown


def _made_of(
    args: tuple[tuple[str | None, str], ...], info: ExceptionInfo
) -> tuple[MessagePart, ...] | None:
    """The message class `info` makes of a call's arguments (source text)."""
    init = _effective_init(info)
    if init is not None:
        defaults = dict(init.init_defaults)
        composed = _bound(args, init.init_params, init.init_parts, defaults=defaults)
        return _with_constants(composed, info.constants, args) if composed is not None else None
    positional = [text for keyword, text in args if keyword is None]
    if info.qualname is None:
        return None
    plain = info.args_str or info.qualname.startswith("builtins.")
    if len(positional) > 1:
        return _args_tuple(positional) if plain else None
    keyword = next((text for key, text in args if key in _MESSAGE_KEYWORDS), None)
    text = positional[0] if positional else keyword
    if text is None:
        return None
    spliced = _string_argument(text)
    parts = spliced if spliced is not None else (MessagePart(expr=text),)
    return _key_error(parts) if info.qualname == "builtins.KeyError" else parts


_MESSAGE_KEYWORDS = ("message", "msg", "reason", "detail", "description")


def _raises_what_was_raised_before(site: Site, index: Index) -> bool:
    """`raise rewrite_traceback_stack(source=source)` of a factory that gives back the
    exception being handled with a new traceback (jinja2's): a re-raise."""
    ref = site.exception_ref
    return (
        site.kind == "raise"
        and ref is not None
        and not looks_like_class_name(ref.rsplit(".", 1)[-1])
        and index.factory_made(site.file, ref, site.function) == RAISED_BEFORE
    )


def _as_reraise(site: Site) -> Site:
    """A raise site read again as the re-raise it is: of no class or text of its own,
    raising what the innermost except clause around it caught (as a bare `raise`)."""
    said, verb = site.trigger, trigger.verb("raise")
    handling = [g for g in site.guards if g == "except" or g.startswith("except ")]
    caught: tuple[str, ...] = ()
    if handling:  # guards.py writes `except E` or `except (A, B)`, as in the source
        written = handling[-1][len("except") :].strip() or "BaseException"
        try:
            kinds = ast.parse(written, mode="eval").body
        except (SyntaxError, ValueError):
            kinds = None
        elts = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds] if kinds else []
        caught = tuple(canonical(e) for e in elts)
    return dataclasses.replace(
        site,
        kind="reraise",
        exception=None,
        exception_ref=None,
        message=None,
        message_parts=(),
        message_source="unresolved",
        message_candidates=(),
        message_expr=None,
        args=(),
        call_args=(),
        reraises=caught,
        trigger=trigger.verb("reraise") + said[len(verb) :] if said.startswith(verb) else said,
    )


def _qualname(site: Site, index: Index) -> tuple[str | None, bool]:
    """The exception class a site throws, fully qualified, where the scan can tell; and
    whether a factory method named as a class makes it (`raise
    DeserializationError.WithData(...)`, Django's classmethod `return cls(...)`)."""
    ref = site.exception_ref
    if ref is None or site.kind == "reraise":
        return None, False
    if site.message_source == "factory" or not looks_like_class_name(ref.rsplit(".", 1)[-1]):
        made = index.factory_class(site.file, ref, site.function) or _table_class(site, index)
        if made is None:  # an alias of a standard class in lower case (`copy.error`)
            resolved = index.resolve(site.file, ref)
            known = resolved and (
                resolved.startswith("builtins.") or stdlib.exception_class(resolved)
            )
            return (resolved if known else None), False
        return made, False
    local = index.local_class(site.file, site.function, ref)
    if local is not None:
        return local, False
    resolved = index.resolve(site.file, ref)
    owner = ref.rpartition(".")[0]
    if (
        looks_like_class_name(owner.rpartition(".")[2])
        and (resolved is None or index.class_info(resolved) is None)
        and (made := index.factory_class(site.file, ref, site.function)) is not None
    ):
        return made, True
    return resolved, False


def _table_class(site: Site, index: Index) -> str | None:
    """The class a factory looks up in its table (FileSummary.tables) by the string the
    call gives it, followed through factories that pass it on: elementpath's `raise
    self.error('FORG0001', msg)`, whose `error` returns `xpath_error(code, msg, self)`,
    which builds the class XPATH_ERROR_CODES holds for `code`. The key is taken as
    passed (a factory that rewrites it first, as xpath_error does for `err:`-prefixed
    codes, finds no entry then). None where a step cannot be read, the call gives no
    string literal for it or the table holds no exception class for it."""
    path, ref, function, args = site.file, site.exception_ref, site.function, site.call_args
    for _ in range(_MAX_FORWARDS):
        found = index.factory_at(path, ref, function) if ref is not None else None
        if found is None:
            return None
        path, function, ref, params, built = found
        table = index.factory_table(path, function)
        if table is not None:
            param, classes = table
            written = classes.get(_string_given(args, params, param) or "")
            resolved = index.resolve(path, written) if written is not None else None
            return resolved if resolved is not None and index.is_exception(resolved) else None
        passed = _passed_on(args, params, built, given_only=False) if built is not None else None
        if passed is None:
            return None
        args = passed
    return None


def _arguments(args: tuple[tuple[str | None, str], ...], params: Sequence[str]) -> dict[str, str]:
    """The source text a call gives each parameter it gives, by position or keyword
    (keywords the parameters lack are kept too: no parameter reads them)."""
    given = dict(zip(params, (text for keyword, text in args if keyword is None), strict=False))
    given.update((keyword, text) for keyword, text in args if keyword is not None)
    return given


def _string_given(
    args: tuple[tuple[str | None, str], ...], params: Sequence[str], param: str
) -> str | None:
    """The string literal a call of `params` gives the parameter `param`, else None."""
    known, value = literal_value(_arguments(args, params).get(param, ""))
    return value if known and isinstance(value, str) else None


def _called_class(site: Site, index: Index) -> str | None:
    """The repository exception class a site calls by a name not written as a class's
    (mutagen's `class error(MutagenError)`, raised as `raise error("...")`), where no
    factory of that name makes one; else None."""
    ref = site.exception_ref
    if ref is None or site.kind != "raise" or looks_like_class_name(ref.rsplit(".", 1)[-1]):
        return None
    if index.factory_class(site.file, ref, site.function) is not None:
        return None
    resolved = index.resolve(site.file, ref)
    if resolved is None or index.class_info(resolved) is None:
        return None
    return resolved if index.is_exception(resolved) else None


# Python 3's other names of OSError: the class raised is OSError
_ALIASES = {"builtins.IOError": "builtins.OSError", "builtins.EnvironmentError": "builtins.OSError"}
# what names a factory that makes an error of the class it is handed: parse_error, _error,
# make_exc, fail
_ERROR_MAKER = re.compile(r"err|exc|fail", re.IGNORECASE)


def _handed_class(site: Site, index: Index) -> str | None:
    """The class a factory errscan cannot read is handed first, where it is an exception
    class: `raise parser.parse_error(UnexpectedCharError, char=c)` (tomlkit's, which
    returns `exception(line, col, *args, **kwargs)` through another object's method)
    raises an UnexpectedCharError. Only for a callee named as an error maker. And the
    class whose method makes it: `raise exceptions.SchemaError.create_from(error)`
    (jsonschema's classmethod `return cls(**other._contents())`) raises a SchemaError."""
    ref = site.exception_ref
    if ref is None or site.kind != "raise" or looks_like_class_name(ref.rsplit(".", 1)[-1]):
        return None
    owner = ref.rsplit(".", 1)[0] if "." in ref else ""
    made_by = _exception_class(site.file, owner, index)
    if made_by is not None or not _ERROR_MAKER.search(ref.rsplit(".", 1)[-1]):
        return made_by
    first = next((text for keyword, text in site.call_args if keyword is None), None)
    return _exception_class(site.file, first, index) if first is not None else None


def _exception_class(path: str, written: str, index: Index) -> str | None:
    """The exception class a class-like name written in `path` is, if it is one."""
    if not looks_like_class_name(written.rsplit(".", 1)[-1]):
        return None
    resolved = index.resolve(path, written)
    if resolved is None or not (index.is_exception(resolved) or stdlib.exception_class(resolved)):
        return None
    return resolved


def _effective_init(info: ExceptionInfo) -> ClassInfo | None:
    """The class whose __init__ decides the text, its template made whole: through the
    bases' __init__s and __str__ that compose it, or as the tuple of what it passes on."""
    if info.init is None:
        return None
    init, chain = info.init, info.composed_by
    if info.args_of_init:  # super().__init__(pool, message) into Exception
        last = chain[-1] if chain else init
        passed = [text for _, text in last.super_args]
        last = dataclasses.replace(last, init_parts=_args_tuple(passed), init_candidates=())
        init, chain = (init, (*chain[:-1], last)) if chain else (last, ())
    return _through_str(_through_inits(init, chain), info.str_of)


def _through_inits(init: ClassInfo, bases: tuple[ClassInfo, ...]) -> ClassInfo:
    """A class whose __init__ passes its arguments on to bases whose __init__s compose
    the text (`bases`, nearest first): the topmost base's template, with what each class
    passes on in, in terms of the class's own parameters; `init` as it is where a call
    does not fit what errscan read."""
    if not bases:
        return init
    top = bases[-1]
    for cls in [*reversed(bases[:-1]), init]:
        passed = _passed_into(cls, top) if cls.super_args else None
        if passed is None:
            return init
        top = passed
    return top


def _through_str(init: ClassInfo, base: ClassInfo | None) -> ClassInfo:
    """A class whose __init__ passes its arguments on to a base whose __str__ composes
    the text: the base's templates, with what the class passes in, in terms of the
    class's own parameters."""
    if base is None or init.init_params is None:
        return init
    passed = _passed_into(init, base)
    if passed is None:
        if _several_to_unread_str(init, base):
            unknown = (MessagePart(expr=UNKNOWN_STR),)
            return dataclasses.replace(init, init_parts=unknown, init_candidates=())
        return init
    return dataclasses.replace(
        passed, from_str=True, super_args=(), plain_args=False, constants=(), caller_set=()
    )


def _several_to_unread_str(init: ClassInfo, base: ClassInfo) -> bool:
    """Whether `init` passes several positional arguments on towards a __str__ errscan
    cannot read (glom's TypeMatchError passes three to GlomError's, which formats them):
    its own template is then not the text, which is unresolved, as it is where a site
    passes several to such a __str__ (_str_may_read_more)."""
    unread = bool(base.init_parts) and all(p.expr == UNKNOWN_STR for p in base.init_parts)
    return unread and sum(1 for keyword, _ in init.super_args if keyword is None) > 1


def _passed_into(cls: ClassInfo, base: ClassInfo) -> ClassInfo | None:
    """`cls` with `base`'s templates (and their paths) as its own: what cls passes to
    super().__init__ bound into them, in terms of cls's parameters; a parameter cls passes
    on as it came takes base's default along (cls's own default comes first: it is made
    before it is passed on). None where what cls passes does not fit base."""
    own = cls.init_params or ()
    inherited = dict(base.init_defaults)
    carried: dict[str, tuple[MessagePart, ...]] = {}
    general = _bound(cls.super_args, base.init_params, base.init_parts, own, inherited, carried)
    if general is None:
        return None
    paths = [_bound(cls.super_args, base.init_params, parts, own, inherited, carried)
             for parts in base.init_candidates]  # fmt: skip
    return dataclasses.replace(
        cls,
        init_parts=general,
        init_candidates=tuple(p for p in paths if p is not None),
        init_defaults=tuple(sorted({**carried, **dict(cls.init_defaults)}.items())),
    )


def _composed(
    site: Site, init: ClassInfo, parts: tuple[MessagePart, ...]
) -> tuple[MessagePart, ...] | None:
    """The message an exception class's __init__ composes, with the call's arguments in."""
    params = init.init_params
    if params is None or site.kind not in ("raise", "exit") or site.message_source == "factory":
        return None
    if _spreads(site):  # `E(msg, **extra)`: any parameter may be given, or not
        readable = _given_unknown(parts)
        if readable is None:
            return None
        parts = readable
    # `raise E` / `raise E()` too: a class that composes its text has one even then
    return _bound(site.call_args, params, parts, defaults=dict(init.init_defaults))


def _spreads(site: Site) -> bool:
    """Whether the call unpacks arguments (`*args`, `**kwargs`), which call_args leaves
    as they are written (a `*`) or out (a `**`)."""
    return any(text.startswith("*") for text in site.args) or any(
        keyword is None and text.startswith("*") for keyword, text in site.call_args
    )


_GIVEN_OR_NOT = (OR_DEFAULT, NOT_GIVEN, JOINED_LINES)  # what differs by a parameter given


def _given_unknown(parts: _Parts) -> _Parts | None:
    """`parts` where a call may give any parameter: a __str__'s optional branch the
    template both its paths match; None where a part depends on a parameter's being
    given otherwise."""
    out: list[MessagePart] = []
    for part in parts:
        if part.expr is not None and part.expr.startswith(_GIVEN_OR_NOT):
            return None
        if part.expr is not None and part.expr.startswith(OPTIONAL_BRANCH):
            out.extend(_branch(part.expr[len(OPTIONAL_BRANCH) :]))  # what both paths match
            continue
        out.append(part)
    return tuple(out)


def _bound(
    call_args: tuple[tuple[str | None, str], ...],
    params: tuple[str, ...] | None,
    parts: tuple[MessagePart, ...],
    through: tuple[str, ...] = (),
    defaults: Mapping[str, tuple[MessagePart, ...]] | None = None,
    carried: dict[str, tuple[MessagePart, ...]] | None = None,
) -> tuple[MessagePart, ...] | None:
    """`parts`, written in terms of `params`, with the arguments of a call in; where the
    call is a subclass's super().__init__, `through` holds its own parameters, and one
    passed on as it came still falls back on the class constant when not given.
    `defaults`: the templates __init__ makes of parameters the call leaves out (or gives
    None); a parameter passed on as it came takes its default along, into `carried`."""
    if params is None:
        return None
    bound: dict[str, str] = {}
    positional = [text for keyword, text in call_args if keyword is None]
    readable = not any(part.expr == UNKNOWN_STR for part in parts)
    rest = any(part.expr and part.expr.startswith(PERCENT_OF) and part.expr.endswith("|*")
               for part in parts)  # fmt: skip
    if len(positional) > len(params) and (params or not readable) and not rest:
        return None  # *args and the like: the call does not fit what we read of __init__
    # (no parameters: a __str__ read of a class with no __init__, which takes any
    # arguments; one not read falls back on what the site reads, as SQLAlchemy's
    # _sql_message() gives the message it was given)
    bound.update(zip(params, positional, strict=False))
    bound.update((keyword, text) for keyword, text in call_args if keyword is not None)
    out: list[MessagePart] = []
    for part in parts:
        if part.expr is not None and part.expr.startswith(PERCENT_OF):
            formatted = _percent_bound(part.expr[len(PERCENT_OF) :], bound, positional, params)
            if formatted is None:
                return None
            out.extend(formatted)
            continue
        if part.expr is not None and part.expr.startswith(OR_DEFAULT):
            param = part.expr[len(OR_DEFAULT) :]
            default = (defaults or {}).get(param)
            given = bound.get(param)
            if default is not None and given in (None, "None"):
                # case: E(name) of `if message is None: message = f"{name} not found"`
                made = _bound(call_args, params, default, through)
                if made is None:
                    return None
                out.extend(made)
                continue
            if default is not None and given in through and carried is not None:
                # a subclass passing its own parameter on: the default if it gives none
                made = _bound(call_args, params, default, through)
                if made is None:
                    return None
                carried.setdefault(str(given), made)
                out.append(part._replace(expr=OR_DEFAULT + str(given)))
                continue
            part = part._replace(expr=param)
        if part.expr is not None and part.expr.startswith(OPTIONAL_BRANCH):
            chosen = _branch(part.expr[len(OPTIONAL_BRANCH) :], bound, through)
            made = _bound(call_args, params, chosen, through, defaults, carried)
            if made is None:
                return None
            out.extend(made)
            continue
        if part.expr is not None and part.expr.startswith(JOINED_LINES):
            if through:
                return None  # passed on by a subclass's __init__: not read
            joined = _joined(part.expr[len(JOINED_LINES) :], bound)
            if joined is None:
                return None
            out.extend(joined)
            continue
        if part.expr is not None and part.expr.startswith(NOT_GIVEN):
            param = part.expr[len(NOT_GIVEN) :]
            default = (defaults or {}).get(param)
            given = bound.get(param)
            if given is None and default is not None:
                # case: E() of `def __init__(self, message="Bad input")`
                out.extend(default)
                continue
            if given is not None and given in through:
                # a subclass passing its own parameter on: its own default, if any
                out.append(part._replace(expr=NOT_GIVEN + given))
                continue
            part = part._replace(expr=param)
        if part.expr is not None and part.expr.startswith(OR_CONSTANT):
            param, _, attribute = part.expr[len(OR_CONSTANT) :].partition(".")
            if param not in bound:  # not given: the class constant, read when linking
                out.append(part._replace(expr=CLASS_CONSTANT + attribute))
                continue
            if bound[param] in through:
                out.append(part._replace(expr=f"{OR_CONSTANT}{bound[param]}.{attribute}"))
                continue
            part = part._replace(expr=param)
        if part.expr is None or part.expr not in bound:
            out.append(part)
            continue
        plain = part.conversion in (None, "s") and not part.format_spec
        spliced = _string_argument(bound[part.expr]) if plain else None
        if spliced is not None:  # `E(f"bad {x}")` into `f"{message} ({code})"`
            out.extend(spliced)
            continue
        argument = MessagePart(
            expr=bound[part.expr], conversion=part.conversion, format_spec=part.format_spec
        )
        out.append(inline(argument))
    return tuple(merge(out))


def _branch(
    spec: str, bound: Mapping[str, str] | None = None, through: Sequence[str] = ()
) -> _Parts:
    """The template of the path a __str__ takes (summary.OPTIONAL_BRANCH) for the call's
    argument of its parameter (`bound`: parameter -> source text): the one for None
    where the call leaves it out or gives None, the other where it gives a literal that
    is not (and, asked whether it is true, that is), else (or without `bound`: any
    argument may be given) the template both paths match."""
    param, kind, when_none, otherwise, general = json.loads(spec)
    chosen = general
    given = bound.get(param) if bound is not None else None
    if bound is not None and (given is None or given.strip() == "None"):
        chosen = when_none
    elif given is not None and given not in through:
        known, value = literal_value(given)
        if known:
            chosen = when_none if value is None or (kind == "truthy" and not value) else otherwise
    return tuple(MessagePart(*fields) for fields in chosen)


def _joined(spec: str, bound: Mapping[str, str]) -> tuple[MessagePart, ...] | None:
    """The lines a __str__ joins (summary.JOINED_LINES), of the arguments a call gives
    (`bound`: parameter -> source text): a line under `is not None` of an argument given
    as None, or left out where the default is None, is not there; None where a line's
    presence is not known (a default other than None, a parameter not given)."""
    sep, lines = json.loads(spec)
    out: list[MessagePart] = []
    for param, when, _conversion, default in lines:
        given = bound.get(param)
        if given is None and default != "None":
            return None  # a required parameter not given, or a default not read
        if when and (given is None or given.strip() == "None"):
            continue
        if given is None or given.strip() == "None":
            return None  # `lines.append(self.x)` of None: join() fails
        if out:
            out.append(MessagePart(text=sep))
        spliced = _string_argument(given)
        out.extend(spliced if spliced is not None else (MessagePart(expr=given),))
    return tuple(merge(out))


def _formats_arguments(init: ClassInfo) -> bool:
    return any(part.expr and part.expr.startswith(PERCENT_OF) for part in init.init_parts)


def _percent_bound(
    spec: str, bound: Mapping[str, str], positional: Sequence[str], params: Sequence[str]
) -> tuple[MessagePart, ...] | None:
    """A format string the call gives, %-formatted with the values it gives too (PERCENT_OF's
    "msg|zone_key", or "FIRST|*": every positional argument after the first), read as
    the raise `raise E("... %s" % (key,))` would be; None where the call gives the
    format string as no literal."""
    param, _, rest = spec.partition("|")
    text = bound.get(param)
    if text is None or _string_argument(text) is None:
        return None
    if rest == "*":
        values = list(positional[len(params) :])
    else:
        names = rest.split(",")
        if not all(name in bound for name in names):
            return None
        values = [bound[name] for name in names]
    if not values:
        return None
    return _string_argument(f"({text}) % ({', '.join(values)},)")


@functools.lru_cache(maxsize=4096)
def _string_argument(text: str) -> tuple[MessagePart, ...] | None:
    """The template of an argument that is itself a string expression (a literal, an
    f-string, `%` or `.format()`, or such a default after `msg or`), read where it
    stands; None for anything else. Remembered: the same argument's text is bound into
    many templates (pydantic's 554 readings in linking are of 157 texts, 13 ms)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Call, ast.BoolOp)):
        return None
    found = template(node, Source(text.strip()))
    if found is None or found.source not in ("literal", "fstring", "percent", "format", DEFAULT):
        return None
    return found.parts


def _said(fields: dict[str, Any]) -> bool:
    """Whether the message or a candidate holds literal text: a template of nothing but
    placeholders matches any message, so it is no template."""
    if any(part.text and part.text.strip() for part in fields["message_parts"]):
        return True
    return any(PLACEHOLDER.sub("", c).strip() for c in fields["message_candidates"])


# OSError(errno.ENOENT, ...) is a FileNotFoundError: CPython picks the subclass by errno
_ERRNO_CLASSES = {
    **dict.fromkeys(("EAGAIN", "EALREADY", "EWOULDBLOCK", "EINPROGRESS"), "BlockingIOError"),
    "ECHILD": "ChildProcessError",
    **dict.fromkeys(("EPIPE", "ESHUTDOWN"), "BrokenPipeError"),
    "ECONNABORTED": "ConnectionAbortedError",
    "ECONNREFUSED": "ConnectionRefusedError",
    "ECONNRESET": "ConnectionResetError",
    "EEXIST": "FileExistsError",
    "ENOENT": "FileNotFoundError",
    "EISDIR": "IsADirectoryError",
    "ENOTDIR": "NotADirectoryError",
    "EINTR": "InterruptedError",
    **dict.fromkeys(("EACCES", "EPERM", "ENOTCAPABLE"), "PermissionError"),
    "ESRCH": "ProcessLookupError",
    "ETIMEDOUT": "TimeoutError",
}


def _os_error_subclass(site: Site, qualname: str | None) -> str | None:
    """`raise OSError(errno.EEXIST, ...)` raises a FileExistsError."""
    if qualname != "builtins.OSError" or not site.call_args or site.call_args[0][0] is not None:
        return qualname
    first = site.call_args[0][1].strip()
    name = first.rsplit(".", 1)[-1] if first.startswith("errno.") else None
    subclass = _ERRNO_CLASSES.get(name or "")
    return f"builtins.{subclass}" if subclass else qualname


_OS_ERRORS = frozenset(name for name, classes in BUILTIN_EXCEPTIONS.items() if "OSError" in classes)


def _in_either_quotes(
    made: Callable[[bool], tuple[MessagePart, ...] | None],
) -> tuple[tuple[MessagePart, ...] | None, list[tuple[MessagePart, ...]]]:
    """What `made` gives, and, where they differ, what it gives in the other quotes (a
    `{x!r}` part decides them at run time: see _key_error)."""
    first = made(False)
    other = made(True) if first is not None else None
    return first, [other] if other is not None and other != first else []


def _builtin_str(site: Site, name: str, flip: bool = False) -> tuple[MessagePart, ...] | None:
    """What str() of a builtin exception makes of its arguments, where it is not the
    message itself: KeyError quotes it, OSError(errno, text[, file]) adds the numbers,
    and several arguments print as a tuple. `flip`: the other quotes where a `{x!r}`
    part decides them at run time (see _key_error); None where nothing is quoted so."""
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
        return _args_tuple(positional, flip)
    if name == "KeyError" and len(positional) == 1:
        return _key_error(site.message_parts, flip)
    return None


def _args_str(site: Site, flip: bool = False) -> tuple[MessagePart, ...] | None:
    """str() of an exception whose args are the call's positional arguments: one is its
    own text, several their tuple (`flip`: see _builtin_str)."""
    if site.kind not in ("raise", "exit"):
        return None
    positional = [text for keyword, text in site.call_args if keyword is None]
    if len(positional) > 1:
        return _args_tuple(positional, flip)
    return None  # one argument is the message as the site reads it


def _args_tuple(positional: list[str], flip: bool = False) -> tuple[MessagePart, ...]:
    """`(a, b)`: the repr of each argument, as a tuple prints them (`flip`: see
    _key_error)."""
    items: list[MessagePart] = [MessagePart(text="(")]
    for i, text in enumerate(positional):
        if i:
            items.append(MessagePart(text=", "))
        spliced = _string_argument(text)  # a string's repr: quoted, its template inside
        if spliced is not None:
            items.extend(_key_error(spliced, flip))
        else:
            items.append(inline(MessagePart(expr=text, conversion="r")))
    return tuple(merge([*items, MessagePart(text=")")]))


def _special_str(site: Site, name: str) -> tuple[MessagePart, ...] | None:
    """str() of the builtin and standard exceptions that compose their text from several
    arguments (CPython's Objects/exceptions.c, subprocess.py, json/decoder.py)."""
    if site.kind not in ("raise", "exit"):
        return None
    positional = [text for keyword, text in site.call_args if keyword is None]
    keywords = {keyword: text for keyword, text in site.call_args if keyword is not None}
    rule = _SPECIAL.get(name)
    return rule(positional, keywords) if rule is not None else None


def _arg(text: str, conversion: str | None = None) -> MessagePart:
    return inline(MessagePart(expr=text, conversion=conversion))


def _text(value: str) -> MessagePart:
    return MessagePart(text=value)


def _syntax_error(
    positional: list[str], keywords: dict[str, str]
) -> tuple[MessagePart, ...] | None:
    """SyntaxError(msg, (filename, lineno, offset, text)): `msg (file.py, line 3)`, the
    file's base name only; SyntaxError() with nothing: `None`, str() of its msg."""
    if not positional and not keywords:
        return (_text("None"),)
    if len(positional) != 2:
        return None
    details = _tuple_items(positional[1])
    if details is None or len(details) < 2:
        return (_arg(positional[0]), _text(" ("), MessagePart(expr=positional[1]), _text(")"))
    filename, lineno = details[0], details[1]
    known, value = literal_value(filename)
    if known and value is None:
        where: list[MessagePart] = [_text("line "), _arg(lineno)]
    else:
        shown = _text(os.path.basename(value)) if known and isinstance(value, str) else None
        where = [shown or MessagePart(expr=f"os.path.basename({filename})")]
        if literal_value(lineno) != (True, None):
            where += [_text(", line "), _arg(lineno)]
    return tuple(merge([_arg(positional[0]), _text(" ("), *where, _text(")")]))


def _exception_group(
    positional: list[str], _keywords: dict[str, str]
) -> tuple[MessagePart, ...] | None:
    """ExceptionGroup(msg, excs): `msg (2 sub-exceptions)`."""
    if len(positional) != 2:
        return None
    items = _tuple_items(positional[1])
    if items is not None and items:
        count = [_text(f" ({len(items)} sub-exception{'s' if len(items) > 1 else ''})")]
    else:
        size = f"len({positional[1]})"
        count = [_text(" ("), MessagePart(expr=size), _text(" sub-exception"),
                 MessagePart(expr=f"'s' if {size} > 1 else ''"), _text(")")]  # fmt: skip
    return tuple(merge([_arg(positional[0]), *count]))


def _unicode_error(
    verb: str, unit: str
) -> Callable[[list[str], dict[str, str]], tuple[MessagePart, ...] | None]:
    """UnicodeDecodeError(encoding, object, start, end, reason) and its kin: `'utf-8'
    codec can't decode byte 0x80 in position 3: invalid start byte`."""

    def rule(positional: list[str], _keywords: dict[str, str]) -> tuple[MessagePart, ...] | None:
        if len(positional) != 5 - (verb == "translate"):
            return None
        *head, start, end, reason = positional
        prefix = [] if verb == "translate" else [_text("'"), _arg(head[0]), _text("' codec ")]
        what = MessagePart(expr=f"the {unit}s at {start}:{end} of {head[-1]}")
        return tuple(merge([*prefix, _text(f"can't {verb} "), what, _text(" in position "),
                            MessagePart(expr=f"{start} or {start}-{end} - 1"), _text(": "),
                            _arg(reason)]))  # fmt: skip

    return rule


def _called_process_error(
    positional: list[str], keywords: dict[str, str]
) -> tuple[MessagePart, ...] | None:
    """CalledProcessError(returncode, cmd): `Command 'ls' returned non-zero exit status
    2.` (a negative code: `died with <Signals.SIGKILL: 9>.`)."""
    returncode = positional[0] if positional else keywords.get("returncode")
    cmd = positional[1] if len(positional) > 1 else keywords.get("cmd")
    if returncode is None or cmd is None:
        return None
    known, value = literal_value(returncode)
    if known and isinstance(value, int) and value >= 0:
        ending = [_text(f"returned non-zero exit status {value}.")]
    else:
        ending = [MessagePart(expr=f"the fate of exit status {returncode}"), _text(".")]
    return tuple(merge([_text("Command '"), _arg(cmd), _text("' "), *ending]))


def _json_decode_error(
    positional: list[str], keywords: dict[str, str]
) -> tuple[MessagePart, ...] | None:
    """JSONDecodeError(msg, doc, pos): `Expecting value: line 1 column 5 (char 4)`."""
    msg = positional[0] if positional else keywords.get("msg")
    pos = positional[2] if len(positional) > 2 else keywords.get("pos")
    if msg is None or pos is None:
        return None
    return tuple(merge([_arg(msg), _text(": line "), MessagePart(expr=f"line of {pos}"),
                        _text(" column "), MessagePart(expr=f"column of {pos}"),
                        _text(" (char "), _arg(pos), _text(")")]))  # fmt: skip


def _tuple_items(text: str) -> list[str] | None:
    """The source of each item of a tuple or list display, or None."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, (ast.Tuple, ast.List)) or any(
        isinstance(item, ast.Starred) for item in node.elts
    ):
        return None
    return [ast.get_source_segment(text.strip(), item) or canonical(item) for item in node.elts]


_SPECIAL: dict[str, Callable[[list[str], dict[str, str]], tuple[MessagePart, ...] | None]] = {
    "builtins.SyntaxError": _syntax_error,
    "builtins.IndentationError": _syntax_error,
    "builtins.TabError": _syntax_error,
    "builtins.ExceptionGroup": _exception_group,
    "builtins.BaseExceptionGroup": _exception_group,
    "builtins.UnicodeDecodeError": _unicode_error("decode", "byte"),
    "builtins.UnicodeEncodeError": _unicode_error("encode", "character"),
    "builtins.UnicodeTranslateError": _unicode_error("translate", "character"),
    "subprocess.CalledProcessError": _called_process_error,
    "json.JSONDecodeError": _json_decode_error,
    "json.decoder.JSONDecodeError": _json_decode_error,
}


def _key_error(parts: tuple[MessagePart, ...], flip: bool = False) -> tuple[MessagePart, ...]:
    """str(KeyError(m)) is repr(m): the message as a quoted string literal, in the quotes
    repr picks: double where the text holds a single quote and no double one. A `{x!r}`
    placeholder counts as holding one (the repr of a str or bytes shows them: webob's
    KeyError('Key not found: %r' % key) reads "Key not found: 'z'"), but the repr of
    another object may hold none (urllib3's `{e!r}` of IncompleteRead(1 bytes read)):
    `flip` gives those the single quotes instead. Any other placeholder may hold one too
    (networkx's `You used {graph_types}` of a tuple of strings): `flip` gives those the
    double quotes."""
    text = "".join(part.text or "" for part in parts)
    ruled = any(part.expr is not None and part.conversion == "r" for part in parts)
    held = any(part.expr is not None for part in parts)
    single = "'" in text or (ruled and not flip) or (held and not ruled and flip)
    quote = '"' if single and '"' not in text else "'"
    escaped = [MessagePart(text=_in_quotes(p.text, quote)) if p.text else p for p in parts]
    return tuple(merge([MessagePart(text=quote), *escaped, MessagePart(text=quote)]))


def _in_quotes(text: str, quote: str) -> str:
    """`text` as repr writes it inside `quote`s."""
    shown = repr(text)
    inner = shown[1:-1]
    if shown[0] == quote:
        return inner
    if quote == "'":  # repr picked double quotes: the single ones get escaped
        return inner.replace("'", "\\'")
    return inner.replace("\\'", "'")
