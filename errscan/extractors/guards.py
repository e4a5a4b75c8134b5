"""Conditions on the path to a site inside its function, outermost first, as source text.

def load(path):
    if not path:
        raise ValueError("no path")        ->  ("not path",)
    for part in path.parts:
        if part == "..":
            raise ValueError("no ..")      ->  ("for part in path.parts", "part == '..'")
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TypeVar

from errscan.extractors.source import Source

# An ancestor statement (or clause) of a site, and the field of it that holds the site.
Step = tuple[ast.AST, str]
_T = TypeVar("_T")
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def guards(path: Sequence[Step], node: ast.stmt, src: Source) -> tuple[str, ...]:
    """`path`: the conditional steps (`conditional`) from the function down to the site."""
    out = [_guard(ancestor, field, src) for ancestor, field in kept(path)]
    # case: assert COND: the site is reached when COND is false
    if isinstance(node, ast.Assert):
        out.append(negate(node.test, src))
    if len(path) > MAX_GUARDS:
        half = MAX_GUARDS // 2
        out.insert(half, f"… ({len(path) - 2 * half} more conditions)")
    return tuple(g if len(g) <= MAX_GUARD_CHARS else g[:MAX_GUARD_CHARS] + " …" for g in out)


MAX_GUARDS = 32  # conditions kept of one site: the outermost and the innermost half each
MAX_GUARD_CHARS = 500  # characters kept of one condition


def kept(steps: Sequence[_T]) -> Sequence[_T]:
    """The outermost and innermost MAX_GUARDS // 2 of the steps: 900 `elif` branches once
    made 15 MB of guards, and reading each branch's test for each site was quadratic."""
    if len(steps) <= MAX_GUARDS:
        return steps
    half = MAX_GUARDS // 2
    return [*steps[:half], *steps[-half:]]


def conditional(node: ast.AST, field: str) -> bool:
    """Whether a statement puts a condition on what its `field` holds: the steps a path
    keeps."""
    if isinstance(node, ast.If | ast.Match | ast.match_case):
        return True
    return field == "body" and isinstance(
        node, ast.While | ast.For | ast.AsyncFor | ast.ExceptHandler
    )


def _guard(ancestor: ast.AST, field: str, src: Source) -> str:
    # case: if COND: ... / elif COND: ... (earlier branches negated) / else:
    if isinstance(ancestor, ast.If):
        test = ancestor.test
        return src.expression(test) if field == "body" else negate(test, src)
    # case: while COND:
    if isinstance(ancestor, ast.While):
        return src.expression(ancestor.test)
    # case: for TARGET in ITER:
    if isinstance(ancestor, ast.For | ast.AsyncFor):
        return f"for {src.expression(ancestor.target)} in {src.expression(ancestor.iter)}"
    # case: match SUBJECT: / case PATTERN [if GUARD]:
    if isinstance(ancestor, ast.Match):
        return f"match {src.expression(ancestor.subject)}"
    if isinstance(ancestor, ast.match_case):
        case = f"case {src.expression(ancestor.pattern)}"
        return case + (f" if {src.expression(ancestor.guard)}" if ancestor.guard else "")
    # case: except TYPES:
    assert isinstance(ancestor, ast.ExceptHandler)
    return f"except {src.expression(ancestor.type)}" if ancestor.type else "except"


def negate(test: ast.expr, src: Source) -> str:
    """`not x`, `not (a and b)`; `not x` negated is `x`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return src.expression(test.operand)
    text = src.expression(test)
    return f"not {text}" if isinstance(test, _ATOMS) else f"not ({text})"


def conditions(path: Sequence[Step], node: ast.stmt) -> list[ast.expr]:
    """The expressions the guards test, for looking into (environment variables...)."""
    found: list[ast.expr] = []
    for ancestor, _field in kept(path):
        if isinstance(ancestor, ast.If | ast.While):
            found.append(ancestor.test)
        elif isinstance(ancestor, ast.match_case) and ancestor.guard is not None:
            found.append(ancestor.guard)
        elif isinstance(ancestor, ast.Match):
            found.append(ancestor.subject)
    if isinstance(node, ast.Assert):
        found.append(node.test)
    return found
