"""Raised expression -> exception as written, message argument, further arguments.

raise errors.ConfigError("bad", path, code=3)
    ->  exception "errors.ConfigError", message argument "bad", args ("path", "code=3")
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from errscan.extractors.source import Source


@dataclass(frozen=True)
class Raised:
    """What a raise statement throws, read off its syntax."""

    exception: str | None
    message: ast.expr | None
    args: tuple[str, ...]
    # True where the exception surely carries no message: `raise E`, `raise E()`.
    no_message: bool


def raised(exc: ast.expr | None, src: Source) -> Raised:
    # case: bare `raise`
    if exc is None:
        return Raised(None, None, (), no_message=False)
    # case: `raise E(...)`, `raise m.E(...)`, `raise factory(...)`
    if isinstance(exc, ast.Call):
        return _called(exc, src)
    # case: `raise E`, `raise m.E` (a class, by the naming convention) or `raise err`
    return Raised(src.expression(exc), None, (), no_message=_looks_like_class(exc))


def _called(call: ast.Call, src: Source) -> Raised:
    exception = src.expression(call.func)
    message: ast.expr | None = None
    rest: list[str] = []
    for arg in call.args:
        if message is None and not rest and not isinstance(arg, ast.Starred):
            message = arg
        else:
            rest.append(src.expression(arg))
    rest.extend(_keyword(kw, src) for kw in call.keywords)
    return Raised(exception, message, tuple(rest), no_message=message is None and not rest)


def _keyword(kw: ast.keyword, src: Source) -> str:
    value = src.expression(kw.value)
    return f"{kw.arg}={value}" if kw.arg is not None else f"**{value}"


def _looks_like_class(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr[:1].isupper()
    return isinstance(node, ast.Name) and node.id[:1].isupper()
