"""Raise, assert, exit and warning statements of one syntax tree, as file-local sites.

def load(path):
    if not path: raise ValueError(f"no path: {path!r}")
    ->  Site(kind="raise", exception="ValueError", message="no path: {path!r}", line=2, ...)
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import NamedTuple, cast

from errscan.extractors import (
    bindings,
    context,
    environment,
    exception,
    guards,
    helpers,
    message,
    scope,
    trigger,
)
from errscan.extractors.source import Source, cut, unparse
from errscan.models import Import, MessagePart, Site

# Fields of a statement or block that hold nested statements.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
_LOCALS = "<locals>"  # in a scope: inside a function
_MESSAGE_KEYWORDS = ("message", "msg", "reason", "detail", "description")

Handlers = tuple[ast.ExceptHandler, ...]


class _Frame(NamedTuple):  # a tuple: made for every block, faster than a dataclass
    """Where a statement stands: its scope, its function's body, the class around it,
    the except clauses and the path of statements that lead to it in its function."""

    scope: scope.Scope
    body: Sequence[ast.stmt]
    cls: str | None  # qualname of the class whose method (or body) this is
    handlers: Handlers
    path: tuple[guards.Step, ...] = ()
    function: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # the one it is in

    # what only a few sites ask of their function: read when asked, not for every function
    @property
    def is_property(self) -> bool:
        return self.function is not None and _is_property(self.function)

    @property
    def defaults(self) -> tuple[tuple[str, ast.expr], ...]:
        """The function's parameters whose default is a name (`exc_cls=errors.ArgumentError`)."""
        return () if self.function is None else _name_defaults(self.function)

    @property
    def annotated(self) -> tuple[tuple[str, ast.expr], ...]:
        """The function's parameters annotated with a class (`error: BuildError`)."""
        return () if self.function is None else _annotated(self.function)


class Extracted(NamedTuple):
    """What one walk of a syntax tree finds: its sites in source order, the functions
    that return or raise exactly one class by calling it (factories), with that class
    as written, and the import statements inside functions, in source order (for
    summary.summarize, which would otherwise walk the statements again for them)."""

    sites: list[Site]
    factories: list[tuple[str, str]]
    local_imports: list[ast.stmt]


def extract(
    tree: ast.Module,
    src: Source,
    radius: int = 15,
    constants: bindings.Constants | None = None,
    imported: Sequence[Import] = (),
) -> Extracted:
    """Every site, the factories and the imports inside functions (Extracted)."""
    reader = _SiteReader(src, radius, constants or bindings.Constants(tree), imported)
    reader.helpers = helpers.find(tree)
    reader.tree = tree
    sites = []
    # each function's returns and raises, by its scope: a factory returns one class by
    # calling it (raising others where it cannot build it), or, returning nothing,
    # raises one (_factory)
    made: dict[scope.Scope, tuple[list[_Ended], list[_Ended]]] = {}
    local_imports: list[ast.stmt] = []
    for node, frame in _walk(tree, local_imports):
        kind = type(node)  # exact: a parsed tree holds no subclass of a node class
        if (kind is ast.Return or kind is ast.Raise) and frame.scope[-1:] == ("<locals>",):
            returns, raises = made.setdefault(frame.scope, ([], []))
            ended = (cast(ast.Return | ast.Raise, node), frame)
            (returns if kind is ast.Return else raises).append(ended)
        if kind is not ast.Return and (site := reader.site(node, frame)):
            sites.append(site)
    ignored = _ignored_lines(src.text)
    if ignored:
        sites = [site for site in sites if site.line not in ignored]
    sites.sort(key=Site.sort_key)
    factories = [
        (scope.qualname(function), built)
        for function, (returns, raises) in made.items()
        if (built := _factory(returns or raises, src)) is not None
        # `def error(self, msg): raise NotImplementedError(...)`: an abstract method,
        # which the class that is called overrides, no factory of that error
        and (returns or built not in _ABSTRACT)
    ]
    wanted = {
        (function.rsplit(".", 1)[0], built.split(".")[1])
        for function, built in factories
        if _through_attribute(built) and "." in function
    }
    if wanted:
        attributes = _attribute_classes(tree, wanted)
        factories = [(f, _held_by(f, built, attributes)) for f, built in factories]
    local_imports.sort(key=lambda stmt: (stmt.lineno, stmt.col_offset))
    return Extracted(sites, factories, local_imports)


_Ended = tuple[ast.Return | ast.Raise, _Frame]  # a return or raise, with its frame
_ABSTRACT = frozenset(("NotImplementedError", "builtins.NotImplementedError"))


def _factory(ended: list[_Ended], src: Source) -> str | None:
    """The one thing all of a function's returns (or, where it has none, all its raises)
    give by calling something (_built), or None where they give two, or nothing."""
    for node, _frame in ended:
        # a value neither a call nor a name gives nothing: the others need not be read
        value = node.value if isinstance(node, ast.Return) else node.exc
        if not isinstance(value, (ast.Call, ast.Name)):
            return None
    found: set[str | None] = set()
    for node, frame in ended:
        found.add(_built(node, frame, src))
        if len(found) > 1:
            return None
    return found.pop() if found else None


def _built(node: ast.Return | ast.Raise, frame: _Frame, src: Source) -> str | None:
    """What a function's `return` or `raise` gives by calling something: the callee as
    written, RAISED_BEFORE for an exception it did not make, else None."""
    value = node.value if isinstance(node, ast.Return) else node.exc
    held = exception.with_a_traceback(value)
    if held is not None and not _made_here(frame.body, held, src.walrus_in(frame.body)):
        # jinja2's rewrite_traceback_stack: `return exc_value.with_traceback(tb)`
        return exception.RAISED_BEFORE
    value = exception.unwrapped(value)  # what `return exc.with_traceback(tb)` makes
    # `return cast(MissingContextError, self.error(...))`: the value, whatever the type
    # checker is told
    value = exception.cast_value(value) or value
    if isinstance(value, ast.Name):  # exc = Error(...); exc.__cause__ = ...; return exc
        value = _assigned_call(frame.body, value.id, src.walrus_in(frame.body))
    callee = value.func if isinstance(value, ast.Call) else None
    return unparse(callee) if isinstance(callee, (ast.Name, ast.Attribute)) else None


def _through_attribute(built: str) -> bool:
    """`self._src.parse_error`: a method of what an attribute holds."""
    return built.startswith("self.") and built.count(".") == 2


