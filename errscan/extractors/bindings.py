"""What a name holds where a message uses it: the assignments that reach a statement, and
module- and class-level constants.

    msg = "bad value"
    if strict:
        msg += f" {value!r}"
    raise ValueError(msg)
        ->  reaching(body, raise_stmt, "msg")
            == [("bad value",), ("bad value", f" {value!r}")]
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Sequence
from typing import cast

from errscan.extractors import scope

# The assigned value, then each `+=` operand after it; None: bound some way we cannot follow.
Chain = tuple[ast.expr, ...]
States = list[Chain | None]
_MAX_CANDIDATES = 8


class Prefixes:
    """For one file: the states of a name after each statement of a function body,
    computed once and shared by every site in that body (a module of thousands of
    raises would otherwise walk its body once per raise)."""

    def __init__(self) -> None:
        self._after: dict[tuple[int, str], list[States]] = {}
        self._starts: dict[int, list[tuple[int, int]]] = {}

    def holder(self, body: Sequence[ast.stmt], target: ast.stmt) -> int | None:
        """The index of the statement of `body` that is or holds `target`."""
        starts = self._starts.get(id(body))
        if starts is None:
            starts = self._starts[id(body)] = [(s.lineno, s.col_offset) for s in body]
        index = bisect.bisect_right(starts, (target.lineno, target.col_offset)) - 1
        if index >= 0 and (body[index] is target or _contains(body[index], target)):
            return index
        return None

    def before(self, body: Sequence[ast.stmt], index: int, name: str) -> States:
        """The states just before body[index], for a walk from the body's start."""
        after = self._after.setdefault((id(body), name), [])
        flow = _Flow(_NOWHERE, name)
        while len(after) < index:
            previous = after[-1] if after else []
            after.append(flow._after(body[len(after)], previous))
        return after[index - 1] if index else []


_NOWHERE = ast.Pass(lineno=0, col_offset=0, end_lineno=0, end_col_offset=0)


def reaching(
    body: Sequence[ast.stmt], target: ast.stmt, name: str, prefixes: Prefixes | None = None
) -> list[Chain] | None:
    """The value chains of `name` that may reach `target`, in source order of their first
    assignment; None where none does or one of them cannot be followed."""
    flow = _Flow(target, name)
    index = prefixes.holder(body, target) if prefixes is not None else None
    if prefixes is None or index is None:
        states, found = flow.block(body, [])
    else:
        start = prefixes.before(body, index, name)
        holder = body[index]
        states, found = (start, True) if holder is target else flow._into(holder, start)
    if not found or not states or any(state is None for state in states):
        return None
    return [state for state in states if state is not None]


def _contains(outer: ast.stmt, inner: ast.stmt) -> bool:
    start = (outer.lineno, outer.col_offset)
    end = (outer.end_lineno or outer.lineno, outer.end_col_offset or 0)
    return (
        start <= (inner.lineno, inner.col_offset)
        and (
            inner.end_lineno or inner.lineno,
            inner.end_col_offset or 0,
        )
        <= end
    )


def _union(*groups: States) -> States:
    out: States = []
    seen: set[tuple[int, ...] | None] = set()
    for group in groups:
        for state in group:
            key = None if state is None else tuple(id(node) for node in state)
            if key not in seen:
                seen.add(key)
                out.append(state)
    return out[:_MAX_CANDIDATES] if len(out) > _MAX_CANDIDATES else out


