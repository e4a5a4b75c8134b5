"""Source lines and segments: where lines end, and the comparison that decides whether a
segment is the node's text."""

from __future__ import annotations

import ast
import itertools
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from errscan.extractors import source
from errscan.extractors.source import Source, _same_node, canonical

_EXPRESSIONS = [
    "1", "True", "1.0", "-0.0", "0.0", "'a'", "b'a'", "u'a'", "None", "x", "x.y", "x[y]",
    "f(x)", "f(x, y=1)", "f(*a, **k)", "a + b", "a - b", "(a, b)", "[a, b]", "{a: b}",
    "{a, b}", "lambda: x", "x if y else z", "f'{x!r:>{w}}'", "not x", "a < b < c", "...",
    "float('nan')", "[x for x in y if x]", "a.b.c", "a[1:2]", "a[1:2, ::3]", "(yield)",
]  # fmt: skip


@pytest.mark.parametrize(("left", "right"), list(itertools.product(_EXPRESSIONS, repeat=2)))
def test_same_node_says_what_comparing_dumps_says(left: str, right: str) -> None:
    a = ast.parse(left, mode="eval").body
    b = ast.parse(f"(\n  {right})", mode="eval").body  # other positions, same tree
    assert _same_node(a, b) is (ast.dump(a) == ast.dump(b))


@settings(max_examples=300)
@given(st.text(alphabet="a \r\n\f\v\x1c\u2028", max_size=30))
def test_lines_end_where_python_ends_them(text: str) -> None:
    """\\r\\n, \\r and \\n end a line, and nothing else does, with a \\r in the text or not."""
    lines = re.split(r"\r\n|\r|\n", text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    assert Source(text).lines == lines


def test_unparse_writes_what_ast_unparse_writes() -> None:
    """Names and dotted names the short way, the rest by canonical (ast.unparse where
    Python is 3.11 or later): the same text."""
    code = "a.b.c(x)[0].d\nf().g\n(1).real\nself._src.parse_error\nx[1].y.z\nlambda: q.r\n"
    tree = ast.parse(code)
    nodes = [node for node in ast.walk(tree) if isinstance(node, ast.expr)]
    assert len(nodes) > 20
    for node in nodes:
        assert source.unparse(node) == canonical(node)


@pytest.mark.parametrize(
    ("code", "written"),
    [
        ("[a for x, y in z]", "[a for x, y in z]"),
        ("{k: v for (k, v) in d.items() if k}", "{k: v for k, v in d.items() if k}"),
        ("f(a for x, (y, z) in w)", "f((a for x, (y, z) in w))"),
        ("lambda: (yield)", "lambda: (yield)"),
        ("lambda x, *a: x", "lambda x, *a: x"),
        ("(a, b)[0] + (1,)", "(a, b)[0] + (1,)"),
        ("x[a, b]", "x[a, b]"),
        ("()", "()"),
        ("f'{x!r:>{w}} {[a for a, b in c]}'", "f'{x!r:>{w}} {[a for a, b in c]}'"),
        ("lambda **k: k", "lambda **k: k"),
    ],
)
def test_an_expression_is_written_as_python_3_11_to_3_13_write_it(code: str, written: str) -> None:
    """canonical: the same on every Python errscan runs on (3.10's own ast.unparse puts
    a comprehension's tuple target in parentheses, and writes `lambda : x`)."""
    assert canonical(ast.parse(code, mode="eval").body) == written


@pytest.mark.skipif(sys.version_info < (3, 11), reason="compares with 3.11's own unparse")
def test_the_canonical_writer_is_ast_unparse_where_python_is_3_11_or_later() -> None:
    """_Canonical (what 3.10 uses) writes every expression of errscan's own code as
    this Python's ast.unparse does: its three methods are 3.11's."""
    count = 0
    for path in sorted(Path(source.__file__).parent.parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.expr) and not isinstance(node, (ast.Name, ast.Constant)):
                assert source._Canonical().visit(node) == ast.unparse(node)
                count += 1
    assert count > 10_000
