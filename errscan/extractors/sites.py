"""Raise and assert statements of one syntax tree, as file-local sites.

def load(path):
    if not path: raise ValueError(f"no path: {path!r}")
    ->  Site(kind="raise", exception="ValueError", message="no path: {path!r}", line=2, ...)
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from errscan.extractors import context, exception, message, scope
from errscan.extractors.source import Source
from errscan.models import Site

# Fields of a statement or block that hold nested statements.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def extract(tree: ast.Module, src: Source, radius: int = 15) -> list[Site]:
    """Every raise and assert in `tree`, in source order."""
    sites = [_site(node, handlers, where, src, radius) for node, handlers, where in _walk(tree)]
    sites.sort(key=Site.sort_key)
    return sites


Handlers = tuple[ast.ExceptHandler, ...]


def _walk(tree: ast.Module) -> Iterator[tuple[ast.Raise | ast.Assert, Handlers, scope.Scope]]:
    """Each raise/assert with the except clauses around it in its own function, and its scope.

    Only statement lists are visited (raise and assert are statements), with an explicit
    stack, so neither expression size nor block depth costs recursion.
    """
    stack: list[tuple[ast.AST, Handlers, scope.Scope]] = [(tree, (), ())]
    while stack:
        node, handlers, where = stack.pop()
        if isinstance(node, (ast.Raise, ast.Assert)):
            yield node, handlers, where
            continue
        inner = scope.enter(where, node)
        if inner is not where:
            handlers = ()
        elif isinstance(node, ast.ExceptHandler):
            handlers = (*handlers, node)
        for field in _BODIES:
            children = getattr(node, field, None)
            if children:
                stack.extend((child, handlers, inner) for child in reversed(children))


def _site(
    node: ast.Raise | ast.Assert,
    handlers: Handlers,
    where: scope.Scope,
    src: Source,
    radius: int,
) -> Site:
    line = node.lineno
    end_line = node.end_lineno or line
    if isinstance(node, ast.Assert):
        kind = "assert"
        thrown = exception.Raised("AssertionError", node.msg, (), no_message=node.msg is None)
        cause = None
    else:
        kind = "reraise" if _reraises(node, handlers) else "raise"
        thrown = exception.raised(node.exc, src)
        if kind == "reraise":
            thrown = exception.Raised(None, None, (), no_message=False)
        cause = src.expression(node.cause) if node.cause is not None else None
    resolved = message.template(thrown.message, src) if thrown.message is not None else None
    if resolved is not None:
        source = resolved.source
    else:
        source = "none" if thrown.no_message else "unresolved"
    return Site(
        kind=kind,
        exception=thrown.exception,
        message=resolved.text if resolved else None,
        message_parts=resolved.parts if resolved else (),
        message_source=source,
        args=thrown.args,
        cause=cause,
        file=src.path,
        line=line,
        end_line=end_line,
        col=src.column(line, node.col_offset),
        function=scope.qualname(where),
        context=context.around(src, line, end_line, radius),
        message_expr=src.expression(thrown.message) if thrown.message is not None else None,
    )


def _reraises(node: ast.Raise, handlers: Handlers) -> bool:
    """Bare `raise`, or `raise e` of what the nearest `except ... as e` caught."""
    if node.exc is None:
        return True
    name = node.exc.id if isinstance(node.exc, ast.Name) else None
    return name is not None and any(handler.name == name for handler in handlers)