class _Flow:
    """A forward walk over statements that tracks the possible values of one name."""

    def __init__(self, target: ast.stmt, name: str) -> None:
        self.target = target
        self.name = name

    def block(self, stmts: Sequence[ast.stmt], states: States) -> tuple[States, bool]:
        for stmt in stmts:
            if stmt is self.target:
                return states, True
            if _contains(stmt, self.target):
                return self._into(stmt, states)
            states = self._after(stmt, states)
        return states, False

    def _into(self, stmt: ast.stmt, states: States) -> tuple[States, bool]:
        """The states at the target, which lies inside compound statement `stmt`."""
        if isinstance(stmt, scope.TRY):
            stmt = cast(ast.Try, stmt)
            done, found = self.block(stmt.body, states)
            if found:
                return done, True
            for handler in stmt.handlers:
                if _contains(handler, self.target):  # type: ignore[arg-type]
                    return self.block(handler.body, _union(states, done))
            if any(_contains(s, self.target) for s in stmt.orelse):
                return self.block(stmt.orelse, done)
            return self.block(stmt.finalbody, _union(states, done))
        if isinstance(stmt, ast.Match):
            for case in stmt.cases:
                if any(_contains(s, self.target) or s is self.target for s in case.body):
                    return self.block(case.body, states)
            return states, False
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            # a later iteration may see what an earlier one assigned
            looped, _ = self.block(stmt.body, self._bind_target(stmt, states))
            states = _union(states, looped)
        for field in ("body", "orelse"):
            children: list[ast.stmt] = getattr(stmt, field, [])
            if any(child is self.target or _contains(child, self.target) for child in children):
                if isinstance(stmt, (ast.For, ast.AsyncFor)) and field == "body":
                    states = self._bind_target(stmt, states)
                return self.block(children, states)
        return states, False

    def _bind_target(self, stmt: ast.stmt, states: States) -> States:
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and self._binds(stmt.target):
            return [None]
        return states

    def _binds(self, target: ast.expr) -> bool:
        """Whether assigning to `target` binds the name (`exc.arg_name = x` does not)."""
        return any(
            isinstance(n, ast.Name)
            and n.id == self.name
            and not isinstance(getattr(n, "ctx", None), ast.Load)
            for n in scope.walk(target)
        )

    def _after(self, stmt: ast.stmt, states: States) -> States:
        """The states after `stmt`, which does not hold the target."""
        name = self.name
        # case: name = value (alone, or among chained targets)
        if isinstance(stmt, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                return [(stmt.value,)]
            return [None] if any(self._binds(t) for t in stmt.targets) else states
        # case: name: str = value
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.target.id == name:
                return [(stmt.value,)] if stmt.value is not None else states
            return states
        # case: name += value
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            if stmt.target.id != name:
                return states
            if not isinstance(stmt.op, ast.Add):
                return [None]
            return [None if s is None else (*s, stmt.value) for s in states] or [None]
        # case: if / else
        if isinstance(stmt, ast.If):
            body, _ = self.block(stmt.body, states)
            orelse, _ = self.block(stmt.orelse, states)
            return _union(body, orelse)
        # case: loops, which may run no time or many
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            body, _ = self.block(stmt.body, self._bind_target(stmt, states))
            orelse, _ = self.block(stmt.orelse, _union(states, body))
            return _union(states, body, orelse)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            if any(item.optional_vars and self._binds(item.optional_vars) for item in stmt.items):
                return [None]
            return self.block(stmt.body, states)[0]
        if isinstance(stmt, scope.TRY):
            stmt = cast(ast.Try, stmt)
            body, _ = self.block(stmt.body, states)
            handlers = [self.block(h.body, _union(states, body))[0] for h in stmt.handlers]
            orelse, _ = self.block(stmt.orelse, body)
            final, _ = self.block(stmt.finalbody, _union(orelse, *handlers))
            return final
        if isinstance(stmt, ast.Match):
            cases = [self.block(case.body, states)[0] for case in stmt.cases]
            return _union(states, *cases)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [None] if stmt.name == name else states
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            bound = {(alias.asname or alias.name).split(".")[0] for alias in stmt.names}
            return [None] if name in bound else states
        if isinstance(stmt, ast.Delete):
            return [] if any(self._binds(t) for t in stmt.targets) else states
        if isinstance(stmt, (ast.Global, ast.Nonlocal)):
            return [None] if name in stmt.names else states
        return states


class Constants:
    """String-valued names a file defines once: module constants and class attributes."""

    def __init__(self, tree: ast.Module) -> None:
        self.module = _single_assignments(tree.body)
        self.classes: dict[str, dict[str, ast.expr]] = {}
        self._collect_classes(tree.body, ())
        self._tree = tree
        self._functions: dict[str, ast.FunctionDef] | None = None
        self._nested: list[tuple[int, int, dict[str, ast.FunctionDef]]] | None = None

    @property
    def functions(self) -> dict[str, ast.FunctionDef]:
        """The module's text functions (text_functions), by name: found when first asked."""
        if self._functions is None:
            self._functions = text_functions(self._tree.body)
        return self._functions

    def nested_function(self, name: str, line: int) -> ast.FunctionDef | None:
        """The text function `name` that a function around `line` defines in its body
        (the innermost such function), or None. The functions defining some are found
        on the first call, in one walk of the tree."""
        if self._nested is None:
            self._nested = []
            for node in ast.walk(self._tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found = text_functions(node.body)
                    if found:
                        end = node.end_lineno or node.lineno
                        self._nested.append((node.lineno, end, found))
            self._nested.sort(key=lambda entry: entry[0])
        around = [f for start, end, f in self._nested if start <= line <= end and name in f]
        return around[-1][name] if around else None  # the last to start: the innermost

    def _collect_classes(self, body: Sequence[ast.stmt], outer: tuple[str, ...]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.ClassDef):
                qualname = (*outer, stmt.name)
                assigned = _single_assignments(stmt.body)
                if generates_init(stmt):
                    # `kind: str = "file"` of a dataclass is a field's default, which
                    # the call may replace: not a constant of its instances
                    fields = {
                        s.target.id
                        for s in stmt.body
                        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                    }
                    assigned = {k: v for k, v in assigned.items() if k not in fields}
                self.classes[".".join(qualname)] = assigned
                self._collect_classes(stmt.body, qualname)

    def attribute(self, class_qualname: str, attr: str) -> ast.expr | None:
        return self.classes.get(class_qualname, {}).get(attr)


def _single_assignments(body: Sequence[ast.stmt]) -> dict[str, ast.expr]:
    """Names assigned exactly once directly in `body`, with their values."""
    values: dict[str, ast.expr] = {}
    counts: dict[str, int] = {}
    for stmt in body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        elif isinstance(stmt, ast.AugAssign):
            targets = [stmt.target]
        for target in targets:
            names = [target] if isinstance(target, ast.Name) else scope.walk(target)
            for node in names:
                if isinstance(node, ast.Name):
                    counts[node.id] = counts.get(node.id, 0) + 1
                    if value is not None and node is target:
                        values[node.id] = value
    return {name: value for name, value in values.items() if counts[name] == 1}


def text_functions(body: Sequence[ast.stmt]) -> dict[str, ast.FunctionDef]:
    """The functions `body` defines, once, that only return a text made of their
    parameters (`def _error(msg): return f"{msg} at index {i}: {path}"`): no decorator,
    no `*args` nor `**kwargs`, a body of one `return` (a docstring aside), and the name
    bound by nothing else in `body`."""
    found: dict[str, ast.FunctionDef] = {}
    bound: dict[str, int] = {}
    for stmt in body:
        names = defined_names(stmt)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [n.id for t in targets for n in scope.walk(t) if isinstance(n, ast.Name)]
        for name in names:
            bound[name] = bound.get(name, 0) + 1
        if isinstance(stmt, ast.FunctionDef) and _returns_only(stmt):
            found[stmt.name] = stmt
    return {name: stmt for name, stmt in found.items() if bound[name] == 1}


def defined_names(stmt: ast.stmt) -> list[str]:
    """The names a statement binds by a def or class, or an import."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    return []


def _returns_only(function: ast.FunctionDef) -> bool:
    args = function.args
    if function.decorator_list or args.vararg is not None or args.kwarg is not None:
        return False
    body = function.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]  # its docstring
    return len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None


# what makes a class's __init__ of its annotated fields: dataclasses, attrs, and their kin
_FIELD_CLASSES = frozenset(
    {"dataclass", "dataclasses.dataclass", "attr.s", "attr.attrs", "attr.define",
     "attr.frozen", "attr.mutable", "attrs.define", "attrs.frozen", "attrs.mutable",
     "define", "frozen", "mutable", "pydantic.dataclasses.dataclass"}
)  # fmt: skip


def generates_init(cls: ast.ClassDef) -> bool:
    """Whether a decorator of `cls` makes its __init__ of its fields (`@dataclass`,
    `@attrs.frozen`, `@attr.s(auto_attribs=True)`): an annotated class attribute is then
    a field, whose value the call may give."""
    for decorator in cls.decorator_list:
        node = decorator.func if isinstance(decorator, ast.Call) else decorator
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(node.id)
            if ".".join(reversed(parts)) in _FIELD_CLASSES:
                return True
    return False
