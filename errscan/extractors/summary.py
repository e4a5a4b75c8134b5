"""What other files need of one file: its imports, its classes, and its exception factories.

from .errors import Base as B       ->  Import("B", 1, "errors", "Base")
class NotFound(B):
    '''No such thing.'''
    def __init__(self, kind):
        super().__init__(f"{kind} not found")
    ->  ClassInfo("NotFound", ("B",), "No such thing.", ("kind",), <template {kind} not found>)
def make_error(msg): return ConfigError(msg)   ->  ("make_error", "ConfigError")
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import cast

from errscan.builtin_exceptions import BUILTIN_EXCEPTIONS
from errscan.extractors import bindings, message, scope
from errscan.extractors.exception import cast_value, looks_like_class_name
from errscan.extractors.source import Source, unparse
from errscan.models import (
    ClassInfo,
    FactoryCall,
    FactoryTable,
    FileSummary,
    Import,
    MessagePart,
)


def summarize(
    tree: ast.Module,
    src: Source,
    constants: bindings.Constants,
    factories: Sequence[tuple[str, str]],
    imported: Sequence[Import] | None = None,
    local_imports: Sequence[ast.stmt] | None = None,
    partial: bool = False,
) -> FileSummary:
    """`factories`, `local_imports`: what the sites walk found (sites.extract), so no
    second walk is made; `imported`: the module's imports, where read already (imports).

    `partial`: what a class's __init__ and __str__ make (ClassInfo's fields but its
    name, bases, docstring and constants) is read only where the class may be an
    exception's, as its file tells (exception_like_classes), and the calls of the
    factories that build what is named as an exception (_may_be_raised), or `cls` in a
    method of such a class: the rest are
    `deferred`, the summary `partial`. Most files' classes (models, views,
    forms) never need them; what linking needs of the rest it reads by summarizing the
    file whole (index.Index._completed).
    """
    defs = _class_defs(tree.body)
    detailed = _exception_like(defs) if partial else None
    classes = tuple(_classes(defs, src, constants, detailed))
    called = [
        name
        for name, built in factories
        if detailed is None
        or _may_be_raised(built)
        # a classmethod's `return cls(...)` of a class that may be an exception's
        or (built == "cls" and name.rpartition(".")[0] in detailed)
    ]
    return FileSummary(
        imports=tuple(_with_local_imports(tree, imported, local_imports)),
        classes=classes,
        factories=tuple(factories),
        factory_calls=tuple(_factory_calls(tree, called, src)),
        aliases=tuple(_aliases(tree)),
        partial=len(called) < len(factories) or any(c.deferred for c in classes),
        tables=tuple(_tables(tree, factories)),
    )


def _tables(tree: ast.Module, factories: Sequence[tuple[str, str]]) -> Iterator[FactoryTable]:
    """The factories that build a class they look up by one of their parameters in a
    dict of the module: `error_class, default_message = XPATH_ERROR_CODES[code]` (or
    `error_class = TABLE[code]`, `TABLE[code][0]`), then `return error_class(...)`; each
    with that parameter and, for every entry of the dict keyed by a string, the class
    as written where the entry (or its item looked up) is a name."""
    wanted = {name: built for name, built in factories if built.isidentifier()}
    # the module's dicts first: most modules have none, and so no table to look up
    dicts = _module_dicts(tree.body) if wanted else {}
    if not dicts:
        return
    for qualname, function in _functions(tree.body, set(wanted)):
        lookup = _table_lookup(function, wanted[qualname], dicts.keys())
        if lookup is None:
            continue
        table, param, item = lookup
        entries = _table_entries(dicts[table], item)
        if entries:
            yield qualname, param, entries


_MAX_TABLE = 4096  # entries of a table kept: more are no table of error classes


def _table_lookup(
    function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, tables: Collection[str]
) -> tuple[str, str, int | None] | None:
    """(table, parameter, item) where the function binds `name` by `name = TABLE[param]`
    (item None), `name = TABLE[param][i]` or `name, ... = TABLE[param]` (item i), TABLE
    one of `tables`, `param` one of its parameters, and binds it otherwise only where
    that lookup fails (in an `except KeyError:` of the `try` it is in); else None."""
    given = function.args
    params = {a.arg for a in (*given.posonlyargs, *given.args, *given.kwonlyargs)}
    if name in params or not any(
        # the statements alone first: most factories look up none of the tables
        _looks_up(stmt, name, params, tables)
        for stmt in scope.own_statements(function.body)
    ):
        return None
    found: list[tuple[ast.Assign, tuple[str, str, int | None] | None]] = []
    for node in scope.own_nodes(function.body):
        if name in scope.rebound(node):
            return None
        if isinstance(node, ast.Assign):
            for target in node.targets:
                item = _bound_item(target, name)
                if item == _BOUND_OTHERWISE:
                    return None
                if item != _NOT_BOUND:
                    found.append((node, _looked_up_by(node.value, item, params)))
    lookups = [(node, lookup) for node, lookup in found if lookup is not None]
    if len(lookups) != 1 or lookups[0][1][0] not in tables:
        return None
    node, lookup = lookups[0]
    if len(found) > 1:
        failing = _where_missing(function.body, node)
        if not all(other is node or other in failing for other, _ in found):
            return None
    return lookup


def _looks_up(stmt: ast.stmt, name: str, params: set[str], tables: Collection[str]) -> bool:
    """Whether `stmt` binds `name` by a lookup (_looked_up_by) in one of `tables`."""
    if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Subscript)):
        return False
    for target in stmt.targets:
        item = _bound_item(target, name)
        if item != _NOT_BOUND and item != _BOUND_OTHERWISE:
            found = _looked_up_by(stmt.value, item, params)
            if found is not None and found[0] in tables:
                return True
    return False


def _looked_up_by(
    value: ast.expr, item: int | None, params: set[str]
) -> tuple[str, str, int | None] | None:
    """(TABLE, param, item) of `TABLE[param]` (`item` as the target unpacks it) or of
    `TABLE[param][i]` taken whole."""
    index = value.slice if isinstance(value, ast.Subscript) else None
    if item is None and isinstance(index, ast.Constant) and type(index.value) is int:
        item, value = index.value, cast(ast.Subscript, value).value
    if not (isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name)):
        return None
    key = value.slice
    if isinstance(key, ast.Name) and key.id in params:
        return value.value.id, key.id, item
    return None


_MISSING_KEY = frozenset(("KeyError", "LookupError"))


def _where_missing(body: Sequence[ast.stmt], lookup: ast.stmt) -> set[ast.AST]:
    """The nodes of the `except KeyError:` (LookupError) clauses of the `try` whose body
    holds `lookup` itself: what runs only where the key is missing."""
    for stmt in scope.own_statements(body):
        if isinstance(stmt, scope.TRY) and lookup in cast(ast.Try, stmt).body:
            return {
                node
                for handler in cast(ast.Try, stmt).handlers
                if handler.type is not None
                and unparse(handler.type).rpartition(".")[2] in _MISSING_KEY
                for node in scope.own_nodes(handler.body)
            }
    return set()


_NOT_BOUND = -1
_BOUND_OTHERWISE = -2


def _bound_item(target: ast.expr, name: str) -> int | None:
    """How an assignment's target binds `name`: None as a whole, i as the i-th item of a
    tuple unpacked, _NOT_BOUND where it does not bind it, _BOUND_OTHERWISE where it
    binds it another way (in a starred or nested target)."""
    if isinstance(target, ast.Name):
        return None if target.id == name else _NOT_BOUND
    if isinstance(target, (ast.Tuple, ast.List)) and not any(
        isinstance(elt, ast.Starred) for elt in target.elts
    ):
        for i, elt in enumerate(target.elts):
            if isinstance(elt, ast.Name) and elt.id == name:
                return i
    stored = (
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        for node in scope.walk(target)
    )
    return _BOUND_OTHERWISE if any(stored) else _NOT_BOUND


def _module_dicts(body: Sequence[ast.stmt]) -> dict[str, ast.Dict]:
    """The module's names bound once, at its top level, to a dict display."""
    found: dict[str, ast.Dict] = {}
    bound: Counter[str] = Counter()
    for stmt in body:
        for name in _defined_names(stmt):
            bound[name] += 1
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Dict)
        ):
            found[stmt.targets[0].id] = stmt.value
    return {name: value for name, value in found.items() if bound[name] == 1}