def _held_by(function: str, built: str, held: dict[tuple[str, str], str]) -> str:
    """`self._src.parse_error` of a method of a class whose __init__ sets `self._src =
    Source(...)` as `Source.parse_error` (tomlkit's Parser); else as written."""
    if not _through_attribute(built) or "." not in function:
        return built
    _, attribute, method = built.split(".")
    cls = held.get((function.rsplit(".", 1)[0], attribute))
    return f"{cls}.{method}" if cls is not None else built


def _attribute_classes(
    tree: ast.Module, wanted: set[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """(class qualname, attribute) -> the class, as written, whose instance the class's
    __init__ sets it to (`self._src = Source(text)`), for attributes no other statement
    of the class sets; of the classes and attributes `wanted` only."""
    out: dict[tuple[str, str], str] = {}
    attributes: dict[str, set[str]] = {}  # the attributes wanted, by class
    for qualname, attribute in wanted:
        attributes.setdefault(qualname, set()).add(attribute)
    for qualname, cls in _classes_of(tree.body, ()):
        names = attributes.get(qualname)
        if names is None:
            continue
        made: dict[str, str | None] = {}
        for method in cls.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in scope.own_statements(method.body):
                kind = type(node)  # exact: a parsed tree holds no subclass of a node class
                if kind is ast.Assign:
                    targets = cast(ast.Assign, node).targets
                elif kind is ast.AugAssign or kind is ast.AnnAssign:
                    targets = [cast(ast.AugAssign | ast.AnnAssign, node).target]
                else:
                    continue
                set_here = [
                    target.attr
                    for target in targets
                    if isinstance(target, ast.Attribute)
                    and target.attr in names
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ]
                if not set_here:
                    continue
                # the one class an `__init__`'s `self.X = Class(...)` makes, else None
                call = cast(ast.Assign, node).value if kind is ast.Assign else None
                callee = call.func if isinstance(call, ast.Call) else None
                written = None
                if (
                    method.name == "__init__"
                    and len(targets) == 1
                    and isinstance(callee, (ast.Name, ast.Attribute))
                ):
                    text = unparse(callee)
                    if exception.looks_like_class_name(text.rsplit(".")[-1]):
                        written = text
                for attribute in set_here:  # set twice: which instance it holds is not known
                    made[attribute] = None if attribute in made else written
        out.update(((qualname, a), c) for a, c in made.items() if c is not None)
    return out


def _classes_of(
    body: Sequence[ast.stmt], outer: tuple[str, ...]
) -> Iterator[tuple[str, ast.ClassDef]]:
    """Every class of a module (not those inside functions), by qualname."""
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            qualname = (*outer, stmt.name)
            yield ".".join(qualname), stmt
            yield from _classes_of(stmt.body, qualname)


_IGNORE = re.compile(r"#\s*errscan:\s*ignore\b")


def _ignored_lines(text: str) -> set[int]:
    """Lines whose comment says `# errscan: ignore`: a site starting there is left out
    (a comment, never the same words inside a string)."""
    if "errscan:" not in text:
        return set()
    found = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and _IGNORE.match(token.string):
                found.add(token.start[0])
    except (tokenize.TokenError, SyntaxError, ValueError):
        return set()  # what `ast` parsed, tokenize rarely refuses: then nothing is left out
    return found


def _after_early_exits(
    children: Sequence[ast.stmt], frame: _Frame, imports: list[ast.stmt] | None
) -> list[tuple[ast.stmt, _Frame]]:
    """The statements of a block with their frames: a statement after `if COND: return`
    (raise, continue, break) is reached only when COND is false, a condition of its own.
    `imports`: where the block's import statements go (None: nowhere)."""
    out = []
    for child in children:
        kind = type(child)
        if kind not in _LEAVES:
            out.append((child, frame))
        elif imports is not None and (kind is ast.Import or kind is ast.ImportFrom):
            imports.append(child)
        # early_exit asked of an `if` only: the check is made for every statement
        if kind is ast.If and frame.scope and guards.early_exit(child):  # in a function only
            frame = _Frame(
                frame.scope, frame.body, frame.cls, frame.handlers,
                (*frame.path, (child, guards.EARLY)), frame.function,
            )  # fmt: skip
    return out


def _exc_info_value(raised: ast.expr | None, body: Sequence[ast.stmt]) -> bool:
    """Whether what is raised is the exception of an exc_info triple, (type, value,
    traceback) as sys.exc_info() gives it: `raise exc_info[1]` (asgiref's, httpx's WSGI
    transport's), or `exc` of `etype, exc, tb = exc_info` bound once (webob's reraise):
    an exception raised before."""
    if isinstance(raised, ast.Subscript):
        index = raised.slice
        return (
            _names_exc_info(raised.value) and isinstance(index, ast.Constant) and index.value == 1
        )
    if not isinstance(raised, ast.Name):
        return False
    bound = [node for node in scope.own_nodes(body) if raised.id in _bound_names(node)]
    if len(bound) != 1 or not isinstance(bound[0], ast.Assign) or len(bound[0].targets) != 1:
        return False
    target, value = bound[0].targets[0], bound[0].value
    return (
        isinstance(target, ast.Tuple)
        and len(target.elts) == 3
        and isinstance(target.elts[1], ast.Name)
        and target.elts[1].id == raised.id
        and (_names_exc_info(value) or _calls_exc_info(value))
    )


def _names_exc_info(node: ast.expr) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return isinstance(name, str) and name.lstrip("_").endswith("exc_info")


def _calls_exc_info(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and _names_exc_info(node.func) and not node.args


def _made_here(body: Sequence[ast.stmt], held: ast.expr, walrus: bool) -> bool:
    """Whether the function builds the exception a name holds by a call (a cast of what
    it holds is not one)."""
    if not isinstance(held, ast.Name):
        return False
    call = _assigned_call(body, held.id, walrus)
    return call is not None and exception.cast_value(call) is None


def _assigned_call(body: Sequence[ast.stmt], name: str, walrus: bool) -> ast.expr | None:
    """The call a function assigns to `name`, where every assignment to it is one call
    of the same callee (and none is nested in another function); else None. `walrus`:
    whether the file has a `:=`, without which only statements bind names."""
    calls: list[ast.Call] = []
    for node in scope.own_nodes(body) if walrus else scope.own_statements(body):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                if not isinstance(node.value, ast.Call) or isinstance(node, ast.AugAssign):
                    return None
                calls.append(node.value)
    callees = {unparse(call.func) for call in calls}
    return calls[0] if len(callees) == 1 else None


# statements that hold no statements, nor are what _walk looks for: never visited
_LEAVES = frozenset(
    (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Import, ast.ImportFrom, ast.Pass, ast.Break,
     ast.Continue, ast.Delete, ast.Global, ast.Nonlocal)
)  # fmt: skip


def _walk(tree: ast.Module, local_imports: list[ast.stmt]) -> Iterator[tuple[ast.stmt, _Frame]]:
    """Each raise, assert and expression statement with its frame; the import
    statements inside functions (at any depth: in a class of a function too) go to
    `local_imports`, in no particular order.

    Only statement lists are visited (what errscan looks for are statements), with an
    explicit stack, so neither expression size nor block depth costs recursion.
    """
    stack: list[tuple[ast.AST, _Frame]] = [(tree, _Frame((), tree.body, None, ()))]
    pop, extend = stack.pop, stack.extend
    while stack:
        node, frame = pop()
        kind = type(node)
        if kind in _YIELDED:
            yield cast(ast.stmt, node), frame
            continue
        # by exact type: a parsed tree holds no subclass of a node class
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            function = cast(ast.FunctionDef, node)
            names = scope.enter(frame.scope, function)
            inner = _Frame(names, function.body, frame.cls, (), (), function)
        elif kind is ast.ClassDef:
            names = scope.enter(frame.scope, node)
            inner = _Frame(names, cast(ast.ClassDef, node).body, scope.qualname(names), ())
        elif kind is ast.ExceptHandler:
            handlers = (*frame.handlers, cast(ast.ExceptHandler, node))
            inner = _Frame(frame.scope, frame.body, frame.cls, handlers, frame.path, frame.function)
        else:
            inner = frame
        imports = local_imports if _LOCALS in inner.scope else None
        for field, conditional in _blocks_of(node):
            children = getattr(node, field)
            if children:
                child_frame = inner
                if conditional:
                    child_frame = _Frame(
                        inner.scope,
                        inner.body,
                        inner.cls,
                        inner.handlers,
                        (*inner.path, (node, field)),
                        inner.function,
                    )
                extend(reversed(_after_early_exits(children, child_frame, imports)))


_YIELDED = frozenset((ast.Raise, ast.Assert, ast.Expr, ast.Return))
# by kind of node: its statement lists (in _BODIES's order), each with whether it puts a
# condition on what it holds (guards.conditional: the same for every node of a kind)
_BLOCKS: dict[type, tuple[tuple[str, bool], ...]] = {}
_UNCONDITIONAL = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _blocks_of(node: ast.AST) -> tuple[tuple[str, bool], ...]:
    kind = type(node)
    found = _BLOCKS.get(kind)
    if found is None:
        plain = kind in _UNCONDITIONAL
        fields = [field for field in _BODIES if field in kind._fields]
        found = tuple((f, not plain and guards.conditional(node, f)) for f in fields)
        _BLOCKS[kind] = found
    return found


def _is_property(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        name = (
            decorator.attr if isinstance(decorator, ast.Attribute) else getattr(decorator, "id", "")
        )
        if name in ("property", "cached_property", "setter", "getter"):
            return True
    return False


class _SiteReader:
    def __init__(
        self, src: Source, radius: int, constants: bindings.Constants, imported: Sequence[Import]
    ) -> None:
        self.src = src
        self.radius = radius
        self.mentions = environment.Mentions(src.lines)
        self.constants = constants
        self.prefixes = bindings.Prefixes()
        self.module = trigger.MODULE
        self.modules = {i.local: i.module for i in imported if i.name is None and i.level == 0}
        self.names = {i.local: f"{i.module}.{i.name}" for i in imported if i.name is not None}
        self.helpers = helpers.Helpers({}, {})
        self.tree: ast.Module | None = None
        self._bound: dict[str, tuple[tuple[str, ast.expr], ...]] | None = None

    def site(self, node: ast.stmt, frame: _Frame) -> Site | None:
        if isinstance(node, ast.Assert):
            thrown = exception.Raised.with_message("AssertionError", node.msg, self.src)
            return self._site(node, frame, "assert", thrown)
        if isinstance(node, ast.Raise):
            return self._raise(node, frame)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            return self._call(node, node.value, frame)
        return None

    def _raise(self, node: ast.Raise, frame: _Frame) -> Site:
        raised = exception.unwrapped(node.exc)  # `raise E(...).with_traceback(tb)`
        # `raise t.cast(BadSignature, last_error)`: what the cast holds is raised
        held = exception.cast_value(raised) or raised
        caught = _reraised(held, frame.handlers)
        if caught is None and isinstance(held, ast.Name) and frame.scope:
            caught = _stored_caught(frame.body, held.id)
        if caught is not None:
            thrown = exception.Raised(None, None, (), False)
            return self._site(node, frame, "reraise", thrown, reraises=caught)
        built = self._built_elsewhere(node, raised, frame)
        held = exception.with_a_traceback(node.exc)
        walrus = self.src.walrus_in(frame.body)
        if (held is not None and not _made_here(frame.body, held, walrus)) or (
            # read once per file, where a raise asks: whether one can be of an exc_info's
            self.src.holds("exc_info") and _exc_info_value(raised, frame.body)
        ):
            # an exception raised before, raised again with its traceback
            thrown = exception.Raised(None, None, (), False)
            return self._site(node, frame, "reraise", thrown, reraises=())
        annotation = (
            _annotation_raised(built, frame)
            or _class_set(built, node, frame)
            or _narrowed(built, frame)
            or _own_instance(built, frame)
        )
        if annotation is not None:  # `raise error` of `error: BuildError`
            thrown = exception.Raised(unparse(annotation), None, (), no_message=False)
            return self._site(node, frame, "raise", thrown)
        defaults = frame.defaults + self._bound_by_callers(built, frame)
        thrown = exception.raised(_defaulted(_of_cls(built, frame), defaults), self.src)
        if thrown.exception == "SystemExit":
            status = thrown.positional[0] if thrown.positional else None
            return self._exit(node, frame, _exit_code_is_no_message(thrown, self.src), status)
        return self._site(node, frame, "raise", thrown)

    def _exit(
        self,
        node: ast.stmt,
        frame: _Frame,
        thrown: exception.Raised,
        status: ast.expr | None,
        ref: str | None = None,
    ) -> Site:
        """An exit site; one with a failing status and no message of its own has the line
        the statement before it prints on stderr (`print(msg, file=sys.stderr)`,
        `sys.stderr.write(msg)`, `click.echo(msg, err=True)`), which its user sees."""
        failing = thrown.message is None and _failing_status(status)
        printed = self._printed_before(node, frame.body) if failing else None
        if printed is None:
            return self._site(node, frame, "exit", thrown, ref=ref)
        said = exception.Raised.with_message("SystemExit", printed, self.src)
        return self._site(node, frame, "exit", said, ref=ref, line_end=True)

    def _printed_before(self, node: ast.stmt, body: Sequence[ast.stmt]) -> ast.expr | None:
        """The one argument the statement before `node` in its block (of `body`, its
        function's) prints on stderr."""
        before = _statement_before(body, node)
        call = before.value if isinstance(before, ast.Expr) else None
        if not isinstance(call, ast.Call) or len(call.args) != 1:
            return None
        if isinstance(call.args[0], ast.Starred):
            return None
        keywords = {kw.arg: kw.value for kw in call.keywords}
        func = call.func
        if isinstance(func, ast.Name) and func.id == "print" and "print" not in self.names:
            target = keywords.get("file")
            printed = target is not None and self._callee(target) == "sys.stderr"
            printed = printed and set(keywords) <= {"file", "flush"}
        elif isinstance(func, ast.Attribute) and func.attr == "write":
            printed = not keywords and self._callee(func.value) == "sys.stderr"
        else:
            err = keywords.get("err")
            printed = (
                self._callee(func) in _ECHOES
                and isinstance(err, ast.Constant)
                and err.value is True
            )
        said = call.args[0]
        if isinstance(said, ast.Constant) and not str(said.value).strip():
            return None  # `print(file=sys.stderr)`'s empty line says nothing
        return said if printed else None

    def _bound_by_callers(
        self, built: ast.expr | None, frame: _Frame
    ) -> tuple[tuple[str, ast.expr], ...]:
        """What every call in the module gives the parameters of the private function
        raising `built` (see _bound_by_callers): read once per module, and only for a
        raise of a call of a name a module-level function's frame does not bind."""
        if not (
            frame.scope[1:] == ("<locals>",)  # the body of a module-level function
            and frame.scope[0].startswith("_")
            and isinstance(built, ast.Call)
            and isinstance(built.func, ast.Name)
            and not exception.looks_like_class_name(built.func.id)  # a parameter's name
            and self.tree is not None
        ):
            return ()
        if self._bound is None:
            self._bound = _bound_by_callers(self.tree)
        return self._bound.get(frame.scope[0], ())

    def _built_elsewhere(
        self, node: ast.Raise, raised: ast.expr | None, frame: _Frame
    ) -> ast.expr | None:
        """`err = ValueError(...); ...; raise err`: the call that built what is raised."""
        if not isinstance(raised, ast.Name):
            return raised
        chains = bindings.reaching(frame.body, node, raised.id, self.prefixes)
        if chains and len(chains) == 1 and len(chains[0]) == 1:
            built = chains[0][0]
            if isinstance(built, ast.Call):
                return built
        return raised

    def _call(self, node: ast.Expr, call: ast.Call, frame: _Frame) -> Site | None:
        callee = self._callee(call.func)
        # case: sys.exit("message"), exit(...), quit(...)
        if callee in ("sys.exit", "builtins.exit", "builtins.quit"):
            first = call.args[0] if call.args else None
            thrown = exception.Raised.with_message("SystemExit", first, self.src)
            thrown = _exit_code_is_no_message(thrown, self.src)
            return self._exit(node, frame, thrown, first, ref="SystemExit")
        # case: warnings.warn("message", Category) / warn(..., category=Category)
        if callee in ("warnings.warn", "warnings.warn_explicit"):
            thrown = _warning(call, self.src)
            return self._site(node, frame, "warning", thrown)
        # case: parser.error("..."), argparse's or optparse's: the usage, then `PROG:
        # error: MESSAGE` on stderr, and the exit status 2
        if (
            isinstance(call.func, ast.Attribute)
            and call.func.attr == "error"
            and len(call.args) == 1
            and not call.keywords
            and not isinstance(call.args[0], ast.Starred)
        ):
            prog = self._option_parser(node, call.func.value, frame)
            if prog is not None:
                thrown = exception.Raised.with_message("SystemExit", call.args[0], self.src)
                return self._site(node, frame, "exit", thrown, ref="SystemExit", before=prog)
        # case: self.fail(f"..."), a call of a helper of this file that always raises
        helper = self.helpers.for_call(call.func, frame.cls)
        built = helpers.called(helper, call) if helper is not None else None
        if built is not None:
            thrown = exception.raised(_defaulted(built, frame.defaults), self.src)
            if thrown.exception == "SystemExit":
                return self._site(node, frame, "exit", _exit_code_is_no_message(thrown, self.src))
            return self._site(node, frame, "raise", thrown)
        return None

    def _option_parser(
        self, node: ast.stmt, receiver: ast.expr, frame: _Frame
    ) -> tuple[MessagePart, ...] | None:
        """What argparse's or optparse's `error()` prints before the message, `PROG:
        error: `, where `receiver` is such a parser: a local made by
        `argparse.ArgumentParser(...)` or `optparse.OptionParser(...)` (a class whose name
        ends so too), or a parameter annotated with one; the program's name as the call
        gives it (`prog="tool"`), else `{parser.prog}`. None for anything else."""
        if not isinstance(receiver, ast.Name):
            return None
        made: ast.expr | None = None
        chains = bindings.reaching(frame.body, node, receiver.id, self.prefixes)
        if chains and len(chains) == 1 and len(chains[0]) == 1:
            made = chains[0][0]
        if isinstance(made, ast.Call):
            name = self._callee(made.func) or unparse(made.func)
            if not name.endswith(_OPTION_PARSERS):
                return None
            prog = next((kw.value for kw in made.keywords if kw.arg == "prog"), None)
            if prog is None and made.args and name.endswith("ArgumentParser"):
                prog = made.args[0]  # ArgumentParser(prog=None, usage=None, ...)
            if isinstance(prog, ast.Constant) and isinstance(prog.value, str):
                return (MessagePart(text=f"{prog.value}: error: "),)
        elif chains is not None or not any(
            name == receiver.id and unparse(annotation).endswith(_OPTION_PARSERS)
            for name, annotation in frame.annotated
        ):
            return None
        return (MessagePart(expr=f"{receiver.id}.prog"), MessagePart(text=": error: "))

    def _callee(self, func: ast.expr) -> str | None:
        """The dotted name a called function is, by the file's imports."""
        if isinstance(func, ast.Name):
            if func.id in self.names:
                return self.names[func.id]
            if func.id in ("exit", "quit") and func.id not in self.constants.module:
                return f"builtins.{func.id}"
            return None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            module = self.modules.get(func.value.id)
            return f"{module}.{func.attr}" if module else None
        return None

    def _site(
        self,
        node: ast.stmt,
        frame: _Frame,
        kind: str,
        thrown: exception.Raised,
        ref: str | None = None,
        reraises: tuple[str, ...] = (),
        before: tuple[MessagePart, ...] = (),
        line_end: bool = False,
    ) -> Site:
        """`before`: what is printed before the message (argparse's `PROG: error: `);
        `line_end`: a message written with its line's end, which is no part of it."""
        src = self.src
        lookup = _Lookup(frame, node, self.constants, self.prefixes, self.src)
        found, source, rest = self._message(thrown, lookup)
        if before:
            found = [message.Template(tuple(message.merge([*before, *t.parts])), t.source)
                     for t in found]  # fmt: skip
        if line_end:
            found = [message.Template(_without_line_end(t.parts), t.source) for t in found]
        line = node.lineno
        end_line = node.end_lineno or line
        cause = getattr(node, "cause", None)
        factory = thrown.factory and source not in ("none", "unresolved")
        conditions = guards.guards(frame.path, node, src)
        call = node.exc if isinstance(node, ast.Raise) else getattr(node, "value", None)
        looked_at = [*guards.conditions(frame.path, node), *([call] if call else [])]
        statement = "\n".join(src.lines[line - 1 : end_line])
        hinted = environment.may_read(" ".join(conditions)) or environment.may_read(statement)
        env_vars = environment.read_in(looked_at) if hinted else []
        text = found[0].text if found else None
        for name in environment.mentioned(text, self.mentions, range(line, end_line + 1)):
            if name not in env_vars:
                env_vars.append(name)
        function = scope.qualname(frame.scope)
        return Site(
            kind=kind,
            exception=thrown.exception,
            message=found[0].text if found else None,
            message_parts=found[0].parts if found else (),
            message_source="factory" if factory else source,
            message_candidates=tuple(t.text for t in found),
            args=tuple(cut(arg) for arg in rest),
            cause=cut(src.expression(cause)) if cause is not None else None,
            reraises=reraises,
            guards=conditions,
            env_vars=tuple(env_vars),
            trigger=trigger.sentence(
                kind, function, self.module, conditions, env_vars, frame.is_property
            ),
            file=src.path,
            line=line,
            end_line=end_line,
            col=src.column(line, node.col_offset),
            function=function,
            context=context.around(src, line, end_line, self.radius),
            message_expr=cut(src.expression(thrown.message))
            if thrown.message is not None
            else None,
            exception_ref=ref if ref is not None else self._made_by(thrown.exception, frame),
            call_args=thrown.call_args,
        )

    def _made_by(self, written: str | None, frame: _Frame) -> str | None:
        """`parser.parse_error` of a local the function sets to an instance, `parser =
        Parser(text)` (tomlkit's api.parse), as the method of its class it is:
        `Parser.parse_error`; of a parameter annotated with a class and never bound
        again, that class's: elementpath's module functions, given to token classes at
        run time, `def evaluate(self: XPathFunction, ...)` with `raise
        self.error('XPTY0004')` -> `XPathFunction.error` (`self` and `cls` so only outside
        a class, whose own methods they are there); else as written."""
        if written is None or written.count(".") != 1 or not frame.scope:
            return written
        name, method = written.split(".")
        if exception.looks_like_class_name(method):
            return written
        if name in ("self", "cls"):
            return self._annotated_as(name, method, frame) if frame.cls is None else written
        call = _assigned_call(frame.body, name, self.src.walrus_in(frame.body))
        callee = call.func if isinstance(call, ast.Call) else None
        if not isinstance(callee, (ast.Name, ast.Attribute)):
            return self._annotated_as(name, method, frame)
        made = unparse(callee)
        if not exception.looks_like_class_name(made.rsplit(".")[-1]):
            return written
        return f"{made}.{method}"

    def _annotated_as(self, name: str, method: str, frame: _Frame) -> str:
        """`Class.method` where the parameter `name` is annotated with a class and the
        function binds it nowhere; else `name.method`."""
        annotation = dict(frame.annotated).get(name)
        if annotation is None or any(
            name in _bound_names(node) for node in scope.own_nodes(frame.body)
        ):
            return f"{name}.{method}"
        return f"{unparse(annotation)}.{method}"

    def _message(
        self, thrown: exception.Raised, lookup: _Lookup
    ) -> tuple[list[message.Template], str, tuple[str, ...]]:
        """Candidates, message_source and the other arguments."""
        # case: the first positional argument that reads as a string is the message
        candidates = thrown.positional if thrown.positional else ()
        for i, arg in enumerate(candidates):
            if isinstance(arg, ast.Tuple) and len(candidates) > 1:
                continue  # a tuple is the text only as the one argument: str() of it
            found = message.templates(arg, self.src, lookup)
            if found and arg is thrown.message:
                return found, found[0].source, thrown.args
            if found:
                others = [self.src.expression(a) for j, a in enumerate(candidates) if j != i]
                return found, found[0].source, (*others, *thrown.keywords)
        # case: no positional string: message=, msg=, reason=, detail=, description=
        for keyword, value in thrown.keyword_values:
            if keyword in _MESSAGE_KEYWORDS:
                found = message.templates(value, self.src, lookup)
                if found:
                    kept = [kw for kw in thrown.keywords if not kw.startswith(f"{keyword}=")]
                    positional = [self.src.expression(a) for a in candidates]
                    return found, "keyword", (*positional, *kept)
        if thrown.message is not None:
            return [], "unresolved", thrown.args
        return [], "none" if thrown.no_message else "unresolved", thrown.args


class _Lookup:
    """Names in a message: assignments in the site's function, then the file's constants."""

    def __init__(
        self,
        frame: _Frame,
        stmt: ast.stmt,
        constants: bindings.Constants,
        prefixes: bindings.Prefixes,
        src: Source,
    ) -> None:
        self.frame = frame
        self.stmt = stmt
        self.constants = constants
        self.prefixes = prefixes
        self.src = src
        self._cache: dict[str, list[bindings.Chain] | None] = {}

    def local(self, name: str) -> list[bindings.Chain] | None:
        if name not in self._cache:
            found = bindings.reaching(self.frame.body, self.stmt, name, self.prefixes)
            if found is not None:
                found.sort(key=lambda chain: (chain[0].lineno, chain[0].col_offset))
            self._cache[name] = found
        return self._cache[name]

    def function(self, name: str) -> ast.FunctionDef | None:
        """The text function (bindings.text_functions) `name` calls here: one a function
        around the site defines (sqlglot's `def _error(msg): return f"{msg} at index
        {i}: {path}"`, called in the functions beside it), else the module's, where no
        local of the site's function hides it."""
        if not self.src.holds(f"def {name}("):
            return None  # the file defines no function of that name (most calls)
        function = self.frame.function
        if function is not None:
            defined = (name in bindings.defined_names(stmt) for stmt in function.body)
            if any(defined) or self.local(name):
                # the site's own function binds it: only as a text function of its own
                return bindings.text_functions(function.body).get(name)
            found = self.constants.nested_function(name, self.stmt.lineno)
            if found is not None:  # a function around the site's defines it
                return found
        return self.constants.functions.get(name)

    def defaulted(self, name: str) -> bool:
        """Whether the site's function gives local `name` a text of its own where it
        holds none, before the site: `if name is None:` (or `if not name:`) of a body
        that assigns it, among the statements of the function's body."""
        for stmt in self.frame.body:
            if stmt.lineno >= self.stmt.lineno:
                return False
            if (
                isinstance(stmt, ast.If)
                and not stmt.orelse
                and _tests_unset(stmt.test, name)
                and any(
                    isinstance(s, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)
                    for s in stmt.body
                )
            ):
                return True
        return False

    def parameter(self, name: str) -> bool:
        """Whether `name` is a parameter of the site's function."""
        function = self.frame.function
        if function is None:
            return False
        args = function.args
        every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        return any(arg is not None and arg.arg == name for arg in every)

    def constant(self, node: ast.expr) -> ast.expr | None:
        # case: NAME, a module constant
        if isinstance(node, ast.Name):
            return self.constants.module.get(node.id)
        if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
            return None
        owner = node.value.id
        # case: self.NAME / cls.NAME, an attribute of the enclosing class
        if owner in ("self", "cls") and self.frame.cls is not None:
            return self.constants.attribute(self.frame.cls, node.attr)
        # case: Class.NAME, a class of this file
        return self.constants.attribute(owner, node.attr)


def _tests_unset(test: ast.expr, name: str) -> bool:
    """`name is None`, or `not name`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return isinstance(test.operand, ast.Name) and test.operand.id == name
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == name
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


def _reraised(raised: ast.expr | None, handlers: Handlers) -> tuple[str, ...] | None:
    """For a bare `raise`, or `raise e` of what an `except ... as e` caught: the caught
    classes as written (BaseException for a bare `except:`); else None."""
    if not handlers:
        return () if raised is None else None
    if raised is None:
        return _caught(handlers[-1])
    if isinstance(raised, ast.Name):
        for handler in reversed(handlers):
            if handler.name == raised.id:
                return _caught(handler)
    return None


def _stored_caught(body: Sequence[ast.stmt], name: str) -> tuple[str, ...] | None:
    """`raise sig_error` of a local that holds what an except clause caught, or None:
    `sig_error = None` on one path, `except BadSignature as e: sig_error = e` on the
    others. The caught classes as written; None where anything else is assigned."""
    if not any(_clears(stmt, name) for stmt in scope.own_statements(body)):
        return None  # the commonest answer, without the walk of every expression below
    stored: list[tuple[str, ...]] = []
    cleared = False
    handlers: list[ast.ExceptHandler] = []
    assigned: list[ast.Assign] = []  # the plain `name = ...`, in the walk's order
    for node in scope.own_nodes(body):  # one walk for the handlers and the assignments
        if isinstance(node, ast.ExceptHandler) and node.name:
            handlers.append(node)
        if scope.rebinds(node, name):
            return None
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            assigned.append(node)
    if not assigned:
        return None
    held = {id(n.value): h for h in handlers for n in scope.own_nodes(h.body)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
            and n.value.id == h.name}  # fmt: skip
    for node in assigned:
        if len(node.targets) != 1:
            return None
        if isinstance(node.value, ast.Constant) and node.value.value is None:
            cleared = True
        elif id(node.value) in held:
            stored.append(_caught(held[id(node.value)]))
        else:
            return None
    if not cleared or not stored:
        return None
    return tuple(dict.fromkeys(kind for kinds in stored for kind in kinds))


def _clears(stmt: ast.stmt, name: str) -> bool:
    """`name = None`: the assignment _stored_caught needs on some path."""
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id == name
        and isinstance(stmt.value, ast.Constant)
        and stmt.value.value is None
    )


def _annotated(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[tuple[str, ast.expr], ...]:
    """Parameters annotated with a class by name (`error: BuildError`, `e: "exc.Error"`)."""
    args = node.args
    found = []
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        annotation = arg.annotation
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                continue
        if isinstance(annotation, (ast.Name, ast.Attribute)) and exception.looks_like_class_name(
            annotation.id if isinstance(annotation, ast.Name) else annotation.attr
        ):
            found.append((arg.arg, annotation))
    return tuple(found)


def _annotation_raised(raised: ast.expr | None, frame: _Frame) -> ast.expr | None:
    """The class a raised parameter is annotated with, where the function assigns it
    nothing but what an except clause caught (`except BuildError as e: error = e`)."""
    if not isinstance(raised, ast.Name) or not frame.annotated:
        return None
    annotation = dict(frame.annotated).get(raised.id)
    if annotation is None or unparse(annotation) in ("Exception", "BaseException"):
        return None  # any exception at all: no class to name
    handlers = {h.name for h in scope.own_nodes(frame.body) if isinstance(h, ast.ExceptHandler)}
    for node in scope.own_nodes(frame.body):
        if scope.rebinds(node, raised.id):
            return None
        if (
            isinstance(node, ast.Assign)
            and not (isinstance(node.value, ast.Name) and node.value.id in handlers)
            and any(
                isinstance(t, ast.Name) and t.id == raised.id
                for target in node.targets
                for t in scope.walk(target)
            )
        ):
            return None
    return annotation


def _narrowed(raised: ast.expr | None, frame: _Frame) -> ast.expr | None:
    """The class an `if` around the raise checks the raised name is: boltons's `if
    ret.__class__ is FrozenHashError: raise ret`, `isinstance(err, BuildError)`,
    `type(err) is BuildError` (the innermost such test; none where the name is bound
    again inside it, nor for Exception or BaseException, which name no class)."""
    if not isinstance(raised, ast.Name):
        return None
    for node, field in reversed(frame.path):
        if not isinstance(node, ast.If) or field != "body":
            continue
        tests = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(
            node.test.op, ast.And
        ) else [node.test]  # fmt: skip
        for test in tests:
            checked = _checked_class(test, raised.id)
            if checked is None:
                continue
            if unparse(checked) in ("Exception", "BaseException") or any(
                raised.id in _bound_names(n) for n in scope.own_nodes(node.body)
            ):
                return None
            return checked
    return None


def _checked_class(test: ast.expr, name: str) -> ast.expr | None:
    """X of `isinstance(name, X)`, `name.__class__ is X`, `type(name) is X` (or ==)."""
    checked = _call_on(test, "isinstance", name)
    if checked is not None and len(checked) == 2:
        return checked[1] if isinstance(checked[1], (ast.Name, ast.Attribute)) else None
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.Eq))
        and isinstance(test.comparators[0], (ast.Name, ast.Attribute))
    ):
        left = test.left
        typed = _call_on(left, "type", name)
        of_name = (
            isinstance(left, ast.Attribute)
            and left.attr == "__class__"
            and isinstance(left.value, ast.Name)
            and left.value.id == name
        ) or (typed is not None and len(typed) == 1)
        return test.comparators[0] if of_name else None
    return None


def _call_on(node: ast.expr, function: str, name: str) -> list[ast.expr] | None:
    """The arguments of a call of the builtin `function` whose first is the name."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == function
        and node.args
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == name
    ):
        return node.args
    return None


def _class_set(raised: ast.expr | None, node: ast.Raise, frame: _Frame) -> ast.expr | None:
    """`self.__class__ = RemoteProtocolError` then `raise self`, both statements of the
    function's own body (h11's): the class assigned last before the raise; None where
    the name is bound again in between."""
    if not isinstance(raised, ast.Name) or node not in frame.body:
        return None
    found = None
    for statement in frame.body[: frame.body.index(node)]:
        target = statement.targets[0] if isinstance(statement, ast.Assign) else None
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(target, ast.Attribute)
            and target.attr == "__class__"
            and isinstance(target.value, ast.Name)
            and target.value.id == raised.id
            and isinstance(statement.value, (ast.Name, ast.Attribute))
        ):
            found = statement.value
        elif any(
            isinstance(n, ast.Name) and n.id == raised.id and isinstance(n.ctx, ast.Store)
            for n in scope.walk(statement)
        ):
            found = None
    return found


def _own_instance(raised: ast.expr | None, frame: _Frame) -> ast.expr | None:
    """`raise self` in a method of a class (tenacity's `RetryError.reraise`): the class,
    as the name it is defined by (an instance of a subclass is one of it too); None in a
    static or class method, a function nested in the method, a class inside a
    function, or where the method binds `self` anew."""
    function = frame.function
    if (
        not isinstance(raised, ast.Name)
        or raised.id != "self"
        or function is None
        or frame.cls is None
        or "<locals>" in frame.cls
        or scope.qualname(frame.scope) != f"{frame.cls}.{function.name}"
    ):
        return None
    decorators = {unparse(d) for d in function.decorator_list}
    if decorators & {"staticmethod", "classmethod"}:
        return None
    params = [*function.args.posonlyargs, *function.args.args]
    if not params or params[0].arg != "self":
        return None
    if any("self" in _bound_names(node) for node in scope.own_nodes(frame.body)):
        return None
    return ast.parse(frame.cls, mode="eval").body


def _name_defaults(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[tuple[str, ast.expr], ...]:
    """Parameters whose default is a (dotted) name: `exc_cls=errors.ArgumentError`."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    with_defaults = positional[len(positional) - len(args.defaults) :]
    pairs = list(zip(with_defaults, args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    return tuple((a.arg, d) for a, d in pairs if isinstance(d, (ast.Name, ast.Attribute)))


def _bound_by_callers(tree: ast.Module) -> dict[str, tuple[tuple[str, ast.expr], ...]]:
    """Parameters of a module's private functions that raise them (`def __warn_or_raise(
    text, warn_class, to_raise, reason): raise to_raise(reason)`) which every call in the
    module hands the same class or text, by the function's name: webob's callers all
    pass ValueError. None for a function named anywhere but as the callee of a plain
    call (handed on as a callback, say), as another module could then call it too."""
    raising: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    defined = Counter(
        n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        name = node.name
        # defined twice: which one a call reaches is unknown
        if defined[name] > 1 or not name.startswith("_") or name.endswith("__"):
            continue
        params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        if any(
            isinstance(n, ast.Raise)
            and isinstance(n.exc, ast.Call)
            and isinstance(n.exc.func, ast.Name)
            and n.exc.func.id in params
            for n in scope.own_nodes(node.body)
        ):
            raising[name] = node
    if not raising:
        return {}
    calls: dict[str, list[ast.Call]] = {name: [] for name in raising}
    named: dict[str, int] = Counter()  # every mention of the name, a callee's or not
    for each in scope.walk(tree):
        if isinstance(each, ast.Name) and each.id in calls:
            named[each.id] += 1
        elif (
            isinstance(each, ast.Call) and isinstance(each.func, ast.Name) and each.func.id in calls
        ):
            calls[each.func.id].append(each)
    bound = {}
    for name, function in raising.items():
        if not calls[name] or named[name] != len(calls[name]):
            continue
        positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        assigned = set().union(*(_bound_names(n) for n in scope.own_nodes(function.body)))
        pairs = []
        for param in [*positional, *(a.arg for a in function.args.kwonlyargs)]:
            passed = [_passed(call, positional, param) for call in calls[name]]
            first = passed[0]
            if (
                param not in assigned
                and first is not None
                and _class_or_text(first)
                and all(v is not None and ast.dump(v) == ast.dump(first) for v in passed)
            ):
                pairs.append((param, first))
        if pairs:
            bound[name] = tuple(pairs)
    return bound


def _bound_names(node: ast.AST) -> set[str]:
    """The names a statement binds, by `=` or otherwise."""
    found = scope.rebound(node)
    if isinstance(node, ast.Assign):
        found |= {t.id for target in node.targets for t in scope.walk(target)
                  if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}  # fmt: skip
    return found


def _class_or_text(node: ast.expr | None) -> bool:
    return isinstance(node, (ast.Name, ast.Attribute)) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _passed(call: ast.Call, positional: list[str], param: str) -> ast.expr | None:
    """What a plain call passes a parameter; None for a call that passes it through
    *args or **kwargs, or not at all."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    index = positional.index(param) if param in positional else -1
    if 0 <= index < len(call.args):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == param), None)


def _of_cls(raised: ast.expr | None, frame: _Frame) -> ast.expr | None:
    """`raise cls(...)` (or `raise cls`) in a classmethod: the class that defines it,
    named as in its module (icalendar's `JCalParsingError.validate_value`); it may be
    called on a subclass, as a classmethod's `return cls(...)` may (Index.factory_class)."""
    target = raised.func if isinstance(raised, ast.Call) else raised
    function = frame.function
    if not (isinstance(target, ast.Name) and target.id == "cls") or function is None:
        return raised
    args = function.args
    first = [*args.posonlyargs, *args.args][:1]
    if (
        frame.cls is None
        or "<" in frame.cls  # a class defined in a function: no name in its module
        or not first
        or first[0].arg != "cls"
        or not any(
            isinstance(d, ast.Name) and d.id == "classmethod" for d in function.decorator_list
        )
    ):
        return raised
    names = frame.cls.split(".")
    named: ast.expr = ast.Name(id=names[0], ctx=ast.Load())
    for name in names[1:]:
        named = ast.Attribute(value=named, attr=name, ctx=ast.Load())
    if isinstance(raised, ast.Call):
        return ast.Call(func=named, args=raised.args, keywords=raised.keywords)
    return named


def _defaulted(
    raised: ast.expr | None, defaults: tuple[tuple[str, ast.expr], ...]
) -> ast.expr | None:
    """`raise exc_cls(...)` of a parameter whose default is a class: that class. And an
    argument that is a parameter every call of a private function gives the same text
    (_bound_by_callers): that text."""
    if not defaults or not isinstance(raised, ast.Call):
        return raised
    bound = dict(defaults)

    def text(arg: ast.expr) -> ast.expr:
        value = bound.get(arg.id) if isinstance(arg, ast.Name) else None
        return value if isinstance(value, ast.Constant) else arg

    func = raised.func
    default = bound.get(func.id) if isinstance(func, ast.Name) else None
    args = [text(arg) for arg in raised.args]
    keywords = [ast.keyword(k.arg, text(k.value)) for k in raised.keywords]
    if isinstance(default, (ast.Name, ast.Attribute)):
        func = default
    elif args == raised.args and all(
        k.value is old.value for k, old in zip(keywords, raised.keywords, strict=True)
    ):
        return raised
    return ast.Call(func=func, args=args, keywords=keywords)


def _caught(handler: ast.ExceptHandler) -> tuple[str, ...]:
    kind = handler.type
    if kind is None:
        return ("BaseException",)
    elts = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return tuple(unparse(elt) for elt in elts)


# click's and typer's echo: with err=True, to stderr
_ECHOES = frozenset({"click.echo", "click.secho", "typer.echo", "typer.secho"})


def _failing_status(status: ast.expr | None) -> bool:
    """An exit status that is not a success: `sys.exit(1)`, `sys.exit(code)`; not
    `sys.exit()`, `sys.exit(0)` nor `sys.exit(None)`."""
    if status is None or isinstance(status, ast.Starred):
        return False
    return not (isinstance(status, ast.Constant) and status.value in (0, None, False))


def _without_line_end(parts: tuple[MessagePart, ...]) -> tuple[MessagePart, ...]:
    """`sys.stderr.write(f"...\\n")`: the text without the newline that ends its line,
    nor those it begins with (Django's `sys.stderr.write("\\nType '%s help' for
    usage.\\n" % ...)` after writes of its own: its last line)."""
    out = list(parts)
    if out and out[-1].text is not None and out[-1].text.endswith("\n"):
        out[-1] = MessagePart(text=out[-1].text[:-1])
    if out and out[0].text is not None:
        out[0] = MessagePart(text=out[0].text.lstrip("\n"))
    return tuple(part for part in out if part.text != "")


def _statement_before(body: Sequence[ast.stmt], node: ast.stmt) -> ast.stmt | None:
    """The statement before `node` in the block of `body` (or of a block inside it) that
    holds it; None where it comes first. Only statements are looked into."""
    blocks: list[Sequence[ast.AST]] = [body]
    while blocks:
        block = blocks.pop()
        for index, stmt in enumerate(block):
            if stmt is node:
                before = block[index - 1] if index else None
                return before if isinstance(before, ast.stmt) else None
            for field in _BODIES:
                inner = getattr(stmt, field, None)
                if inner:
                    blocks.append(inner)
    return None


# the classes whose error() prints the usage and `PROG: error: MESSAGE`, and exits with
# status 2: argparse's and optparse's, and those named as they are
_OPTION_PARSERS = ("ArgumentParser", "OptionParser")


def _exit_code_is_no_message(thrown: exception.Raised, src: Source) -> exception.Raised:
    """SystemExit(2), sys.exit(0), sys.exit(None): an exit status, no message."""
    first = thrown.positional[0] if thrown.positional else None
    if isinstance(first, ast.Constant) and not isinstance(first.value, str):
        return exception.Raised("SystemExit", None, thrown.args, True, call_args=thrown.call_args)
    return thrown


def _warning(call: ast.Call, src: Source) -> exception.Raised:
    """warnings.warn(message, category=UserWarning, ...): the category is the exception."""
    args = [arg for arg in call.args if not isinstance(arg, ast.Starred)]
    keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    first = args[0] if args else keywords.get("message")
    category = args[1] if len(args) > 1 else keywords.get("category")
    # case: warnings.warn(DeprecationWarning("message"))
    if isinstance(first, ast.Call) and category is None:
        inner = exception.raised(first, src)
        if inner.exception is not None and not inner.factory:
            return inner
    name = src.expression(category) if category is not None else "UserWarning"
    rest = [src.expression(a) for a in args[2:]]
    rest += [f"{k}={src.expression(v)}" for k, v in keywords.items() if k not in _WARN_KEYS]
    positional = (first,) if first is not None else ()
    return exception.Raised(name, first, tuple(rest), first is None, positional)


_WARN_KEYS = ("message", "category")
