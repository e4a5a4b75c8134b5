"""Enclosing scope of a statement, named as Python's __qualname__ names it.

class Engine:
    def __init__(self): raise X     ->  "Engine.__init__"
def outer():
    def inner(): raise X            ->  "outer.<locals>.inner"
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

MODULE = "<module>"
Scope = tuple[str, ...]


def enter(scope: Scope, node: ast.AST) -> Scope:
    """The scope inside `node`, given the scope around it."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return (*scope, node.name, "<locals>")
    if isinstance(node, ast.ClassDef):
        return (*scope, node.name)
    return scope


def qualname(scope: Scope) -> str:
    """The qualified name of the innermost function or class, or `<module>`."""
    names = scope[:-1] if scope and scope[-1] == "<locals>" else scope
    return ".".join(names) if names else MODULE


def own_nodes(body: Sequence[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a function's body that run as its own code: those of nested
    functions, classes and lambdas left out (an explicit stack, so no recursion)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def rebinds(node: ast.AST, name: str) -> bool:
    """Whether `node` binds `name` other than by a plain `=`: `+=`, an annotated
    assignment, `:=`, a for loop's or a with statement's target."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.NamedExpr | ast.For):
        targets = [node.target]
    elif isinstance(node, ast.With):
        targets = [item.optional_vars for item in node.items if item.optional_vars]
    return any(isinstance(t, ast.Name) and t.id == name for n in targets for t in ast.walk(n))