def _table_entries(table: ast.Dict, item: int | None) -> tuple[tuple[str, str], ...]:
    """(key, class as written) of a dict's entries keyed by a string whose value (or its
    item `item`, of a tuple) is a name; none where the dict has more than _MAX_TABLE."""
    if len(table.keys) > _MAX_TABLE:
        return ()
    out: dict[str, str] = {}
    for key, value in zip(table.keys, table.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        held: ast.expr | None = value
        if item is not None:
            elts = value.elts if isinstance(value, (ast.Tuple, ast.List)) else []
            held = elts[item] if item < len(elts) else None
        if isinstance(held, (ast.Name, ast.Attribute)):
            out[key.value] = unparse(held)  # a later entry of the same key wins
    return tuple(out.items())


# the words of names of exception classes (and of the builtin ones)
_EXCEPTION_WORDS = re.compile(
    r"Error|Exception|Warning|Exit|Interrupt|Iteration|Abort|Fail|Fault|Denied|Invalid"
    r"|NotFound|DoesNotExist|Missing|Refused|Timeout|TimedOut|Cancel|Stop|Suspicious"
    r"|Disallowed|Forbidden|Unauthori[sz]ed|Unsupported|NotSupported|Conflict|Bad|Http"
    r"|Signal|Problem|Skip"
)


@functools.lru_cache(maxsize=1 << 14)
def _named_as_exception(name: str) -> bool:
    """Whether a class's name holds a word of exceptions' names (asked again and again of
    the same bases: Model, object)."""
    return _EXCEPTION_WORDS.search(name) is not None


def _may_be_raised(written: str) -> bool:
    """Whether a factory builds, as written, a class named as an exception's. What it
    builds through another call (`return self._error(msg)`, `return make(msg)`: mostly
    no exception, as Django's `return self.filter(...)`) linking reads where a site
    raises it (index.Index._factory_facts)."""
    name = written.split("[", 1)[0].rsplit(".", 1)[-1]
    return _named_as_exception(name)


def exception_like_classes(tree: ast.Module) -> set[str]:
    """The qualnames of the classes of a module whose details summarize reads where
    `partial`: those named as exceptions are, or with a base so named, the classes of
    the module deriving from those, and the classes of the module these derive from (a
    mixin). Classes are matched by the last name their bases are written with."""
    return _exception_like(_class_defs(tree.body))


def _exception_like(defs: Sequence[tuple[str, ast.ClassDef]]) -> set[str]:
    found = [(qualname, [_last_name(base) for base in stmt.bases]) for qualname, stmt in defs]
    named: dict[str, list[str]] = {}  # a class's own name -> the classes of that name
    deriving: dict[str, list[str]] = {}  # a base's name -> the classes deriving from it
    for qualname, bases in found:
        named.setdefault(qualname.rsplit(".", 1)[-1], []).append(qualname)
        for base in bases:
            deriving.setdefault(base, []).append(qualname)
    seeds = [
        qualname
        for qualname, bases in found
        if _named_as_exception(qualname.rsplit(".", 1)[-1]) or any(map(_named_as_exception, bases))
    ]
    below = _closure(seeds, lambda qualname: deriving.get(qualname.rsplit(".", 1)[-1], ()))
    bases_of = dict(found)
    return _closure(
        list(below), lambda qualname: [q for b in bases_of[qualname] for q in named.get(b, ())]
    )


def _closure(start: list[str], step: Callable[[str], Iterable[str]]) -> set[str]:
    """`start` and all that `step` leads to from it, again and again."""
    done: set[str] = set()
    while start:
        item = start.pop()
        if item not in done:
            done.add(item)
            start.extend(step(item))
    return done


def _last_name(node: ast.expr) -> str:
    """The last name of a base as written (`models.Model` -> Model, `Generic[T]` ->
    Generic); "" for another expression."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _aliases(tree: ast.Module) -> Iterator[tuple[str, str]]:
    """`ConnectionError = ProtocolError` at the top of a module: a class-like name bound
    once, to a class-like (dotted) name, and bound no other way there."""
    found: dict[str, str] = {}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, (ast.Name, ast.Attribute))
            and looks_like_class_name(stmt.targets[0].id)
        ):
            written = unparse(stmt.value)
            if looks_like_class_name(written.rsplit(".", 1)[-1]):
                found[stmt.targets[0].id] = written
    if not found:
        return
    bound: Counter[str] = Counter()
    for stmt in tree.body:
        bound.update(_defined_names(stmt))
        bound.update(imported.local for imported in _imported(stmt))
    for name, written in found.items():
        if bound[name] == 1 and written.split(".")[0] != name:
            yield name, written


def _factory_calls(tree: ast.Module, names: Sequence[str], src: Source) -> Iterator[FactoryCall]:
    """How each factory builds its class, in terms of its parameters: `def error(msg):
    return E(msg)` -> (("msg",), ((None, "msg"),)); `exc = E(self.name, f"bad {msg}")`
    -> ((None, "self.name"), (None, 'f"bad {msg}"')). A local name assigned once is
    written as its value."""
    wanted = set(names)
    if not wanted:
        return
    for qualname, function in _functions(tree.body, wanted):
        params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        params += [a.arg for a in function.args.kwonlyargs]
        body = _Body(function, src.walrus_in(function.body))
        built = {_built_call(node.value, body, src) for node in body.returns}
        if not built:  # a raising helper: what it raises
            built = {_built_call(node.exc, body, src) for node in body.raises}
        yield qualname, tuple(params), built.pop() if len(built) == 1 else None


class _Body:
    """A factory's own code, read once: its returns, its raises (of something) and its
    plain assignments by name; None for a name it binds another way too (`+=`, a loop's
    target, unpacking). Its statements are enough, unless a line of it holds a `:=`."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, walrus: bool) -> None:
        self.function = function
        self.returns: list[ast.Return] = []
        self.raises: list[ast.Raise] = []
        self.assigned: dict[str, list[ast.Assign] | None] = {}
        nodes = scope.own_nodes if walrus else scope.own_statements
        for node in nodes(function.body):
            if isinstance(node, ast.Return):
                self.returns.append(node)
            elif isinstance(node, ast.Raise) and node.exc is not None:
                self.raises.append(node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found = self.assigned.setdefault(target.id, [])
                        if found is not None and node not in found:
                            found.append(node)
                    else:  # a, b = ...: bound another way
                        for name in scope.walk(target):
                            if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                                self.assigned[name.id] = None
            for bound in scope.rebound(node):
                self.assigned[bound] = None

    def assignments(self, name: str) -> list[ast.Assign] | None:
        """The plain `name = ...` statements; None where the name is bound another way."""
        return self.assigned.get(name, [])

    def assigned_once(self, name: str) -> ast.expr | None:
        """The value of a local assigned exactly once (and never augmented)."""
        found = self.assignments(name)
        return found[0].value if found is not None and len(found) == 1 else None


def _functions(
    body: Sequence[ast.stmt], wanted: set[str]
) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The functions of a module named in `wanted` by qualname (`C.m`, `f.<locals>.g`),
    in source order: only the definitions that hold one are looked into."""
    holding: set[str] = set()  # the qualnames of what holds a wanted one: `f`, `f.<locals>`
    for name in wanted:
        parts = name.split(".")
        holding.update(".".join(parts[:end]) for end in range(1, len(parts)))
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    _add_functions(body, "", wanted, holding, found)
    return found


def _add_functions(
    body: Sequence[ast.stmt],
    outer: str,
    wanted: set[str],
    holding: set[str],
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]],
) -> None:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = outer + stmt.name
            if name in wanted:
                found.append((name, stmt))
            if f"{name}.<locals>" in holding:
                _add_functions(stmt.body, f"{name}.<locals>.", wanted, holding, found)
        elif isinstance(stmt, ast.ClassDef):
            name = outer + stmt.name
            if name in holding:
                _add_functions(stmt.body, f"{name}.", wanted, holding, found)
        elif isinstance(stmt, (ast.If, *scope.TRY)):  # definitions under `if TYPE_CHECKING:`...
            for field in ("body", "orelse", "finalbody"):
                _add_functions(getattr(stmt, field, []), outer, wanted, holding, found)


def _built_call(
    value: ast.expr | None, body: _Body, src: Source
) -> tuple[tuple[str | None, str], ...] | None:
    """The arguments of the exception a factory's return or raise builds, as source."""
    value = cast_value(value) or value  # `return cast(E, make(...))`: what make builds
    if isinstance(value, ast.Name):  # exc = E(...); ...; return exc
        value = body.assigned_once(value.id)
    if not isinstance(value, ast.Call):
        return None
    given = body.function.args
    args: list[tuple[str | None, str]] = []
    for keyword, node in [*((None, a) for a in value.args),
                          *((k.arg, k.value) for k in value.keywords)]:  # fmt: skip
        # case: exception(line, col, *args, **kwargs) of the factory's own *args and
        # **kwargs: what the call gives besides the parameters, passed on (FORWARDED)
        if isinstance(node, ast.Starred) or (keyword is None and node not in value.args):
            inner = node.value if isinstance(node, ast.Starred) else node
            star = given.vararg if isinstance(node, ast.Starred) else given.kwarg
            if not (isinstance(inner, ast.Name) and star is not None and inner.id == star.arg):
                return None
            args.append(FORWARDED_ARGS if isinstance(node, ast.Starred) else FORWARDED_KEYWORDS)
            continue
        looked_up = _looked_up(body, node)
        if looked_up is not None:
            args.append((keyword, looked_up))
            continue
        if isinstance(node, ast.Name):
            node = body.assigned_once(node.id) or node
        args.append((keyword, src.expression(node)))
    return tuple(args)


# a factory's `*args` and `**kwargs` passed on to what it builds, in FactoryCall's args
FORWARDED_ARGS: tuple[str | None, str] = (None, "*")
FORWARDED_KEYWORDS: tuple[str | None, str] = ("**", "**")


def _looked_up(body: _Body, node: ast.expr) -> str | None:
    """A message a factory looks up by the key it is given, then maybe formats with
    its keyword arguments: `msg = self.error_messages[key]`, then `msg.format(**kwargs)`
    or `msg = msg.format(**kwargs)` -> "self.error_messages[key].format(**kwargs)"; None
    for any other way of making `node`."""
    formats: list[ast.Call] = []
    # case: E(msg.format(**kwargs))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and _is_format(node, None)
    ):
        formats.append(node)
        node = node.func.value
    if not isinstance(node, ast.Name):
        return None
    name = node.id
    function = body.function
    assigned = body.assignments(name)
    if not assigned or any(len(stmt.targets) != 1 for stmt in assigned):
        return None
    values = [stmt.value for stmt in assigned]
    first, *rest = sorted(values, key=lambda v: (v.lineno, v.col_offset))
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args,
                              *function.args.kwonlyargs)}  # fmt: skip
    if not (
        isinstance(first, ast.Subscript)
        and isinstance(first.value, ast.Attribute)
        and isinstance(first.value.value, ast.Name)
        and first.value.value.id == "self"
        and isinstance(first.slice, ast.Name)
        and first.slice.id in params
    ):
        return None
    # case: msg = msg.format(**kwargs), each later assignment
    if not all(_is_format(value, name) for value in rest):
        return None
    formats += [value for value in rest if isinstance(value, ast.Call)]
    looked_up = f"self.{first.value.attr}[{first.slice.id}]"
    if not formats:
        return looked_up
    kwargs = function.args.kwarg.arg if function.args.kwarg else None
    call = formats[0]
    given_all = (
        kwargs is not None
        and not call.args
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == kwargs
    )
    # the call's own keywords fill the fields where the factory passes them all on
    return f"{looked_up}.format(**{kwargs})" if given_all else f"{looked_up}.format()"


