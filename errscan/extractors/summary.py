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
from collections.abc import Iterator, Sequence

from errscan.extractors import bindings, message
from errscan.extractors.source import Source
from errscan.models import ClassInfo, FileSummary, Import, MessagePart


def summarize(
    tree: ast.Module,
    src: Source,
    constants: bindings.Constants,
    factories: Sequence[tuple[str, str]],
) -> FileSummary:
    """`factories`: what the sites walk found (sites.extract), so no second walk is made."""
    return FileSummary(
        imports=tuple(imports(tree)),
        classes=tuple(_classes(tree.body, (), src, constants)),
        factories=tuple(factories),
    )


def imports(tree: ast.Module) -> Iterator[Import]:
    """Names bound by imports at module level (under if/try too, not inside functions)."""
    for stmt in _module_statements(tree.body):
        # case: import a.b.c / import a.b as c
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    yield Import(alias.asname, 0, alias.name, None)
                else:
                    first = alias.name.split(".")[0]
                    yield Import(first, 0, first, None)
        # case: from .mod import name as alias
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if alias.name != "*":
                    module = stmt.module or ""
                    yield Import(alias.asname or alias.name, stmt.level, module, alias.name)


def _module_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            children = getattr(stmt, field, None)
            if children:
                for child in children:
                    if isinstance(child, ast.ExceptHandler):
                        yield from _module_statements(child.body)
                    else:
                        yield from _module_statements([child])


def _classes(
    body: Sequence[ast.stmt], outer: tuple[str, ...], src: Source, constants: bindings.Constants
) -> Iterator[ClassInfo]:
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            qualname = (*outer, stmt.name)
            params, parts = _init_template(stmt, src, constants)
            yield ClassInfo(
                qualname=".".join(qualname),
                bases=tuple(src.expression(base) for base in stmt.bases),
                doc=_first_paragraph(ast.get_docstring(stmt)),
                init_params=params,
                init_parts=parts,
            )
            yield from _classes(stmt.body, qualname, src, constants)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _classes(stmt.body, (*outer, stmt.name, "<locals>"), src, constants)


def _first_paragraph(doc: str | None) -> str | None:
    if not doc:
        return None
    paragraph = doc.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split()) or None


def _init_template(
    cls: ast.ClassDef, src: Source, constants: bindings.Constants
) -> tuple[tuple[str, ...] | None, tuple[MessagePart, ...]]:
    """`__init__(self, a, b): super().__init__(f"... {a} ...")`: the parameters and template."""
    init = next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is None:
        return None, ()
    params = [arg.arg for arg in (*init.args.posonlyargs, *init.args.args)][1:]
    params += [arg.arg for arg in init.args.kwonlyargs]
    for stmt in init.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and _is_super_init(call)) or not call.args:
            continue
        argument = call.args[1] if _explicit_base(call) and len(call.args) > 1 else call.args[0]
        # case: super().__init__(message), the parameter itself
        if isinstance(argument, ast.Name) and argument.id in params:
            return tuple(params), (MessagePart(expr=argument.id),)
        lookup = _InitLookup(init.body, stmt)
        found = message.template(argument, src, lookup)
        if found is not None:
            return tuple(params), found.parts
    return None, ()


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


def _explicit_base(call: ast.Call) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name | ast.Attribute)
        and bool(call.args)
        and isinstance(call.args[0], ast.Name)
        and call.args[0].id == "self"
    )


class _InitLookup:
    """Local assignments in __init__ before the super() call; parameters stay placeholders."""

    def __init__(self, body: list[ast.stmt], stmt: ast.stmt) -> None:
        self.body = body
        self.stmt = stmt

    def local(self, name: str) -> list[bindings.Chain] | None:
        return bindings.reaching(self.body, self.stmt, name)

    def constant(self, node: ast.expr) -> ast.expr | None:
        return None
