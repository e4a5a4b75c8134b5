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


def test_the_fixtures_give_trees_to_walk() -> None:
    assert len(_TREES) > 80


@pytest.mark.parametrize("tree", _TREES)
def test_walk_gives_what_ast_walk_gives(tree: ast.Module) -> None:
    assert list(map(id, scope.walk(tree))) == list(map(id, ast.walk(tree)))


@pytest.mark.parametrize("tree", _TREES)
def test_own_nodes_gives_what_iter_child_nodes_gives(tree: ast.Module) -> None:
    bodies = [tree.body] + [
        node.body
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    for body in bodies:
        assert list(map(id, scope.own_nodes(body))) == list(map(id, _own_nodes(body)))