def _is_format(node: ast.expr, name: str | None) -> bool:
    """Whether `node` is `X.format(...)` of a name (`name`, where given)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Name)
        and (name is None or node.func.value.id == name)
    )


def imports(tree: ast.Module) -> Iterator[Import]:
    """Names bound by imports at module level (under if/try too, not inside functions)."""
    for stmt in _module_statements(tree.body):
        yield from _imported(stmt)


def _imported(stmt: ast.stmt) -> Iterator[Import]:
    """The names one statement binds by importing (none but for an import)."""
    # case: import a.b.c / import a.b as c
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                yield Import(alias.asname, 0, alias.name, None)
            else:
                first = alias.name.split(".")[0]
                yield Import(first, 0, first, None)
    # case: from .mod import name as alias; from .mod import * (local "*": what it binds
    # is what the module defines, which the whole-scan index looks up)
    elif isinstance(stmt, ast.ImportFrom):
        for alias in stmt.names:
            module = stmt.module or ""
            yield Import(alias.asname or alias.name, stmt.level, module, alias.name)


def _with_local_imports(
    tree: ast.Module,
    imported: Sequence[Import] | None = None,
    local_imports: Sequence[ast.stmt] | None = None,
) -> Iterator[Import]:
    """The module's imports, then those made inside its functions (`from ..exceptions
    import NotFound` against an import cycle) of names the module does not bind itself,
    each bound one way only: what a class named in a function body is. `local_imports`:
    the import statements inside functions in source order, where found already."""
    module = list(imports(tree)) if imported is None else list(imported)
    yield from module
    bound = {i.local for i in module}
    bound.update(name for stmt in tree.body for name in _defined_names(stmt))
    local: dict[str, Import | None] = {}
    inside = _function_imports(tree.body) if local_imports is None else local_imports
    for stmt in inside:
        for found in _imported(stmt):
            if found.local not in bound:
                held = local.setdefault(found.local, found)
                if held != found:
                    local[found.local] = None  # two meanings: neither
    yield from (found for found in local.values() if found is not None)


# the statement lists of each statement that holds statements
_NESTED_FIELDS: dict[type, tuple[str, ...]] = {
    ast.FunctionDef: ("body",),
    ast.AsyncFunctionDef: ("body",),
    ast.ClassDef: ("body",),
    ast.If: ("body", "orelse"),
    ast.For: ("body", "orelse"),
    ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"),
    ast.With: ("body",),
    ast.AsyncWith: ("body",),
    ast.Try: ("body", "handlers", "orelse", "finalbody"),
    ast.Match: ("cases",),
}
if hasattr(ast, "TryStar"):  # 3.11
    _NESTED_FIELDS[ast.TryStar] = _NESTED_FIELDS[ast.Try]
_CLAUSES = (ast.ExceptHandler, ast.match_case)


def _function_imports(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The import statements inside functions, at any depth, in source order: one walk
    over the module's statements, none over expressions."""
    found: list[ast.stmt] = []
    stack = [(stmt, False) for stmt in body]
    pop, push = stack.pop, stack.append
    while stack:
        stmt, inside = pop()
        kind = type(stmt)
        if kind is ast.Import or kind is ast.ImportFrom:
            if inside:
                found.append(stmt)
            continue
        fields = _NESTED_FIELDS.get(kind)
        if fields is None:
            continue
        inner = inside or kind is ast.FunctionDef or kind is ast.AsyncFunctionDef
        for field in fields:
            for child in getattr(stmt, field):
                if type(child) in _CLAUSES:  # a handler or a case: its body
                    for grandchild in child.body:
                        push((grandchild, inner))
                else:
                    push((child, inner))
    found.sort(key=lambda stmt: (stmt.lineno, stmt.col_offset))
    yield from found


def _defined_names(stmt: ast.stmt) -> Iterator[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt.name
    elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            yield from (n.id for n in scope.walk(target) if isinstance(n, ast.Name))


def _module_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            children = getattr(stmt, field, None)
            if children:
                for child in children:
                    if isinstance(child, ast.ExceptHandler):
                        yield from _module_statements(child.body)
                    else:
                        yield from _module_statements([child])


def _class_defs(
    body: Sequence[ast.stmt], outer: str = "", found: list[tuple[str, ast.ClassDef]] | None = None
) -> list[tuple[str, ast.ClassDef]]:
    """Every class of a module by qualname, in source order, each before those nested
    in it (in a class, a function, or a function of a class): one walk of definitions."""
    found = [] if found is None else found
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            qualname = outer + stmt.name
            found.append((qualname, stmt))
            _class_defs(stmt.body, qualname + ".", found)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _class_defs(stmt.body, f"{outer}{stmt.name}.<locals>.", found)
    return found


def _classes(
    defs: Sequence[tuple[str, ast.ClassDef]],
    src: Source,
    constants: bindings.Constants,
    detailed: set[str] | None,
) -> Iterator[ClassInfo]:
    """Each class of _class_defs, with details where `detailed` (qualnames) holds it or
    is None, else deferred."""
    for qualname, stmt in defs:
        bases = tuple(src.expression(base) for base in stmt.bases)
        doc = _first_paragraph(ast.get_docstring(stmt))
        kept = _class_constants(constants.classes.get(qualname, {}))
        if detailed is not None and qualname not in detailed:
            yield ClassInfo(qualname, bases, doc, constants=kept, deferred=True)
            continue
        init = _method(stmt, "__init__")
        # __init__'s own code, walked once for what several readers look for in it
        init_nodes = list(scope.own_nodes(init.body)) if init is not None else []
        params, parts, others = _init_template(stmt, src, constants)
        found = _str_template(stmt, qualname, src, constants)
        if found is not None:  # __str__ decides the text, whatever __init__ passed on
            params, parts, others = found
        defaults = _param_defaults(init, params, src) if init is not None and params else {}
        if defaults:  # `{message}` of `if message is None: message = ...`
            parts = _or_default(parts, defaults)
            others = tuple(_or_default(other, defaults) for other in others)
        # (not where a __str__ decides: its paths may hold only where the call gave one)
        unset = {}
        if init is not None and params and found is None:
            unset = _signature_defaults(init, params, defaults)
        if unset:  # `{message}` of `def __init__(self, message="Bad input")`
            parts = _or_default(parts, unset, NOT_GIVEN)
            others = tuple(_or_default(other, unset, NOT_GIVEN) for other in others)
            defaults.update(unset)
        yield ClassInfo(
            qualname,
            bases,
            doc,
            init_params=params,
            init_parts=parts,
            init_candidates=others,
            from_str=found is not None,
            super_args=_super_args(init, init_nodes, src),
            plain_args=init is not None and _plain_args(stmt, init_nodes),
            constants=kept,
            caller_set=_caller_set(init, init_nodes),
            init_defaults=tuple(sorted(defaults.items())),
            init_of=_init_of(init_nodes, bases, src),
            init_setup=_init_setup(init, init_nodes, src) if init is not None else None,
        )


def _param_defaults(
    init: ast.FunctionDef, params: Sequence[str], src: Source
) -> dict[str, tuple[MessagePart, ...]]:
    """The parameters __init__ gives a value of its own where the call gives none, with
    that value's template: `if message is None: message = f"{name!r} not found"` (or
    `if not message:`, or `message = message or ...`) among its first statements, before
    any other mentions the parameter, and the only assignment of it."""
    found: dict[str, tuple[MessagePart, ...]] = {}
    mentioned: set[str] = set()
    for stmt in init.body:
        default = _default_of(stmt)
        if default is not None:
            param, value, where, body = default
            if param in params and param not in mentioned and param not in found:
                if isinstance(value, ast.Name) and value.id in params:  # message = name
                    found[param] = (MessagePart(expr=value.id),)
                    continue
                template = message.template(value, src, _InitLookup(body, where))
                if template is not None and template.parts:
                    found[param] = template.parts
        mentioned.update(n.id for n in scope.walk(stmt) if isinstance(n, ast.Name))
    if found:  # the default's own assignment the only binding of the parameter
        stored = Counter(
            node.id
            for node in scope.own_nodes(init.body)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        )
        found = {param: parts for param, parts in found.items() if stored[param] == 1}
    return found


def _signature_defaults_of(function: ast.FunctionDef) -> dict[str, ast.expr]:
    """Each parameter of the signature that has a default, with it."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [
        *zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True),
        *zip(args.kwonlyargs, args.kw_defaults, strict=True),
    ]
    return {arg.arg: value for arg, value in pairs if value is not None}


def _signature_defaults(
    init: ast.FunctionDef, params: Sequence[str] | None, made: Mapping[str, object]
) -> dict[str, tuple[MessagePart, ...]]:
    """The parameters whose default in the signature is a string (`message="Bad
    input"`), with that text: what the parameter holds where the call gives none, as
    long as __init__ never assigns it (`made`: those it gives a value of its own)."""
    wanted = {
        name: value.value
        for name, value in _signature_defaults_of(init).items()
        if name in (params or ()) and name not in made
        and isinstance(value, ast.Constant) and isinstance(value.value, str)
    }  # fmt: skip
    if not wanted:
        return {}
    stored = {
        node.id
        for node in scope.own_nodes(init.body)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
    }
    return {
        param: (MessagePart(text=text),) if text else ()
        for param, text in wanted.items()
        if param not in stored
    }


def _default_of(
    stmt: ast.stmt,
) -> tuple[str, ast.expr, ast.stmt, list[ast.stmt]] | None:
    """(parameter, its default value, the statement assigning it, the block it is in) of
    `if P is None: ...; P = VALUE` (or `if not P:`), or of `P = P or VALUE`."""
    # case: message = message or f"..."
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.BoolOp)
        and isinstance(stmt.value.op, ast.Or)
        and len(stmt.value.values) == 2
        and isinstance(stmt.value.values[0], ast.Name)
        and stmt.value.values[0].id == stmt.targets[0].id
    ):
        return stmt.targets[0].id, stmt.value.values[1], stmt, [stmt]
    if not isinstance(stmt, ast.If) or stmt.orelse:
        return None
    test = stmt.test
    param = None
    # case: if message is None: / if not message:
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        param = test.left.id
    elif (
        isinstance(test, ast.UnaryOp)
        and isinstance(test.op, ast.Not)
        and isinstance(test.operand, ast.Name)
    ):
        param = test.operand.id
    if param is None:
        return None
    # the block's one assignment of it, at its top level (other statements may come
    # first), maybe one of several at once (pyparsing's `msg, pstr = pstr, ""`)
    assigns = [
        (child, value)
        for child in stmt.body
        if isinstance(child, ast.Assign) and len(child.targets) == 1
        for value in [_value_of(child.targets[0], child.value, param)]
        if value is not None
    ]
    if len(assigns) != 1:
        return None
    return param, assigns[0][1], assigns[0][0], stmt.body


def _value_of(target: ast.expr, value: ast.expr, name: str) -> ast.expr | None:
    """What `target = value` gives `name`: the value where the target is the name, the
    matching element where both are tuples of one length; else None."""
    if isinstance(target, ast.Name):
        return value if target.id == name else None
    if (
        isinstance(target, ast.Tuple)
        and isinstance(value, ast.Tuple)
        and len(target.elts) == len(value.elts)
    ):
        for element, given in zip(target.elts, value.elts, strict=True):
            if isinstance(element, ast.Name) and element.id == name:
                return given
    return None


OR_DEFAULT = "__argument_or_default__."  # the argument where the call gives one, else the
# default __init__ makes (ClassInfo.init_defaults)


# the argument where the call gives one, else the default of __init__'s signature (a
# string: ClassInfo.init_defaults): unlike OR_DEFAULT's, not where the call gives None
NOT_GIVEN = "__argument_or_signature_default__."


def _or_default(
    parts: tuple[MessagePart, ...],
    defaults: Mapping[str, tuple[MessagePart, ...]],
    marker: str = OR_DEFAULT,
) -> tuple[MessagePart, ...]:
    """`parts` with each plain placeholder of a defaulted parameter marked (OR_DEFAULT)."""
    return tuple(
        part._replace(expr=marker + part.expr)
        if part.expr is not None
        and part.expr in defaults
        and part.conversion in (None, "s")
        and not part.format_spec
        else part
        for part in parts
    )


_MAX_CONSTANTS = 64
_MAX_CONSTANT_CHARS = 500
CLASS_CONSTANT = "__class_constant__."  # a __str__'s self.X of a class constant, by name
# __init__'s `self.X.format(**kwargs)`: the class constant X of the class raised, its
# fields filled with the call's keyword arguments
FORMAT_CONSTANT = "__class_constant_formatted__."
# the text of a parameter %-formatted with others: PERCENT_OF + "msg|zone_key" for
# `super().__init__(msg % zone_key)`, PERCENT_OF + FIRST_ARGUMENT + "|*" for a __str__'s
# `self.args[0] % self.args[1:]` (python-dateutil's); put together when linking, where
# the call gives the format string as a literal
PERCENT_OF = "__percent_of__."


def _formatted_constant(
    argument: ast.expr, init: ast.FunctionDef, lookup: _InitLookup
) -> str | None:
    """X where the message __init__ passes on is `self.X.format(**kwargs)`, kwargs its
    own `**` parameter (itself, or a local assigned it once before)."""
    node = argument
    if isinstance(node, ast.Name):
        chains = lookup.local(node.id)
        if not chains or len(chains) != 1 or len(chains[0]) != 1:
            return None
        node = chains[0][0]
    kwargs = init.args.kwarg.arg if init.args.kwarg is not None else None
    found = _self_format(node)
    if kwargs is None or found is None:
        return None
    constant, mapping = found
    return constant if isinstance(mapping, ast.Name) and mapping.id == kwargs else None


def _self_format(node: ast.expr) -> tuple[str, ast.expr] | None:
    """X and M where `node` is `self.X.format(**M)`, else None."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Attribute)
        and _is_self_attribute(node.func.value)
        and not node.args
        and len(node.keywords) == 1
        and node.keywords[0].arg is None
    ):
        return None
    return node.func.value.attr, node.keywords[0].value


