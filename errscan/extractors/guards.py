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

from errscan.extractors import scope
from errscan.extractors.source import Source

# An ancestor statement (or clause) of a site, and the field of it that holds the site.
Step = tuple[ast.AST, str]
_T = TypeVar("_T")
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def guards(path: Sequence[Step], node: ast.stmt, src: Source) -> tuple[str, ...]:
    """`path`: the conditional steps (`conditional`) from the function down to the site."""
    out = [g for ancestor, field in kept(path) if (g := _guard(ancestor, field, src))]
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


EARLY = "early"  # the field of an `if COND: return` that stands before the site


def conditional(node: ast.AST, field: str) -> bool:
    """Whether a statement puts a condition on what its `field` holds: the steps a path
    keeps (`try`/`for`/`while` ... `else:` included)."""
    if isinstance(node, (ast.If, ast.Match, ast.match_case)):
        return True
    if field == "orelse":
        return isinstance(node, (ast.While, ast.For, ast.AsyncFor, *scope.TRY))
    return field == "body" and isinstance(
        node, (ast.While, ast.For, ast.AsyncFor, ast.ExceptHandler)
    )


def early_exit(node: ast.stmt) -> bool:
    """`if COND: return` (or raise, continue, break) with no else: the statements after
    it run only when COND is false."""
    return (
        isinstance(node, ast.If)
        and not node.orelse
        and isinstance(node.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
    )


def _guard(ancestor: ast.AST, field: str, src: Source) -> str | None:
    # case: if COND: ... / elif COND: ... (earlier branches negated) / else: / an earlier
    # `if COND: return`
    if isinstance(ancestor, ast.If):
        test = ancestor.test
        return simplified(test, src) if field == "body" else negate(test, src)
    # case: while COND: (`while True` says nothing); while COND: ... else:
    if isinstance(ancestor, ast.While):
        if isinstance(ancestor.test, ast.Constant) and ancestor.test.value is True:
            return None
        if field == "orelse":
            return f"the loop while {src.expression(ancestor.test)} ended without break"
        return simplified(ancestor.test, src)
    # case: for TARGET in ITER: / for ... else:
    if isinstance(ancestor, (ast.For, ast.AsyncFor)):
        loop = f"for {src.expression(ancestor.target)} in {src.expression(ancestor.iter)}"
        return f"the loop {loop} ended without break" if field == "orelse" else loop
    # case: try: ... else:
    if isinstance(ancestor, scope.TRY):
        return "the try block raised nothing"
    # case: match SUBJECT: / case PATTERN [if GUARD]:
    if isinstance(ancestor, ast.Match):
        return f"match {src.expression(ancestor.subject)}"
    if isinstance(ancestor, ast.match_case):
        case = f"case {src.expression(ancestor.pattern)}"
        return case + (f" if {src.expression(ancestor.guard)}" if ancestor.guard else "")
    # case: except TYPES:
    assert isinstance(ancestor, ast.ExceptHandler)
    return f"except {src.expression(ancestor.type)}" if ancestor.type else "except"


# comparisons whose negation is another single comparison, as a reader takes them
_INVERSE: dict[type[ast.cmpop], str] = {
    ast.Is: "is not", ast.IsNot: "is", ast.In: "not in", ast.NotIn: "in",
    ast.Eq: "!=", ast.NotEq: "==",
}  # fmt: skip


def negate(test: ast.expr, src: Source) -> str:
    """`not x`, `not (a and b)`; `not x` negated is `x`, `a is not None` is `a is None`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return simplified(test.operand, src)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _INVERSE:
        left, right = src.expression(test.left), src.expression(test.comparators[0])
        return f"{left} {_INVERSE[type(test.ops[0])]} {right}"
    text = src.expression(test)
    return f"not {text}" if isinstance(test, _ATOMS) else f"not ({text})"


def simplified(test: ast.expr, src: Source) -> str:
    """A condition as written, double negatives undone: `not (a is not None)` reads
    `a is None`, `not not x` reads `x`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return negate(test.operand, src)
    return src.expression(test)


def conditions(path: Sequence[Step], node: ast.stmt) -> list[ast.expr]:
    """The expressions the guards test, for looking into (environment variables...)."""
    found: list[ast.expr] = []
    for ancestor, _field in kept(path):
        if isinstance(ancestor, (ast.If, ast.While)):
            found.append(ancestor.test)
        elif isinstance(ancestor, ast.match_case) and ancestor.guard is not None:
            found.append(ancestor.guard)
        elif isinstance(ancestor, ast.Match):
            found.append(ancestor.subject)
    if isinstance(node, ast.Assert):
        found.append(node.test)
    return found
