"""Enclosing scope of a statement, named as Python's __qualname__ names it.

class Engine:
    def __init__(self): raise X     ->  "Engine.__init__"
def outer():
    def inner(): raise X            ->  "outer.<locals>.inner"
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Callable, Iterator, Sequence

MODULE = "<module>"
Scope = tuple[str, ...]
# try and, from Python 3.11, try/except*: the same fields, read alike everywhere (3.10
# reads except* rewritten as except: analyzer/downlevel.py)
TRY: tuple[type[ast.stmt], ...] = tuple(
    getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name)
)


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
        if type(node) in _NOT_OWN:
            continue
        yield node
        _add_children(node, stack.append, stack.extend)


_NOT_OWN = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk, some twice as fast: `node` and every node under it, in ast.walk's order
    (breadth first, each node's children as ast.iter_child_nodes gives them)."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        _add_children(node, todo.append, todo.extend)
        yield node


def _add_children(
    node: ast.AST, add: Callable[[ast.AST], None], add_all: Callable[[list[ast.AST]], None]
) -> None:
    """ast.iter_child_nodes without its generator: the same children, in the same order."""
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            add(value)
        elif isinstance(value, list):
            add_all([item for item in value if isinstance(item, ast.AST)])


# statement lists of a compound statement (those of handlers and match cases apart)
_BLOCKS = ("body", "orelse", "finalbody")
_DEFINITIONS = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _blocks(kind: type[ast.AST]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A kind of statement's statement lists, and its lists of clauses (handlers, cases)."""
    fields = kind._fields
    return (
        tuple(name for name in _BLOCKS if name in fields),
        tuple(name for name in ("handlers", "cases") if name in fields),
    )


# by kind (a parsed tree holds no subclass of a node class): most statements hold none
_STATEMENT_BLOCKS = {kind: _blocks(kind) for kind in ast.stmt.__subclasses__()}


def own_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a function's body that run as its own code, at any depth of
    blocks (if, for, try and its handlers, with, match), nested definitions left out:
    own_nodes without the expressions, for what only statements can be."""
    stack: list[ast.stmt] = list(body)
    while stack:
        stmt = stack.pop()
        kind = type(stmt)
        if kind in _DEFINITIONS:
            continue
        yield stmt
        fields, clauses = _STATEMENT_BLOCKS.get(kind) or _blocks(kind)
        for field in fields:
            stack.extend(getattr(stmt, field))
        for field in clauses:
            for clause in getattr(stmt, field):
                stack.extend(clause.body)


def rebinds(node: ast.AST, name: str) -> bool:
    """Whether `node` binds `name` other than by a plain `=`: `+=`, an annotated
    assignment, `:=`, a for loop's or a with statement's target (async ones too)."""
    return name in rebound(node)


# the nodes that bind names other than by a plain `=`
_REBINDING = frozenset(
    (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)
)


def rebound(node: ast.AST) -> set[str]:
    """The names `node` binds other than by a plain `=` (see rebinds)."""
    if type(node) not in _REBINDING:  # most statements: asked of every one a walk meets
        return set()
    targets: list[ast.expr] = []
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars]
    return {t.id for n in targets for t in walk(n) if isinstance(t, ast.Name)}