def _formats_its_keywords(returns: list[ast.expr | None], init: ast.FunctionDef) -> str | None:
    """X where __str__ is `return self.X.format(**self.__dict__)` and __init__ takes
    keywords only, `**ctx`, made the instance's attributes (`self.__dict__ = ctx`, or
    `self.__dict__.update(ctx)`): pydantic's errors, whose text is the class constant
    msg_template with the call's keyword arguments in."""
    args = init.args
    if (
        len(returns) != 1
        or args.kwarg is None
        or args.vararg is not None
        or args.kwonlyargs
        or args.posonlyargs
        or [a.arg for a in args.args] != ["self"]
    ):
        return None
    found = _self_format(returns[0]) if returns[0] is not None else None
    if found is None or not _is_self_attribute(found[1], "__dict__"):
        return None
    kwarg = args.kwarg.arg
    for stmt in init.body:
        value = stmt.value if isinstance(stmt, ast.Expr) else None
        if (  # case: self.__dict__ = ctx
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and _is_self_attribute(stmt.targets[0], "__dict__")
            and isinstance(stmt.value, ast.Name)
            and stmt.value.id == kwarg
        ) or (  # case: self.__dict__.update(ctx)
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "update"
            and _is_self_attribute(value.func.value, "__dict__")
            and len(value.args) == 1
            and not value.keywords
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == kwarg
        ):
            return found[0]
    return None


# __str__'s `self.X.format(**vars(self))`: the text of __init__'s parameter P that X holds,
# formatted with the instance's attributes (astroid's errors). ATTRS_FORMAT + "P|E|F": E
# the attribute left out of the fields ("" for none), F "!" where a failure to format
# returns the text as it is (`except (LookupError, ...): return self.X`)
ATTRS_FORMAT = "__attributes_formatted__."


def _attrs_format(
    method: ast.FunctionDef,
    paths: list[tuple[ast.Return, ast.FunctionDef, bool]],
    init: ast.FunctionDef,
) -> str | None:
    """ATTRS_FORMAT's "P|E|F" where __str__ returns `self.X.format(**M)` of M the
    instance's attributes (`vars(self)`, `self.__dict__`, or a local assigned once `{k:
    v for k, v in vars(self).items() if k != "E"}`), maybe `self.X` where that fails, and
    __init__ sets X to its parameter P; else None."""
    formatted = [ret for ret, owner, handled in paths if owner is method and not handled]
    failed = [ret for ret, owner, handled in paths if owner is method and handled]
    if len(formatted) != 1 or len(failed) > 1 or len(paths) != len(formatted) + len(failed):
        return None
    value = formatted[0].value
    found = _self_format(value) if value is not None else None
    if found is None:
        return None
    attribute, mapping = found
    left_out: str | None = ""
    if isinstance(mapping, ast.Name):
        assigned = _assigned_in(method, mapping.id)
        left_out = _attributes_left_out(assigned[0]) if len(assigned) == 1 else None
    elif not _instance_attributes(mapping):
        left_out = None
    if left_out is None:
        return None
    if failed:
        other = failed[0].value
        if other is None or not _is_self_attribute(other, attribute):
            return None
    params = set(_positional(init)) | {arg.arg for arg in init.args.kwonlyargs}
    param = _attributes(init, params).get(attribute)
    if param is None:
        return None
    return f"{param}|{left_out}|{'!' if failed else ''}"


def _code_of(method: ast.FunctionDef) -> list[ast.stmt]:
    """A method's statements but its docstring (and any other lone constant)."""
    return [
        stmt
        for stmt in method.body
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
    ]


# __str__'s `lines = []`, `if self.X is not None: lines.append(self.X)` (or str() of it),
# ..., `return SEP.join(lines)` (PyYAML's MarkedYAMLError): JOINED_LINES + JSON [SEP,
# [[P, when, conversion, default], ...]], P the __init__ parameter a line shows, when ""
# (always), "given" (where the argument is not None) or "maybe" (that, and a condition
# errscan does not read: the line is left out in the template's other path), default
# P's (_default_kind)
JOINED_LINES = "__joined_lines__."


def _joined_lines(method: ast.FunctionDef, init: ast.FunctionDef) -> tuple[str, str] | None:
    """JOINED_LINES's spec of a __str__ joining the lines it appends, with each "maybe"
    line, then without any; None for any other __str__."""
    body = _code_of(method)
    if len(body) < 3:
        return None
    first, last = body[0], body[-1]
    if not (
        isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0], ast.Name)
        and isinstance(first.value, ast.List)
        and not first.value.elts
        and isinstance(last, ast.Return)
        and isinstance(last.value, ast.Call)
        and isinstance(last.value.func, ast.Attribute)
        and last.value.func.attr == "join"
        and isinstance(last.value.func.value, ast.Constant)
        and isinstance(last.value.func.value.value, str)
        and len(last.value.args) == 1
        and not last.value.keywords
        and isinstance(last.value.args[0], ast.Name)
        and last.value.args[0].id == first.targets[0].id
    ):
        return None
    name, sep = first.targets[0].id, last.value.func.value.value
    params = set(_positional(init)) | {arg.arg for arg in init.args.kwonlyargs}
    attributes = _attributes(init, params)
    lines: list[list[str]] = []
    for stmt in body[1:-1]:
        when, appended = "", stmt
        if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1:
            checked = stmt.test.values[0] if isinstance(stmt.test, ast.BoolOp) else stmt.test
            if isinstance(stmt.test, ast.BoolOp) and not isinstance(stmt.test.op, ast.And):
                return None
            condition = _attribute_condition(checked)
            if condition is None or condition[1:] != ("none", False):  # `self.X is not None`
                return None
            when = "maybe" if isinstance(stmt.test, ast.BoolOp) else "given"
            appended = stmt.body[0]
            checked_attr = condition[0]
        else:
            checked_attr = None
        value = appended.value if isinstance(appended, ast.Expr) else None
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "append"
            and isinstance(value.func.value, ast.Name)
            and value.func.value.id == name
            and len(value.args) == 1
            and not value.keywords
        ):
            return None
        shown, conversion = value.args[0], ""
        if (
            isinstance(shown, ast.Call)
            and isinstance(shown.func, ast.Name)
            and shown.func.id == "str"
            and len(shown.args) == 1
        ):
            shown, conversion = shown.args[0], "s"
        if not _is_self_attribute(shown):
            return None
        param = attributes.get(_attr_of(shown))
        if param is None or (checked_attr is not None and checked_attr != _attr_of(shown)):
            return None
        lines.append([param, when, conversion, _default_kind(init, param)])
    if not lines:
        return None
    every = json.dumps([sep, lines])
    fewer = json.dumps([sep, [line for line in lines if line[1] != "maybe"]])
    return every, fewer


# __str__'s `if self.X: return A` then `return B` (or `is None`, `is not None`, `not`),
# X an attribute __init__ sets from a parameter defaulting to None (packaging's
# `if self.context is None: return self.message`): OPTIONAL_BRANCH + JSON [P, kind, the
# template where P is None, the other, the template both match], kind "truthy" or
# "none" (what the condition asks of X); each template a list of _parts_spec's parts
OPTIONAL_BRANCH = "__optional_branch__."


def _parts_spec(parts: tuple[MessagePart, ...]) -> list[list[str | None]]:
    return [[p.text, p.expr, p.conversion, p.format_spec] for p in parts]


def _optional_branch(
    method: ast.FunctionDef,
    paths: Sequence[tuple[ast.Return, ast.FunctionDef, bool]],
    attributes: Mapping[str, str],
    init: ast.FunctionDef | None,
) -> tuple[str, str, int] | None:
    """The parameter, the condition's kind and the index (in `paths`, in no particular
    order) of the path taken where the parameter is None, of a __str__ of plain
    assignments, then `if COND:` of assignments and a return, then (or in its `else`)
    assignments and a return; COND `self.X`, `not self.X`, `self.X is None` or `self.X
    is not None`, X set by __init__ from a parameter whose default is None. None for any
    other __str__."""
    if init is None or len(paths) != 2 or any(o is not method or h for _, o, h in paths):
        return None
    body = _code_of(method)
    ifs = [i for i, stmt in enumerate(body) if isinstance(stmt, ast.If)]
    if len(ifs) != 1 or not all(_plain_assignment(stmt) for stmt in body[: ifs[0]]):
        return None
    test = body[ifs[0]]
    assert isinstance(test, ast.If)
    rest = body[ifs[0] + 1 :]
    if test.orelse and rest:
        return None
    taken, other = test.body, test.orelse or rest
    for block in (taken, other):
        if not block or not isinstance(block[-1], ast.Return):
            return None
        if not all(_plain_assignment(stmt) for stmt in block[:-1]):
            return None
    condition = _attribute_condition(test.test)
    if condition is None:
        return None
    attribute, kind, when_none_holds = condition
    param = attributes.get(attribute)
    if param is None or _default_kind(init, param) != "None":
        return None
    returns = [id(stmt) for stmt, _, _ in paths]
    if set(returns) != {id(taken[-1]), id(other[-1])}:
        return None
    return param, kind, returns.index(id(taken[-1] if when_none_holds else other[-1]))


def _plain_assignment(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets)


