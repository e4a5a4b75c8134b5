"""The scope walks: the nodes ast.walk and ast.iter_child_nodes give, in their order."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from errscan.extractors import scope

_ROOT = Path(__file__).parents[2]
# the fixtures, and errscan's own code: some 150 files of every kind of statement
_FIXTURES = sorted([*(_ROOT / "fixtures").rglob("*.py"), *(_ROOT / "errscan").rglob("*.py")])
_TREES = []
for _path in _FIXTURES:
    # the fixtures that parse (some are folders, or files that do not)
    with contextlib.suppress(SyntaxError, ValueError, OSError):
        _TREES.append(pytest.param(ast.parse(_path.read_bytes()), id=str(_path.relative_to(_ROOT))))


def _own_nodes(body: Sequence[ast.stmt]) -> Iterator[ast.AST]:
    """scope.own_nodes as it was written first, over ast.iter_child_nodes."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _own_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """scope.own_statements as it was written first, asking every statement each field."""
    stack: list[ast.stmt] = list(body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, field, ()))
        for clause in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())):
            stack.extend(clause.body)


def _bodies(tree: ast.Module) -> list[list[ast.stmt]]:
    """The module's statements and each function's."""
    functions = (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    return [tree.body, *(function.body for function in functions)]


def test_the_fixtures_give_trees_to_walk() -> None:
    assert len(_TREES) > 80


@pytest.mark.parametrize("tree", _TREES)
def test_walk_gives_what_ast_walk_gives(tree: ast.Module) -> None:
    assert list(map(id, scope.walk(tree))) == list(map(id, ast.walk(tree)))


@pytest.mark.parametrize("tree", _TREES)
def test_own_nodes_gives_what_iter_child_nodes_gives(tree: ast.Module) -> None:
    for body in _bodies(tree):
        assert list(map(id, scope.own_nodes(body))) == list(map(id, _own_nodes(body)))


@pytest.mark.parametrize("tree", _TREES)
def test_own_statements_gives_what_each_field_asked_gives(tree: ast.Module) -> None:
    """The statements in the same order, by kind of statement as by asking each one."""
    for body in _bodies(tree):
        assert list(map(id, scope.own_statements(body))) == list(map(id, _own_statements(body)))


def test_own_statements_reads_every_kind_of_block() -> None:
    """try/except/else/finally, match cases, loops' else, with: what each holds, in the
    order the other clauses come."""
    code = (
        "try:\n a = 1\nexcept E:\n b = 2\nelse:\n c = 3\nfinally:\n d = 4\n"
        "match x:\n case 1:\n  e = 5\nfor i in y:\n f = 6\nelse:\n g = 7\n"
        "with z:\n h = 8\nwhile w:\n i = 9\nclass C:\n j = 10\ndef f():\n k = 11\n"
    )
    body = ast.parse(code).body
    assigned = [s.targets[0] for s in scope.own_statements(body) if isinstance(s, ast.Assign)]
    names = [target.id for target in assigned if isinstance(target, ast.Name)]
    assert names == ["i", "h", "g", "f", "e", "b", "d", "c", "a"]
