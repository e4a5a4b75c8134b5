"""Raised expression -> exception as written, its arguments, and whether a factory builds it.

raise errors.ConfigError("bad", path, code=3)
    ->  exception "errors.ConfigError", positional ("bad", path), keywords ("code=3",)
raise self._error("bad")
    ->  exception "self._error", factory
"""

from __future__ import annotations

import ast

from errscan.extractors.source import Source, cut
from errscan.frozen import frozen


@frozen
class Raised:
    """What a raise statement (or an assert, exit or warning) throws, read off its syntax."""

    exception: str | None
    message: ast.expr | None  # the first positional argument: an unresolved message's text
    args: tuple[str, ...]  # every argument but `message`, as source
    # True where the exception surely carries no message: `raise E`, `raise E()`.
    no_message: bool
    positional: tuple[ast.expr, ...] = ()
    keywords: tuple[str, ...] = ()
    keyword_values: tuple[tuple[str, ast.expr], ...] = ()
    factory: bool = False
    call_args: tuple[tuple[str | None, str], ...] = ()

    @classmethod
    def with_message(cls, exception: str, node: ast.expr | None, src: Source) -> Raised:
        """assert's message, exit's argument, a warning's text: one message argument."""
        positional = (node,) if node is not None else ()
        call_args = ((None, cut(src.expression(node))),) if node is not None else ()
        return cls(exception, node, (), node is None, positional, call_args=call_args)


def unwrapped(exc: ast.expr | None) -> ast.expr | None:
    """What `raise X.with_traceback(tb)` raises: X."""
    while (
        isinstance(exc, ast.Call)
        and isinstance(exc.func, ast.Attribute)
        and exc.func.attr == "with_traceback"
    ):
        exc = exc.func.value
    return exc


def raised(exc: ast.expr | None, src: Source) -> Raised:
    # case: bare `raise`
    if exc is None:
        return Raised(None, None, (), no_message=False)
    # case: `raise t.cast(E, caught)`: an exception of class E made elsewhere
    if isinstance(exc, ast.Call) and _is_cast(exc):
        return Raised(src.expression(exc.args[0]), None, (), no_message=False)
    # case: `raise E(...)`, `raise m.E(...)`, `raise factory(...)`
    if isinstance(exc, ast.Call):
        return _called(exc, src)
    # case: `raise E`, `raise m.E` (a class, by the naming convention) or `raise err`
    return Raised(src.expression(exc), None, (), no_message=_looks_like_class(exc))


def _called(call: ast.Call, src: Source) -> Raised:
    exception = src.expression(call.func)
    positional = tuple(call.args)
    first = positional[0] if positional and not isinstance(positional[0], ast.Starred) else None
    rest = tuple(src.expression(arg) for arg in positional if arg is not first)
    keywords = tuple(_keyword(kw, src) for kw in call.keywords)
    values = tuple((kw.arg, kw.value) for kw in call.keywords if kw.arg is not None)
    call_args: list[tuple[str | None, str]] = [(None, cut(src.expression(a))) for a in positional]
    call_args += [(kw.arg, cut(src.expression(kw.value))) for kw in call.keywords if kw.arg]
    return Raised(
        exception,
        first,
        rest + keywords,
        no_message=not positional and not call.keywords,
        positional=positional,
        keywords=keywords,
        keyword_values=values,
        factory=not _looks_like_class(call.func),
        call_args=tuple(call_args),
    )


# what a factory "makes" that gives back an exception raised before, with a traceback
# (jinja2's rewrite_traceback_stack): raising what it returns is a re-raise
RAISED_BEFORE = "<raised before>"


def with_a_traceback(exc: ast.expr | None) -> ast.expr | None:
    """What `raise exc.with_traceback(tb)` raises, where that is an exception object held
    by a name or attribute (not a class, not a call): one raised before, whose traceback
    it is given again (pluggy's `raise self._exception.with_traceback(self._traceback)`);
    None for anything else, a traceback of None too."""
    if not (
        isinstance(exc, ast.Call)
        and isinstance(exc.func, ast.Attribute)
        and exc.func.attr == "with_traceback"
        and len(exc.args) == 1
        and not (isinstance(exc.args[0], ast.Constant) and exc.args[0].value is None)
    ):
        return None
    held = exc.func.value
    if isinstance(held, (ast.Name, ast.Attribute)) and not _looks_like_class(held):
        return held
    return None


def cast_value(exc: ast.expr | None) -> ast.expr | None:
    """What `raise t.cast(E, err)` raises at run time: err; None for anything else."""
    if isinstance(exc, ast.Call) and _is_cast(exc):
        return exc.args[1]
    return None


def _is_cast(call: ast.Call) -> bool:
    """`cast(E, x)`, `t.cast(E, x)`, `typing.cast(E, x)`."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return (
        name == "cast"
        and len(call.args) == 2
        and not call.keywords
        and isinstance(call.args[0], (ast.Name, ast.Attribute))
    )


def _keyword(kw: ast.keyword, src: Source) -> str:
    value = src.expression(kw.value)
    return f"{kw.arg}={value}" if kw.arg is not None else f"**{value}"


def _looks_like_class(node: ast.expr) -> bool:
    """CapWords names are classes by convention, private ones too (`_ParseError`);
    `make_error`, `self._error` are factories."""
    if isinstance(node, ast.Attribute):
        return looks_like_class_name(node.attr)
    return isinstance(node, ast.Name) and looks_like_class_name(node.id)


def looks_like_class_name(name: str) -> bool:
    return name.lstrip("_")[:1].isupper()