def _attribute_condition(test: ast.expr) -> tuple[str, str, bool] | None:
    """X of a condition on `self.X`, its kind ("truthy": `self.X` or `not self.X`;
    "none": `self.X is None` or `is not None`), and whether it holds where X is None."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    if negated:
        assert isinstance(test, ast.UnaryOp)
        test = test.operand
    kind, holds = "truthy", negated
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        kind, holds = "none", isinstance(test.ops[0], ast.Is) != negated
        test = test.left
    if (
        isinstance(test, ast.Attribute)
        and isinstance(test.value, ast.Name)
        and test.value.id == "self"
    ):
        return test.attr, kind, holds
    return None


def _default_kind(init: ast.FunctionDef, param: str) -> str:
    """ "None" where __init__'s parameter defaults to None, "" where it has no default,
    "other" for any other default."""
    default = _signature_defaults_of(init).get(param)
    if default is None:
        return ""
    return "None" if isinstance(default, ast.Constant) and default.value is None else "other"


def _attr_of(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else ""


def _instance_attributes(node: ast.expr) -> bool:
    """`vars(self)` or `self.__dict__`."""
    return _is_self_attribute(node, "__dict__") or (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "vars"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == "self"
    )


def _attributes_left_out(node: ast.expr) -> str | None:
    """ "" where `node` is the instance's attributes, E where it is `{k: v for k, v in
    vars(self).items() if k != "E"}`; None for anything else."""
    if _instance_attributes(node):
        return ""
    if not (isinstance(node, ast.DictComp) and len(node.generators) == 1):
        return None
    loop = node.generators[0]
    target, source = loop.target, loop.iter
    if not (
        isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and all(isinstance(e, ast.Name) for e in target.elts)
        and isinstance(source, ast.Call)
        and isinstance(source.func, ast.Attribute)
        and source.func.attr == "items"
        and not source.args
        and _instance_attributes(source.func.value)
        and not loop.is_async
    ):
        return None
    key, item = (_name_of(e) for e in target.elts)
    if not (
        isinstance(node.key, ast.Name) and node.key.id == key
        and isinstance(node.value, ast.Name) and node.value.id == item
    ):  # fmt: skip
        return None
    if not loop.ifs:
        return ""
    test = loop.ifs[0]
    if (
        len(loop.ifs) == 1
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == key
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.NotEq)
        and isinstance(test.comparators[0], ast.Constant)
        and isinstance(test.comparators[0].value, str)
        and "|" not in test.comparators[0].value
    ):
        return test.comparators[0].value
    return None


def _name_of(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ""


def _init_setup(
    init: ast.FunctionDef, nodes: Sequence[ast.AST], src: Source
) -> tuple[tuple[str, str, str], ...]:
    """ClassInfo.init_setup: __init__'s parameters, the attributes it sets (the value of
    a top-level `self.X = P` of a parameter P, any other's not read), and what it passes
    to super().__init__. `nodes`: the own nodes of init's body."""
    args = init.args
    positional = [*args.posonlyargs, *args.args][1:]
    defaults = _signature_defaults_of(init)
    out: list[tuple[str, str, str]] = []

    def entry(kind: str, arg: ast.arg) -> tuple[str, str, str]:
        default = defaults.get(arg.arg)
        return (f"{kind}=", arg.arg, src.expression(default)) if default else (kind, arg.arg, "")

    out.extend(entry("param", arg) for arg in positional)
    if args.vararg is not None:
        out.append(("*", args.vararg.arg, ""))
    out.extend(entry("kwonly", arg) for arg in args.kwonlyargs)
    if args.kwarg is not None:
        out.append(("**", args.kwarg.arg, ""))
    names = {arg.arg for arg in (*positional, *args.kwonlyargs)}
    read: set[int] = set()  # the nodes read below as the top level's own
    for stmt in init.body:
        target = (
            stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        )
        if isinstance(stmt, ast.Assign) and isinstance(target, ast.Attribute):
            if _is_self_attribute(target):
                value = stmt.value
                param = value.id if isinstance(value, ast.Name) and value.id in names else ""
                out.append(("attr", target.attr, param))
                read.add(id(target))
        elif isinstance(stmt, ast.For) and args.kwarg is not None:
            loop = _setattr_loop(stmt)
            if loop is not None and loop == args.kwarg.arg:
                out.append(("setattr", loop, ""))
                read.update(id(node) for node in ast.walk(stmt))
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if _is_super_init(call):
                passed = call.args[1:] if _explicit_base(call) else call.args
                out.append(("super()", "", ""))
                for given in passed:
                    if isinstance(given, ast.Starred):
                        out.append(("super", "*", src.expression(given.value)))
                    else:
                        out.append(("super", "", src.expression(given)))
                for keyword in call.keywords:
                    out.append(("super", keyword.arg or "**", src.expression(keyword.value)))
    for node in nodes:
        # any other attribute set (in an if, a loop, a tuple): its value not read; one
        # of `self.__dict__` or setattr() elsewhere: any attribute may be, "*"
        if id(node) in read:
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if _is_self_attribute(node):
                out.append(("attr", node.attr, ""))
        elif (isinstance(node, ast.Attribute) and node.attr == "__dict__") or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
        ):  # fmt: skip
            out.append(("attr", "*", ""))
    return tuple(out)


def _setattr_loop(stmt: ast.For) -> str | None:
    """KW of `for k, v in KW.items(): setattr(self, k, v)`."""
    target, source = stmt.target, stmt.iter
    if not (
        len(stmt.body) == 1
        and not stmt.orelse
        and isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and all(isinstance(e, ast.Name) for e in target.elts)
        and isinstance(source, ast.Call)
        and isinstance(source.func, ast.Attribute)
        and source.func.attr == "items"
        and isinstance(source.func.value, ast.Name)
        and not source.args
    ):
        return None
    body = stmt.body[0]
    call = body.value if isinstance(body, ast.Expr) else None
    names = [_name_of(e) for e in target.elts]
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "setattr"
        and len(call.args) == 3
        and not call.keywords
        and [_name_of(a) for a in call.args] == ["self", *names]
    ):
        return None
    return source.func.value.id


def _is_self_attribute(node: ast.expr, name: str | None = None) -> bool:
    """`self.X` (`self.name` where `name` is given)."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and (name is None or node.attr == name)
    )


def _class_constants(assigned: dict[str, ast.expr]) -> tuple[tuple[str, str], ...]:
    """A class body's literal constants (str, int, float, bool, None), by name: what a
    base's __str__ reading `self.code` finds in the class raised. The string entries of
    a dict of messages (`default_error_messages = {"invalid": "Not a valid list."}`)
    count too, each named as it is read: `default_error_messages['invalid']`."""
    found = []
    entries = []
    for name, value in sorted(assigned.items()):
        if (  # case: errno = -1, a signed number
            isinstance(value, ast.UnaryOp)
            and isinstance(value.op, (ast.USub, ast.UAdd))
            and isinstance(value.operand, ast.Constant)
            and type(value.operand.value) in (int, float)
        ):
            value = ast.Constant(ast.literal_eval(value))
        if isinstance(value, ast.Constant) and isinstance(
            value.value, (str, int, float, bool, type(None))
        ):
            text = repr(value.value)
            if len(text) <= _MAX_CONSTANT_CHARS:
                found.append((name, text))
        elif isinstance(value, ast.Dict):
            for key, item in zip(value.keys, value.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and isinstance(key.value, str)
                    and isinstance(item, ast.Constant)
                    and isinstance(item.value, str)
                    and len(item.value) <= _MAX_CONSTANT_CHARS
                ):
                    entries.append((f"{name}[{key.value!r}]", repr(item.value)))
    return tuple(found[:_MAX_CONSTANTS]) + tuple(entries[:_MAX_CONSTANTS])


def _caller_set(init: ast.FunctionDef | None, nodes: Sequence[ast.AST]) -> tuple[str, ...]:
    """The attributes `__init__` sets from its parameters: `self.x = x`, or a local that a
    statement mixes a parameter into (`messages.update(error_messages or {})`, then
    `self.error_messages = messages`). `nodes`: the own nodes of init's body."""
    if init is None:
        return ()
    args = init.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} - {"self"}
    params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    # each statement read once: the names it reads or binds, those it binds, and those
    # its value (of an assignment) reads or binds
    statements = []
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            value = _name_nodes(node.value) if node.value is not None else []
            parts = node.targets if isinstance(node, ast.Assign) else [node.target, node.annotation]
            found_names = [n for part in parts for n in _name_nodes(part)] + value
            value_ids = {n.id for n in value}
        elif isinstance(node, (ast.AugAssign, ast.Expr)):
            found_names, value_ids = _name_nodes(node), set()
        else:
            continue
        stored = {n.id for n in found_names if isinstance(n.ctx, ast.Store)}
        statements.append((node, {n.id for n in found_names}, stored, value_ids))
    fed = set(params)  # locals a parameter flows into, and the parameters themselves
    for _ in range(2):  # a local fed from a local fed from a parameter
        for node, named, stored, _value in statements:
            if isinstance(node, ast.AnnAssign) or not named & fed:
                continue
            fed |= stored
            # case: messages.update(error_messages or {}) feeds messages
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                func = node.value.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                    fed.add(func.value.id)
    found = set()
    for node, _, _, read in statements:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is None or not read & fed:
                continue
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    found.add(target.attr)
    return tuple(sorted(found))


def _name_nodes(node: ast.AST) -> list[ast.Name]:
    """The Name nodes in `node`, itself included."""
    return [n for n in scope.walk(node) if isinstance(n, ast.Name)]


def _first_paragraph(doc: str | None) -> str | None:
    if not doc:
        return None
    paragraph = doc.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split()) or None


def _init_template(
    cls: ast.ClassDef, src: Source, constants: bindings.Constants
) -> tuple[tuple[str, ...] | None, tuple[MessagePart, ...], tuple[tuple[MessagePart, ...], ...]]:
    """`__init__(self, a, b): super().__init__(f"... {a} ...")`: the parameters, the
    template, and the other paths' templates."""
    init = _method(cls, "__init__")
    if init is None:
        return None, (), ()
    params = _positional(init)
    params += [arg.arg for arg in init.args.kwonlyargs]
    by_keyword = False
    for stmt in init.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and _is_super_init(call)):
            continue
        passed = call.args[1:] if _explicit_base(call) else call.args
        if not passed and not call.keywords:
            # case: super().__init__(): no args, so str() is "" (where no base above
            # composes one: see Index.exception_info)
            return tuple(params), (), ()
        if not passed:
            by_keyword = True
            continue
        if _passes_on_as_called(init, passed, call):
            # case: __init__(self, fmt, *args): super().__init__(fmt, *args): the base gets
            # the call's own arguments, however many (glom's MatchError): no text of this
            # __init__'s, as for a class with none (str() of one argument is its text, of
            # several their tuple, and a base's __str__ decides over both)
            return None, (), ()
        argument = passed[0]
        # case: self.message = message; super().__init__(self.message)
        if (
            isinstance(argument, ast.Attribute)
            and isinstance(argument.value, ast.Name)
            and argument.value.id == "self"
        ):
            held = _attributes(init, set(params)).get(argument.attr)
            argument = ast.Name(id=held, ctx=ast.Load()) if held is not None else argument
        # case: super().__init__(message), the parameter itself
        if isinstance(argument, ast.Name) and argument.id in params:
            bare = (MessagePart(expr=argument.id),)
            if not _extended_before(init, stmt, argument.id):
                return tuple(params), bare, ()
            # soupsieve's `if pattern is not None: msg = f"{msg}\n  line {self.line}:..."`:
            # the parameter as it came, and each text made of it, a candidate each
            paths = message.templates(argument, src, _InitLookup(init.body, stmt))
            if not paths:
                return tuple(params), (MessagePart(expr=UNKNOWN_STR),), ()
            made = [t.parts for t in paths]
            if _reaches_unbound(init, stmt, argument.id):
                made.insert(0, bare)
            return tuple(params), made[0], tuple(dict.fromkeys(made[1:]))
        # case: super().__init__(msg % zone_key), a format string the call gives
        percent = _percent_of(argument, params)
        if percent is not None:
            return tuple(params), (MessagePart(expr=percent),), ()
        lookup = _InitLookup(init.body, stmt)
        constant = _formatted_constant(argument, init, lookup)
        if constant is not None:  # case: msg = self.fmt.format(**kwargs) (botocore's)
            return tuple(params), (MessagePart(expr=FORMAT_CONSTANT + constant),), ()
        found = message.template(argument, src, lookup)
        if found is not None:
            return tuple(params), found.parts, ()
        # case: super().__init__(message + _format_filepos(lineno, pos, filename)) (Mako's):
        # the text the call gives, then what is added to it
        led = _led_by_parameter(argument, params, src, lookup)
        if led is not None:
            return tuple(params), led, ()
    if by_keyword:
        # case: super().__init__(description=description): the base's __init__ or
        # __str__ makes the text of what this one passes on (link._through_str), never
        # of this __init__'s own arguments in the base's order
        return tuple(params), (MessagePart(expr=UNKNOWN_STR),), ()
    return None, (), ()


_MAX_RETURNS = 4  # paths of a __str__ read; one with more is not claimed


def _str_template(
    cls: ast.ClassDef, qualname: str, src: Source, constants: bindings.Constants
) -> tuple[tuple[str, ...], tuple[MessagePart, ...], tuple[tuple[MessagePart, ...], ...]] | None:
    """`__str__` composing the text: __init__'s parameters, the most general template
    (what every return has in common at its start and end, a placeholder between), and
    each return's template. Attributes __init__ sets from a parameter (`self.message =
    str(message)`) stand for it; class constants (`code = "bhk3"`) are read. None where
    there is no __str__; a single unknown part where one cannot be read."""
    method = next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__str__"), None
    )
    if method is None:
        return None
    paths = _str_paths(cls, method)
    returns = [stmt.value for stmt, _, _ in paths]
    init = next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    params: list[str] = []
    if init is not None:
        params = _positional(init)
        params += [arg.arg for arg in init.args.kwonlyargs]
    elif _builtin_bases(cls) and _reads_first_argument(method):
        params = [FIRST_ARGUMENT]  # no __init__: str(args[0]) is the call's first argument
    logged = _logging_style(method, returns) if params == [FIRST_ARGUMENT] else None
    if logged is not None:  # `return self.args[0] % self.args[1:]`, its failure aside
        return (FIRST_ARGUMENT,), (MessagePart(expr=logged),), ()
    constant = _formats_its_keywords(returns, init) if init is not None else None
    if constant is not None:  # pydantic's msg_template, filled with the call's keywords
        return (), (MessagePart(expr=FORMAT_CONSTANT + constant),), ()
    attrs_format = _attrs_format(method, paths, init) if init is not None else None
    if attrs_format is not None:  # astroid's `self.message.format(**vars(self))`
        return tuple(params), (MessagePart(expr=ATTRS_FORMAT + attrs_format),), ()
    joined = _joined_lines(method, init) if init is not None else None
    if joined is not None:  # PyYAML's MarkedYAMLError: `"\n".join(lines)` of its appends
        every, fewer = joined
        others: tuple[tuple[MessagePart, ...], ...] = ()
        if fewer != every:
            others = ((MessagePart(expr=JOINED_LINES + fewer),),)
        return tuple(params), (MessagePart(expr=JOINED_LINES + every),), others
    if not returns or len(returns) > _MAX_RETURNS or any(value is None for value in returns):
        # a __str__ still decides the text, in a way not read: unresolved, not __init__'s
        return tuple(params), (MessagePart(expr=UNKNOWN_STR),), ()
    attributes = _attributes(init, set(params)) if init else {}
    passed = _passed_to_super(init, set(params)) if init else None
    if params == [FIRST_ARGUMENT]:
        passed = FIRST_ARGUMENT
    if passed is not None:  # super().__init__(message): args[0], and the usual property
        for name in ("args[0]", "message", "msg"):
            attributes.setdefault(name, passed)
    if init is not None:  # super().__init__(code, message): args[1] too
        for position, name in _passed_in_place(init, set(params)).items():
            attributes.setdefault(f"args[{position}]", name)
    guarded = _set_unless_none(init, attributes) if init else set()
    # super().__str__() is the argument's text only where it is BaseException's
    mapped = _Self(attributes, qualname, constants, guarded, super_str=_builtin_bases(cls))
    found: list[tuple[MessagePart, ...]] = []
    failed: list[tuple[MessagePart, ...]] = []  # the text of a __str__ that failed
    for stmt, owner, handled in paths:
        value = stmt.value
        assert value is not None
        original = value
        value = _uncast(mapped.visit(copy.deepcopy(value)))
        # `return self.message`, not a local of __str__ of a parameter's name (pint's
        # `msg = f"Cannot define ... {self.msg}"; return msg`)
        local = isinstance(_uncast(original), ast.Name)
        if (
            isinstance(value, ast.Name)
            and not local
            and (value.id in params or value.id == CLASS_NAME)
        ):
            found.append((MessagePart(expr=value.id),))
            continue
        shown = _repr_of(value, params) if not local and not _names_a_local(original) else None
        if shown is not None:  # the Python tutorial's `return repr(self.value)`
            found.append((MessagePart(expr=shown, conversion="r"),))
            continue
        # its locals read where they are plain (pyparsing's `found_phrase = f", found
        # {self.found}" if self.found else ""`): a path each
        # its locals as they reach the return, and the module's constants
        lookup = _InitLookup(owner.body, stmt, constants.module, owner)
        read = [
            mapped.parts(parts)
            for t in message.templates(value, src, lookup)
            for parts in _locals_in(t.parts, src, lookup)
        ]
        if read and all(_readable(parts, params) or _only(parts, params) for parts in read):
            (failed if handled else found).extend(read)
            continue
        template = message.template(value, src, lookup)
        if handled and any(not h for _, _, h in paths):
            # the text of a __str__ that failed (pyparsing's `except Exception as ex:
            # return f"{type(self).__name__}: ... {ex} while formatting message"`): not
            # read, it leaves the path that does not fail
            continue
        masked = _instance_parts_unknown(template.parts) if template is not None else None
        if masked is not None and _readable(
            tuple(part for part in masked if part.expr != UNKNOWN_STR), params
        ):
            # typeguard's `" of ".join(self._path) + " " + str(self.args[0])`: the
            # argument's text, after what the instance holds at run time; pint's
            # `"... unit (%s)." % ", ".join(str(u) for u in self.yield_units()) + ...`:
            # the text around what the instance holds (each path's literal text is
            # what that path always writes)
            found.append(masked)
            continue
        first = _joined_first(value, method, mapped)
        if first in params:  # "\n".join([self.message, location, ...]): the message, then more
            found.append((MessagePart(expr=first), MessagePart(expr=UNKNOWN_STR)))
            continue
        if (
            passed is not None
            and (init is None or _passes_one(init))
            and _begins_with_the_arguments(original, method)
        ):
            # the argument's text, then what the __str__ adds where it does
            found.append((MessagePart(expr=passed), MessagePart(expr=UNKNOWN_STR)))
            continue
        # a text this cannot read: the class's errors are unresolved rather than guessed
        return tuple(params), (MessagePart(expr=UNKNOWN_STR),), ()
    if not found:  # every path is one of failure
        found, failed = failed, []
    general = _most_general(found)
    others = tuple(dict.fromkeys(parts for parts in [*found, *failed] if parts != general))
    branch = _optional_branch(method, paths, attributes, init) if len(found) == 2 else None
    if branch is not None and any(attributes.get(a) == branch[0] for a in guarded):
        branch = None  # set only where given: a class constant may stand where it is not
    if (
        branch is not None
        and not failed
        and len(set(found)) == 2
        and not any(part.expr == UNKNOWN_STR for part in found[branch[2]])
    ):
        # each path's one template (the one a call leaving the parameter out takes read
        # whole), then the other, then what both match
        param, kind, when_none = branch
        spec = [param, kind, *(_parts_spec(found[i]) for i in (when_none, 1 - when_none))]
        spec.append(_parts_spec(general))
        return tuple(params), (MessagePart(expr=OPTIONAL_BRANCH + json.dumps(spec)),), others
    return tuple(params), general, others


