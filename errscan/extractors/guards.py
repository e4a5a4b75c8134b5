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

from errscan.extractors.source import Source

# An ancestor statement (or clause) of a site, and the field of it that holds the site.
Step = tuple[ast.AST, str]
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def guards(path: Sequence[Step], node: ast.stmt, src: Source) -> tuple[str, ...]:
    out: list[str] = []
    for ancestor, field in path:
        # case: if COND: ... / elif COND: ... (earlier branches negated) / else:
        if isinstance(ancestor, ast.If):
            test = ancestor.test
            out.append(src.expression(test) if field == "body" else negate(test, src))
        # case: while COND:
        elif isinstance(ancestor, ast.While) and field == "body":
            out.append(src.expression(ancestor.test))
        # case: for TARGET in ITER:
        elif isinstance(ancestor, ast.For | ast.AsyncFor) and field == "body":
            target, items = src.expression(ancestor.target), src.expression(ancestor.iter)
            out.append(f"for {target} in {items}")
        # case: match SUBJECT: / case PATTERN [if GUARD]:
        elif isinstance(ancestor, ast.Match):
            out.append(f"match {src.expression(ancestor.subject)}")
        elif isinstance(ancestor, ast.match_case):
            case = f"case {src.expression(ancestor.pattern)}"
            out.append(case + (f" if {src.expression(ancestor.guard)}" if ancestor.guard else ""))
        # case: except TYPES:
        elif isinstance(ancestor, ast.ExceptHandler) and field == "body":
            out.append(f"except {src.expression(ancestor.type)}" if ancestor.type else "except")
    # case: assert COND: the site is reached when COND is false
    if isinstance(node, ast.Assert):
        out.append(negate(node.test, src))
    return tuple(out)


def negate(test: ast.expr, src: Source) -> str:
    """`not x`, `not (a and b)`; `not x` negated is `x`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return src.expression(test.operand)
    text = src.expression(test)
    return f"not {text}" if isinstance(test, _ATOMS) else f"not ({text})"


def conditions(path: Sequence[Step], node: ast.stmt) -> list[ast.expr]:
    """The expressions the guards test, for looking into (environment variables...)."""
    found: list[ast.expr] = []
    for ancestor, _field in path:
        if isinstance(ancestor, ast.If | ast.While):
            found.append(ancestor.test)
        elif isinstance(ancestor, ast.match_case) and ancestor.guard is not None:
            found.append(ancestor.guard)
        elif isinstance(ancestor, ast.Match):
            found.append(ancestor.subject)
    if isinstance(node, ast.Assert):
        found.append(node.test)
    return found
