"""Raising helpers of one syntax tree: functions that always end in `raise`, so that
each call of one is where its error is raised, with the caller's message.

class Parser:
    def fail(self, msg, lineno=None, exc=TemplateSyntaxError):
        raise exc(msg, lineno, self.name)

    def parse(self):
        self.fail(f"unexpected {token!r}")
    ->  the call reads as `raise TemplateSyntaxError(f"unexpected {token!r}", None, self.name)`

A helper is a function or method (not nested in a function) whose last statement is
`raise Callee(...)` and which holds no `return`, `yield` or `try`. Its parameters in the
raised call are the caller's arguments (or their defaults), and a local assigned once at
the top of its body before the raise is its value; a helper whose raise needs anything
else of its own (a local assigned twice, `*args`) is not one.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Sequence
from typing import cast

from errscan.extractors import scope
from errscan.extractors.source import OPAQUE
from errscan.frozen import frozen

_MAX_BASES = 8  # how far up a file's class bases a method is looked for


@frozen
class Helper:
    params: tuple[str, ...]  # positional, in order (self or cls first for a method)
    keyword_only: tuple[str, ...]
    defaults: dict[str, ast.expr]
    raised: ast.Call  # the raised call, its locals put in; parameters still names
    method: bool  # a method (called as self.NAME / cls.NAME) rather than a function


@frozen
class Helpers:
    """A file's raising helpers by qualified name, and its classes' bases by name."""

    found: dict[str, Helper]
    bases: dict[str, tuple[str, ...]]

    def for_call(self, func: ast.expr, cls: str | None) -> Helper | None:
        """The helper a call's callee is: NAME(...) of a module function, or
        self.NAME(...) / cls.NAME(...) of a method of the enclosing class or a base of it
        in this file."""
        if isinstance(func, ast.Name):
            found = self.found.get(func.id)
            return found if found is not None and not found.method else None
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
            and cls is not None
        ):
            return None
        todo: list[str] = [cls]
        seen: set[str] = set()
        while todo and len(seen) < _MAX_BASES:
            owner = todo.pop(0)
            if owner in seen:
                continue
            seen.add(owner)
            found = self.found.get(f"{owner}.{func.attr}")
            if found is not None:
                return found if found.method else None
            todo.extend(self.bases.get(owner, ()))
        return None


def find(tree: ast.Module) -> Helpers:
    found: dict[str, Helper] = {}
    bases: dict[str, tuple[str, ...]] = {}
    for node, qualname, in_class in _definitions(tree.body, ""):
        if isinstance(node, ast.ClassDef):
            bases[qualname] = tuple(b.id for b in node.bases if isinstance(b, ast.Name))
            continue
        helper = _helper(node, in_class)
        if helper is not None:
            found[qualname] = helper
    return Helpers(found, bases)


def _definitions(
    body: Sequence[ast.stmt], prefix: str, in_class: bool = False
) -> Iterator[tuple[ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef, str, bool]]:
    """Classes, and functions of the module or of a class, not those nested in a function;
    with their qualified names (a class's by its bare name too, for bases)."""
    for node in body:
        if isinstance(node, ast.ClassDef):
            qualname = f"{prefix}{node.name}"
            yield node, qualname, in_class
            yield from _definitions(node.body, f"{qualname}.", True)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, f"{prefix}{node.name}", in_class
        elif isinstance(node, (ast.If, *scope.TRY)):  # `if TYPE_CHECKING:`, `try: import`
            held = cast(ast.If, node)  # a try's `body` and `orelse` are an if's
            for block in (held.body, held.orelse):
                yield from _definitions(block, prefix, in_class)


def _helper(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> Helper | None:
    if not node.body or isinstance(node, ast.AsyncFunctionDef):
        return None
    last = node.body[-1]
    if not isinstance(last, ast.Raise) or not isinstance(last.exc, ast.Call):
        return None
    args = node.args
    if args.vararg is not None or args.kwarg is not None or _leaves_early(node.body):
        return None
    if method and any(
        isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod", "property")
        for d in node.decorator_list
    ):
        return None
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    defaults = dict(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d)
    assigned = _assignments(node.body[:-1])
    values = {name: found[0] for name, found in assigned.items() if len(found) == 1 and found[0]}
    raised = _Inline(values, set(assigned) - set(values)).visit(copy.deepcopy(last.exc))
    if not isinstance(raised, ast.Call):
        return None
    return Helper(
        tuple(positional), tuple(a.arg for a in args.kwonlyargs), defaults, raised, method
    )


def _leaves_early(body: Sequence[ast.stmt]) -> bool:
    """Whether a function body can end other than by its last raise: a return, a yield,
    or a try or with (whose handler or context manager may swallow it)."""
    return any(isinstance(node, _LEAVES_EARLY) for node in scope.own_nodes(body))


_LEAVES_EARLY = (ast.Return, ast.Yield, ast.YieldFrom, *scope.TRY, ast.With)


def _assignments(body: Sequence[ast.stmt]) -> dict[str, list[ast.expr | None]]:
    """Each name a body assigns, with the values: the value of a plain `NAME = value`
    at the top of the body, None for any other assignment (nested, augmented, a loop)."""
    found: dict[str, list[ast.expr | None]] = {}
    for statement in body:
        top = (
            statement.value
            if isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            else None
        )
        for node in scope.walk(statement):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
                targets = [node.target]
            elif isinstance(node, ast.comprehension):
                continue  # its names stay inside it
            for target in targets:
                for name in scope.walk(target):
                    if isinstance(name, ast.Name):
                        value = top if node is statement else None
                        found.setdefault(name.id, []).append(value)
    return found


class _Inline(ast.NodeTransformer):
    """Puts into a helper's raised call the values of its names assigned once at the
    top of its body (`msg = f"bad: {msg}"` reads the parameter in its value); a name
    assigned otherwise (twice, in a branch, in a loop) becomes one no lookup resolves,
    so it stays a placeholder rather than take a caller's value of the same name."""

    def __init__(self, values: dict[str, ast.expr], opaque: set[str]) -> None:
        self.values = values
        self.opaque = opaque
        self.active: set[str] = set()

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.opaque and node.id not in self.active:
            return ast.copy_location(ast.Name(id=OPAQUE + node.id, ctx=ast.Load()), node)
        value = self.values.get(node.id)
        if value is None or node.id in self.active:
            return node  # a parameter, or a name of the module
        self.active.add(node.id)
        try:
            return self.visit(copy.deepcopy(value))  # type: ignore[no-any-return]
        finally:
            self.active.discard(node.id)


def called(helper: Helper, call: ast.Call) -> ast.Call | None:
    """The helper's raised call as this call of it raises it: its parameters replaced by
    the call's arguments or their defaults; None where the call does not fit."""
    params = helper.params[1:] if helper.method else helper.params
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(params):
        return None
    bound: dict[str, ast.expr] = dict(zip(params, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.arg is None:
            return None  # **kwargs
        if keyword.arg not in (*params, *helper.keyword_only) or keyword.arg in bound:
            return None
        bound[keyword.arg] = keyword.value
    for name in (*params, *helper.keyword_only):
        if name not in bound:
            if name not in helper.defaults:
                return None
            bound[name] = helper.defaults[name]
    skip = {helper.params[0]} if helper.method and helper.params else set()
    out = _Bind(bound, skip).visit(copy.deepcopy(helper.raised))
    return out if isinstance(out, ast.Call) else None


class _Bind(ast.NodeTransformer):
    def __init__(self, bound: dict[str, ast.expr], skip: set[str]) -> None:
        self.bound = bound
        self.skip = skip

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.skip or node.id not in self.bound:
            return node
        return self.bound[node.id]