_MAX_LOCAL_PATHS = 8


def _locals_in(
    parts: tuple[MessagePart, ...], src: Source, lookup: _InitLookup
) -> list[tuple[MessagePart, ...]]:
    """`parts` with each plain placeholder of a local the lookup reads put in, a path
    for each of its values; `[parts]` where none is read, at most _MAX_LOCAL_PATHS."""
    out: list[list[MessagePart]] = [[]]
    for part in parts:
        values = None
        plain = part.conversion in (None, "s") and not part.format_spec
        named = plain and part.expr is not None and part.expr.isidentifier()
        chains = lookup.local(part.expr) if named and part.expr else None
        first = chains[0][0] if chains and len(chains) == 1 and len(chains[0]) == 1 else None
        if isinstance(first, ast.IfExp):
            # `x = f", found {self.found}" if self.found else ""`: the empty side too
            sides = [message.templates(side, src, lookup) for side in (first.body, first.orelse)]
            values = [t for side in sides for t in side] if all(sides) else None
        elif chains:
            values = message.local_values(chains, src, lookup)
        if not values or not all(_plain_reads(value.parts) for value in values):
            out = [[*path, part] for path in out]  # `marker = " " * self.span[0] + ...`
            continue
        out = [[*path, *value.parts] for path in out for value in values]
        if len(out) > _MAX_LOCAL_PATHS:
            return [parts]
    return [tuple(message.merge(path)) for path in out]


def _str_paths(
    cls: ast.ClassDef, method: ast.FunctionDef
) -> list[tuple[ast.Return, ast.FunctionDef, bool]]:
    """A __str__'s returns, each with the method it is in and whether an except clause
    holds it; `return self.formatted_message()` of a method of the class without
    arguments is that method's returns."""
    handled = _handled(method)
    out: list[tuple[ast.Return, ast.FunctionDef, bool]] = []
    for node in scope.own_nodes(method.body):
        if not isinstance(node, ast.Return):
            continue
        called = _own_method_called(cls, node.value)
        inner = (
            [n for n in scope.own_nodes(called.body) if isinstance(n, ast.Return)]
            if called is not None
            else []
        )
        if called is not None and inner and len(inner) <= _MAX_RETURNS:
            inner_handled = _handled(called)
            out.extend(
                (ret, called, id(node) in handled or id(ret) in inner_handled) for ret in inner
            )
        else:
            out.append((node, method, id(node) in handled))
    return out


def _handled(method: ast.FunctionDef) -> set[int]:
    """The ids of the nodes an except clause of `method` holds."""
    return {
        id(node)
        for handler in scope.walk(method)
        if isinstance(handler, ast.ExceptHandler)
        for node in scope.walk(handler)
    }


def _own_method_called(cls: ast.ClassDef, value: ast.expr | None) -> ast.FunctionDef | None:
    """The method of `cls` that `self.name()` calls, without arguments, neither a
    property nor a static or class method; None for any other expression."""
    if not (
        isinstance(value, ast.Call)
        and not value.args
        and not value.keywords
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "self"
    ):
        return None
    called = _method(cls, value.func.attr)
    if called is None or called.decorator_list or called.name.startswith("__"):
        return None
    if len(called.args.args) != 1 or called.args.vararg or called.args.kwonlyargs:
        return None
    return called


def _instance_parts_unknown(parts: tuple[MessagePart, ...]) -> tuple[MessagePart, ...] | None:
    """`parts` with each placeholder that reads the instance other than as a plain
    attribute made an unknown one; None where there is none."""
    masked = tuple(
        MessagePart(expr=UNKNOWN_STR)
        if part.expr is not None
        and "self" in part.expr
        and not _SELF_ATTRIBUTE.fullmatch(part.expr)
        else part
        for part in parts
    )
    return masked if masked != parts else None


def _percent_of(node: ast.expr, params: Sequence[str]) -> str | None:
    """PERCENT_OF for `param % other` or `param % (a, b)` of parameters; else None."""
    if not (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mod)
        and isinstance(node.left, ast.Name)
        and node.left.id in params
    ):
        return None
    values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
    names = [v.id for v in values if isinstance(v, ast.Name) and v.id in params]
    if not names or len(names) != len(values):
        return None
    return f"{PERCENT_OF}{node.left.id}|{','.join(names)}"


def _logging_style(method: ast.FunctionDef, returns: Sequence[ast.expr | None]) -> str | None:
    """PERCENT_OF for a __str__ whose one return outside its except clauses is
    `self.args[0] % self.args[1:]` (the arguments as logging takes them: a format
    string, then its values), for a class that keeps BaseException's __init__."""
    handled = {
        id(node)
        for handler in scope.walk(method)
        if isinstance(handler, ast.ExceptHandler)
        for node in scope.walk(handler)
    }
    tried = [value for value in returns if value is not None and id(value) not in handled]
    if len(tried) != 1:
        return None
    value = tried[0]
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod)):
        return None
    first, rest = value.left, value.right
    if not (
        _is_first_argument(first)
        and isinstance(rest, ast.Subscript)
        and _is_self_args(rest.value)
        and isinstance(rest.slice, ast.Slice)
        and isinstance(rest.slice.lower, ast.Constant)
        and rest.slice.lower.value == 1
        and rest.slice.upper is None
        and rest.slice.step is None
    ):
        return None
    return f"{PERCENT_OF}{FIRST_ARGUMENT}|*"


UNKNOWN_STR = "str(self)"  # the text a __str__ adds, which cannot be read
# what a __str__ of a class without __init__ reads of its first argument (`self.args[0]`,
# `super().__str__()`), a parameter of its own; and the name of the class raised
# (`self.__class__.__name__`), read when linking
FIRST_ARGUMENT = "__first_argument__"
CLASS_NAME = "__class_name__"


def _builtin_bases(cls: ast.ClassDef) -> bool:
    """Whether every base of the class is a builtin exception (`Exception`): then
    super().__str__() is BaseException's str() of the arguments."""
    return bool(cls.bases) and all(
        isinstance(base, ast.Name) and base.id in BUILTIN_EXCEPTIONS for base in cls.bases
    )


def _reads_first_argument(method: ast.FunctionDef) -> bool:
    return any(_is_first_argument(node) or _is_super_str(node) for node in scope.walk(method))


def _argument_position(node: ast.AST) -> int | None:
    """N of `self.args[N]` (N a literal, not negative), else None."""
    if (
        isinstance(node, ast.Subscript)
        and _is_self_args(node.value)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
        and node.slice.value >= 0
    ):
        return node.slice.value
    return None


def _is_first_argument(node: ast.AST) -> bool:
    """`self.args[0]`."""
    return _argument_position(node) == 0


def _positional(init: ast.FunctionDef) -> list[str]:
    """__init__'s positional parameters, self left out."""
    return [arg.arg for arg in (*init.args.posonlyargs, *init.args.args)][1:]


def _is_self_args(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "args"
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _is_super_str(node: ast.AST) -> bool:
    """`super().__str__()`: BaseException's str() of the arguments."""
    return (
        isinstance(node, ast.Call)
        and not node.args
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "__str__"
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == "super"
    )


# `if description is not None: self.description = description` over a class constant:
# the argument where the call passes one, else the constant of the class raised
OR_CONSTANT = "__argument_or_class_constant__."
_SELF_ATTRIBUTE = re.compile(r"self\.[A-Za-z_]\w*")


def _readable(parts: tuple[MessagePart, ...], params: Sequence[str]) -> bool:
    """A __str__'s template errscan can stand behind: literal text, or a parameter's
    text and a separator (`f"{self.message}\n    {self.source}"`, the message the call
    gives), and no part that reads the instance but as a plain attribute (`self.name`, a
    property, is a placeholder like any other)."""
    if all(part.expr == CLASS_NAME for part in parts):
        return True  # `return self.__class__.__name__`
    if not any(part.text and part.text.strip() for part in parts) and not (
        any(part.text for part in parts) and any(part.expr in params for part in parts)
    ):
        return False
    return _plain_reads(parts)


def _only(parts: tuple[MessagePart, ...], params: Sequence[str]) -> bool:
    """A template of one parameter's text, or its repr, and nothing else (`"%s" %
    self.msg`, `f"{self.msg!r}"`): what `return self.msg` (or `repr(self.msg)`) gives."""
    return (
        len(parts) == 1
        and parts[0].expr in params
        and parts[0].conversion in (None, "s", "r")
        and not parts[0].format_spec
    )


def _plain_reads(parts: tuple[MessagePart, ...]) -> bool:
    """Whether no part reads the instance but as a plain attribute."""
    return all(
        part.expr is None or "self" not in part.expr or _SELF_ATTRIBUTE.fullmatch(part.expr)
        for part in parts
    )


def _set_unless_none(init: ast.FunctionDef, attributes: dict[str, str]) -> set[str]:
    """The attributes __init__ sets from a parameter only where it is given:
    `if description is not None: self.description = description`."""
    found = set()
    for node in scope.own_nodes(init.body):
        if not isinstance(node, ast.If) or node.orelse:
            continue
        test = node.test
        if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
                and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot)
                and isinstance(test.comparators[0], ast.Constant)
                and test.comparators[0].value is None):  # fmt: skip
            continue
        for stmt in node.body:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Attribute)
                    and isinstance(stmt.targets[0].value, ast.Name)
                    and stmt.targets[0].value.id == "self"
                    and isinstance(stmt.value, ast.Name) and stmt.value.id == test.left.id
                    and attributes.get(stmt.targets[0].attr) == test.left.id):  # fmt: skip
                found.add(stmt.targets[0].attr)
    return found


def _repr_of(node: ast.expr, params: Sequence[str]) -> str | None:
    """The parameter whose repr `node` is (`repr(value)`, of `repr(self.value)` where
    __init__ keeps the parameter so), else None."""
    shown = _sole_argument(node, "repr")
    return shown.id if isinstance(shown, ast.Name) and shown.id in params else None


def _names_a_local(node: ast.expr) -> bool:
    """`repr(name)`: of a name of __str__'s own (or a global), not of what __init__ kept."""
    return isinstance(_sole_argument(node, "repr"), ast.Name)


def _sole_argument(node: ast.expr, function: str) -> ast.expr | None:
    """x of `function(x)`, a call by name of one positional argument (no keyword, no
    `*`), else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == function
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    ):
        return node.args[0]
    return None


def _uncast(node: ast.expr) -> ast.expr:
    """`t.cast(str, x)` / `cast(str, x)` is x, and so is `str(x)`: the text of x is what
    a placeholder of x shows."""
    if isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "cast":
            return node.args[1]
    text = _sole_argument(node, "str")
    return text if text is not None else node


def _led_by_parameter(
    node: ast.expr, params: Sequence[str], src: Source, lookup: message.Lookup
) -> tuple[MessagePart, ...] | None:
    """`param + a + b`: the parameter, then each operand's template (a placeholder where
    it has none); None for anything else. The parameter's argument, a string at the
    call, says the whole is one."""
    operands: list[ast.expr] = []
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        operands.insert(0, node.right)
        node = node.left
    if not operands or not (isinstance(node, ast.Name) and node.id in params):
        return None
    parts = [MessagePart(expr=node.id)]
    for operand in operands:
        found = message.template(operand, src, lookup)
        shown = found.parts if found is not None else (MessagePart(expr=src.expression(operand)),)
        parts.extend(shown)
    return tuple(message.merge(parts))


def _begins_with_the_arguments(value: ast.expr, method: ast.FunctionDef) -> bool:
    """Whether the text a __str__ returns begins with BaseException's str() of the
    arguments: `output = Exception.__str__(self)`, maybe `output += ...`, then `return
    output + path` (voluptuous's Invalid), or `super().__str__() + ...`."""
    for _ in range(8):
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            value = value.left
        elif isinstance(value, ast.JoinedStr) and value.values:
            first = value.values[0]
            if not (isinstance(first, ast.FormattedValue) and first.conversion == -1
                    and first.format_spec is None):  # fmt: skip
                return False
            value = first.value
        elif isinstance(value, ast.Name):
            # bound once (`output = ...`), then only added to (`output += ...`)
            bound = [
                node
                for node in scope.own_nodes(method.body)
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr))
                and any(isinstance(t, ast.Name) and t.id == value.id for t in _targets(node))
            ]
            plain = [node for node in bound if isinstance(node, ast.Assign)]
            added = [n for n in bound if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add)]
            if len(plain) != 1 or len(plain) + len(added) != len(bound):
                return False
            value = plain[0].value
        else:
            return _is_base_str(value)
    return False


def _passes_one(init: ast.FunctionDef) -> bool:
    """Whether each super().__init__ of __init__ passes one positional argument alone:
    BaseException's str() is then that argument's."""
    calls = list(_super_inits(scope.own_nodes(init.body)))
    return bool(calls) and all(
        len(args) == 1 and not isinstance(args[0], ast.Starred) and not call.keywords
        for call, args in calls
    )


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return [t for target in node.targets for t in scope.walk(target) if isinstance(t, ast.expr)]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
        return [node.target]
    return []


def _is_base_str(node: ast.expr) -> bool:
    """super().__str__(), Exception.__str__(self) (a builtin's), or self.args[0]."""
    if _is_super_str(node):
        return True
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "__str__"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in BUILTIN_EXCEPTIONS
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == "self"
    ):
        return True
    return _is_first_argument(node)


def _assigned_in(method: ast.FunctionDef, name: str) -> list[ast.expr]:
    """The values `name = ...` statements of the method's own give the local."""
    return [
        node.value
        for node in scope.own_nodes(method.body)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == name
    ]


def _joined_first(value: ast.expr, method: ast.FunctionDef, mapped: _Self) -> str | None:
    """For `"sep".join(lines)` of a list `lines = [first, ...]` assigned once in the
    method: the parameter `first` stands for; else None."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr == "join" and isinstance(value.func.value, ast.Constant)
            and len(value.args) == 1 and isinstance(value.args[0], ast.Name)):  # fmt: skip
        return None
    lists = _assigned_in(method, value.args[0].id)
    if len(lists) != 1 or not isinstance(lists[0], ast.List) or not lists[0].elts:
        return None
    first = _uncast(mapped.visit(copy.deepcopy(lists[0].elts[0])))
    return first.id if isinstance(first, ast.Name) else None


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == name), None)


def _attributes(init: ast.FunctionDef, params: set[str]) -> dict[str, str]:
    """`self.X = param` or `self.X = str(param)` in __init__: X stands for the parameter
    (where any assignment of X is one: the others are other paths to the same text)."""
    found: dict[str, str] = {}
    for node in scope.own_nodes(init.body):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == "self"):  # fmt: skip
            continue
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id == "str" and len(value.args) == 1):  # fmt: skip
            value = value.args[0]
        if isinstance(value, ast.Name) and value.id in params:
            found.setdefault(target.attr, value.id)
    return found


def _super_inits(nodes: Iterable[ast.AST]) -> Iterator[tuple[ast.Call, list[ast.expr]]]:
    """Each super().__init__(...) call among an __init__'s own nodes, with its positional
    arguments (`self` left out of `Base.__init__(self, ...)`)."""
    for node in nodes:
        if isinstance(node, ast.Call) and _is_super_init(node):
            yield node, node.args[1:] if _explicit_base(node) else node.args


def _passes_on_as_called(init: ast.FunctionDef, passed: list[ast.expr], call: ast.Call) -> bool:
    """Whether a super().__init__ call (`passed`: its positional arguments) passes on
    the positional arguments __init__ was called with and nothing else: each positional
    parameter by name in its place, then `*args` of __init__'s own `*args`, no keyword."""
    vararg = init.args.vararg
    params = _positional(init)
    if vararg is None or call.keywords or len(passed) != len(params) + 1:
        return False
    starred = passed[-1]
    return (
        isinstance(starred, ast.Starred)
        and isinstance(starred.value, ast.Name)
        and starred.value.id == vararg.arg
        and _in_place(passed[:-1], params)
    )


def _in_place(passed: Sequence[ast.expr], params: Sequence[str]) -> bool:
    """Whether the arguments `passed` are the parameters `params`, each by its name in
    its place."""
    return len(passed) == len(params) and all(
        isinstance(a, ast.Name) and a.id == p for a, p in zip(passed, params, strict=True)
    )


def _super_args(
    init: ast.FunctionDef | None, nodes: Sequence[ast.AST], src: Source
) -> tuple[tuple[str | None, str], ...]:
    """What __init__ (its own nodes) passes to super().__init__ (self left out), as
    source text; a local holding a message it made first (`message = f"..."`) as that
    message."""
    for call, args in _super_inits(nodes):
        if init is None:
            return ()
        if any(isinstance(a, ast.Starred) for a in args) or any(
            k.arg is None for k in call.keywords
        ):
            # case: super().__init__(*args, **kwargs), what the call gave passed on as
            # it is (its parameters first, in their order): str() of the call's arguments
            # case: super().__init__(msg % key, *args): a text made of them, not read
            params = _positional(init)
            before = [a for a in args if not isinstance(a, ast.Starred)]
            # every named parameter passed on, in its place: a parameter kept back
            # (pyrsistent's CheckedTypeError(source_class, ..., *args) passes on only
            # *args) leaves the text the call's other arguments
            # (pathvalidate's subclasses add a keyword the base's __str__ shows: `kwargs[
            # "reason"] = ...`, or `super().__init__(*args, reason=..., **kwargs)`)
            passed_on = (
                _in_place(before, params)
                and all(isinstance(a, ast.Starred) for a in args[len(before) :])
                and all(k.arg is None for k in call.keywords)
                and not _adds_keywords(init, nodes)
            )
            return () if passed_on else ((None, UNKNOWN_STR),)
        made = _made_messages(init, call, src)
        return (*((None, made.get(id(a)) or src.expression(a)) for a in args),
                *((k.arg, made.get(id(k.value)) or src.expression(k.value))
                  for k in call.keywords))  # fmt: skip
    return ()


def _made_messages(init: ast.FunctionDef, call: ast.Call, src: Source) -> dict[int, str]:
    """The source of the string expression each local name among `call`'s arguments
    holds, where __init__ assigns it once before the statement the call is in (by the
    argument node's id); a local of any other value is left a name."""
    holder = next(
        (stmt for stmt in init.body if any(node is call for node in scope.walk(stmt))), None
    )
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)}
    found: dict[int, str] = {}
    if holder is None:
        return found
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        if not isinstance(arg, ast.Name) or arg.id in params:
            continue
        chains = bindings.reaching(init.body, holder, arg.id)
        if not chains or len(chains) != 1 or len(chains[0]) != 1:
            continue
        value = chains[0][0]
        if isinstance(value, ast.JoinedStr) or (
            isinstance(value, ast.Constant) and isinstance(value.value, str)
        ):
            found[id(arg)] = src.expression(value)
    return found


def _plain_args(cls: ast.ClassDef, init_nodes: Sequence[ast.AST]) -> bool:
    """An __init__ (its own nodes) that leaves the exception's args as the call gave
    them: it calls no base's __init__ (not even through a helper it cannot see: any call
    of an attribute named __init__ counts), sets no self.args, and the class has no
    __new__."""
    if _method(cls, "__new__") is not None:
        return False
    for node in init_nodes:
        if isinstance(node, ast.Attribute) and node.attr in ("__init__", "args"):
            return False  # Base.__init__(...), super().__init__(...), self.args = ...
    return True


def _adds_keywords(init: ast.FunctionDef, nodes: Sequence[ast.AST]) -> bool:
    """Whether __init__ (its own nodes) adds to its `**kwargs` before passing them on:
    `kwargs["reason"] = ...`, `kwargs.update(...)`, `kwargs.setdefault(...)`."""
    kwarg = init.args.kwarg
    if kwarg is None:
        return False
    for node in nodes:
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            owner = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("update", "setdefault")
        ):
            owner = node.func.value
        else:
            continue
        if isinstance(owner, ast.Name) and owner.id == kwarg.arg:
            return True
    return False


def _passed_in_place(init: ast.FunctionDef, params: set[str]) -> dict[int, str]:
    """The parameters after the first that __init__'s one super().__init__ call passes
    on as they came (never assigned in __init__), by their place in `args`
    (`super().__init__(code, message)`: 1 -> message); none where it calls it more than
    once, nor from a `*` argument on."""
    nodes = list(scope.own_nodes(init.body))
    calls = list(_super_inits(nodes))
    if len(calls) != 1:
        return {}
    bound = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    found: dict[int, str] = {}
    for position, arg in enumerate(calls[0][1]):
        if isinstance(arg, ast.Starred):
            break
        if position and isinstance(arg, ast.Name) and arg.id in params and arg.id not in bound:
            found[position] = arg.id
    return found


def _passed_to_super(init: ast.FunctionDef, params: set[str]) -> str | None:
    """The parameter __init__ passes first to super().__init__, if one is."""
    for _, args in _super_inits(scope.own_nodes(init.body)):
        if args and isinstance(args[0], ast.Name) and args[0].id in params:
            return args[0].id
    return None


class _Self(ast.NodeTransformer):
    """self.X in a __str__: the parameter __init__ set it from (a name without a
    position, so that it reads as the parameter), or a class constant, to be read in
    the class raised (the name CLASS_CONSTANT + X)."""

    def __init__(
        self,
        attributes: dict[str, str],
        cls: str,
        constants: bindings.Constants,
        guarded: Collection[str] = (),
        super_str: bool = False,
    ) -> None:
        self.attributes = attributes
        self.cls = cls
        self.constants = constants
        self.guarded = guarded
        self.super_str = super_str

    def parts(self, parts: tuple[MessagePart, ...]) -> tuple[MessagePart, ...]:
        """`parts` with each placeholder of a plain `self.X` as visit_Attribute reads it:
        those of a local's value, which the return's visit does not reach."""
        out = []
        for part in parts:
            expr = part.expr
            if expr is not None and expr.startswith("self.") and expr[5:].isidentifier():
                name = ast.Name(id="self", ctx=ast.Load())
                read = self.visit_Attribute(
                    ast.Attribute(value=name, attr=expr[5:], ctx=ast.Load())
                )
                if isinstance(read, ast.Name):
                    part = part._replace(expr=read.id)
            out.append(part)
        return tuple(out)

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        held = self.attributes.get(f"args[{_argument_position(node)}]")
        if held is not None:  # `self.args[0]`, `self.args[1]`
            return ast.Name(id=held, ctx=ast.Load())
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        if self.super_str and _is_super_str(node) and "args[0]" in self.attributes:
            return ast.Name(id=self.attributes["args[0]"], ctx=ast.Load())
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        # case: self.__class__.__name__, type(self).__name__
        if node.attr == "__name__" and (
            (isinstance(node.value, ast.Attribute) and node.value.attr == "__class__"
             and isinstance(node.value.value, ast.Name) and node.value.value.id == "self")
            or (isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "type" and len(node.value.args) == 1
                and isinstance(node.value.args[0], ast.Name) and node.value.args[0].id == "self")
        ):  # fmt: skip
            return ast.Name(id=CLASS_NAME, ctx=ast.Load())
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            param = self.attributes.get(node.attr)
            value = self.constants.attribute(self.cls, node.attr)
            if param is not None and node.attr in self.guarded and isinstance(value, ast.Constant):
                return ast.Name(id=f"{OR_CONSTANT}{param}.{node.attr}", ctx=ast.Load())
            if param is not None:
                return ast.Name(id=param, ctx=ast.Load())
            if isinstance(value, ast.Constant):
                # a subclass may set it anew: read in the class raised, when linking
                return ast.Name(id=CLASS_CONSTANT + node.attr, ctx=ast.Load())
        self.generic_visit(node)
        return node


def _most_general(found: list[tuple[MessagePart, ...]]) -> tuple[MessagePart, ...]:
    """One template every path's text matches: the parts all share at the start and at
    the end, and one placeholder for what differs between them."""
    if len(set(found)) == 1:
        return found[0]
    start = 0
    while all(len(parts) > start for parts in found) and len({p[start] for p in found}) == 1:
        start += 1
    end = 0
    while (all(len(parts) - end > start for parts in found)
           and len({p[len(p) - 1 - end] for p in found}) == 1):  # fmt: skip
        end += 1
    middle = MessagePart(expr=UNKNOWN_STR)
    return (*found[0][:start], middle, *found[0][len(found[0]) - end :])


def _is_super_init(call: ast.Call) -> bool:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "__init__"):
        return False
    owner = func.value
    # case: super().__init__(...) / super(Cls, self).__init__(...)
    if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name):
        return owner.func.id == "super"
    # case: Base.__init__(self, ...)
    return _explicit_base(call)


def _init_of(nodes: Sequence[ast.AST], bases: tuple[str, ...], src: Source) -> str | None:
    """The base whose __init__ the class's __init__ (its own nodes) calls by name,
    `Base.__init__(self, ...)`, where that is not its first base; None for super()."""
    for call, _ in _super_inits(nodes):
        func = call.func
        if not _explicit_base(call) or not isinstance(func, ast.Attribute):
            return None
        named = src.expression(func.value)
        return named if not bases or named != bases[0] else None
    return None


def _explicit_base(call: ast.Call) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, (ast.Name, ast.Attribute))
        and bool(call.args)
        and isinstance(call.args[0], ast.Name)
        and call.args[0].id == "self"
    )


def _extended_before(
    function: ast.FunctionDef | ast.AsyncFunctionDef, stmt: ast.stmt, name: str
) -> bool:
    """Whether the function makes parameter `name` a text made of itself before
    statement `stmt` of its body (`msg = f"{msg} ..."`, `msg += ...`); a default put in
    its place (`if msg is None: msg = "..."`) is not one."""
    for node in scope.own_nodes(function.body[: function.body.index(stmt)]):
        if (
            isinstance(node, ast.AugAssign)
            and isinstance(node.op, ast.Add)
            and _names(node.target, name)
        ) or (
            isinstance(node, ast.Assign)
            and any(_names(t, name) for t in node.targets)
            and _joins(node.value, name)
        ):
            return True
    return False


def _names(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in scope.walk(node))


def _joins(value: ast.expr, name: str) -> bool:
    """Whether `value` is a text with the name's in it: `f"{msg} ..."`, `msg + "..."`."""
    if isinstance(value, ast.JoinedStr):
        return any(
            isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name)
            and v.value.id == name
            for v in value.values
        )  # fmt: skip
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return any(
            (isinstance(side, ast.Name) and side.id == name) or _joins(side, name)
            for side in (value.left, value.right)
        )
    return False


def _reaches_unbound(
    function: ast.FunctionDef | ast.AsyncFunctionDef, stmt: ast.stmt, name: str
) -> bool:
    """Whether a path reaches `stmt` with the parameter `name` as it came."""
    entry = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=ast.Constant(None))
    ast.copy_location(entry, function.body[0])
    chains = bindings.reaching([entry, *function.body], stmt, name)
    return chains is None or any(chain and chain[0] is entry.value for chain in chains)


class _InitLookup(message.NoLookup):
    """Local assignments of a method as they reach a statement (in __init__, the super()
    call; in __str__, a return); parameters stay placeholders."""

    def __init__(
        self,
        body: list[ast.stmt],
        stmt: ast.stmt,
        module: Mapping[str, ast.expr] | None = None,
        method: ast.FunctionDef | None = None,
    ) -> None:
        """`module`: the module's constants, read where `method` (whose parameters
        stay placeholders) binds no local of the name."""
        self.body = body
        self.stmt = stmt
        self.module = module or {}
        self.method = method
        self._own: set[str] | None = None  # the method's parameters and locals, once asked

    def local(self, name: str) -> list[bindings.Chain] | None:
        return bindings.reaching(self.body, self.stmt, name)

    def constant(self, node: ast.expr) -> ast.expr | None:
        # case: NAME, a module constant the method does not hide
        if not isinstance(node, ast.Name) or node.id not in self.module:
            return None
        if self._own is None:
            self._own = set()
            if self.method is not None:
                args = self.method.args
                every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                self._own = {a.arg for a in every if a is not None} | {
                    n.id for n in scope.own_nodes(self.method.body)
                    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
                }  # fmt: skip
        return None if node.id in self._own else self.module.get(node.id)
