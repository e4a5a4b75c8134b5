"""Message expression -> template parts: literal text and `{expr}` placeholders.

f"weight {op} of {ratio:.2f}"  ->  [text "weight ", expr op, text " of ", expr ratio spec .2f]
"bad %r" % (name,)            ->  [text "bad ", expr name conversion r]
"""

from __future__ import annotations

import ast
import inspect
import re
import string
import textwrap
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from errscan.extractors import scope
from errscan.extractors.bindings import Chain
from errscan.extractors.source import Source
from errscan.frozen import frozen
from errscan.models import MessagePart


@frozen
class Template:
    """A resolved message: its parts and the form it was written in."""

    parts: tuple[MessagePart, ...]
    source: str

    @property
    def text(self) -> str:
        return "".join(part.placeholder for part in self.parts)


class Lookup(Protocol):
    """Where names in a message come from: local assignments, constants, and the
    functions that make a text of their arguments (bindings.text_functions)."""

    def local(self, name: str) -> list[Chain] | None: ...

    def constant(self, node: ast.expr) -> ast.expr | None: ...

    def function(self, name: str) -> ast.FunctionDef | None: ...

    def defaulted(self, name: str) -> bool: ...

    def parameter(self, name: str) -> bool: ...


class NoLookup:
    """A Lookup that finds nothing: names stay placeholders. The base of lookups that
    find some (summary's, in a method; a text function's)."""

    def local(self, name: str) -> list[Chain] | None:
        return None

    def constant(self, node: ast.expr) -> ast.expr | None:
        return None

    def function(self, name: str) -> ast.FunctionDef | None:
        return None  # (in a text function's: one level, one calling another not read)

    def defaulted(self, name: str) -> bool:
        return False

    def parameter(self, name: str) -> bool:
        return False


class _Within(NoLookup):
    """Names in a text function's return: its parameters and its own names are
    placeholders, others the constants the call's lookup finds (the module's)."""

    def __init__(self, outer: Lookup, function: ast.FunctionDef) -> None:
        self.outer = outer
        args = function.args
        self.params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}

    def constant(self, node: ast.expr) -> ast.expr | None:
        if isinstance(node, ast.Name) and node.id in self.params:
            return None
        return self.outer.constant(node) if isinstance(node, ast.Name) else None


def template(node: ast.expr, src: Source, lookup: Lookup | None = None) -> Template | None:
    """The template of a message expression (the first candidate), or None."""
    found = templates(node, src, lookup)
    return found[0] if found else None


def templates(node: ast.expr, src: Source, lookup: Lookup | None = None) -> list[Template]:
    """Every template the message expression may have, in source order; [] if unreadable.

    More than one only where a variable is assigned different messages on different paths.
    """
    reader = _Reader(src, lookup or NoLookup())
    # case: self.msg or f"value must be at least {self.min}": the text the code gives
    # where its user sets none (voluptuous's validators), a default
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        *given, last = node.values
        if not all(_set_elsewhere(value, reader.lookup) for value in given):
            return []
        return [Template(t.parts, DEFAULT) for t in templates(last, src, lookup) if t.text]
    # case: "one" if cond else "other": a candidate each
    if isinstance(node, ast.IfExp):
        body, orelse = templates(node.body, src, lookup), templates(node.orelse, src, lookup)
        if body and orelse:
            return _distinct([*body, *orelse])
        # case: "I/O operation on closed file." if msg is None else msg (boltons's): the
        # code's text where its user gives none, a default
        for read, kept in ((body, node.orelse), (orelse, node.body)):
            if read and _set_elsewhere(kept, reader.lookup) and _mentions(node.test, kept):
                return [Template(t.parts, DEFAULT) for t in read if t.text]
        return []
    # case: `assert ok, (node, stack)`, `raise E((a, b))`: str() of a tuple, the repr of
    # each item (a literal's as it prints: `("root", name)` -> `('root', {name!r})`)
    if isinstance(node, ast.Tuple):
        tupled = _tuple_parts(node, src)
        return [Template(tupled, "format")] if tupled is not None else []
    # case: {OPEN: "a", CLOSED: "b"}[state]: a candidate each, the most general first
    choices = _choices(node)
    if choices is not None:
        each = [templates(choice, src, lookup) for choice in choices]
        if not all(each):
            return []  # one value not read (or None given by .get): no guess
        return _general(_distinct([found for options in each for found in options]),
                        src.expression(node))  # fmt: skip
    # case: msg, assigned in the function (perhaps in several branches)
    if isinstance(node, ast.Name):
        chains = reader.lookup.local(node.id)
        if chains:
            values = local_values(chains, src, reader.lookup)
            if values:
                general = _general(values, node.id)
                if reader.lookup.parameter(node.id) and reader.lookup.defaulted(node.id):
                    # case: `def check(value, msg=None): if msg is None: msg = f"..."`:
                    # the code's text where its caller gives none, a default
                    return [Template(t.parts, DEFAULT) for t in general if t.text]
                return general
            if reader.lookup.defaulted(node.id):
                # case: `message = self.message`, then `if message is None: message =
                # "..."` (wtforms' validators): the code's text where its user sets none
                return _defaults(chains, src, reader.lookup)
            return []  # one unknown path: no guess
    # case: NOT_FOUND, self.TEMPLATE, cls.TEMPLATE, Class.TEMPLATE
    if isinstance(node, (ast.Name, ast.Attribute)):
        constant = reader.lookup.constant(node)
        if constant is None:
            return []
        return _distinct([reader.finish(reader.parts(constant), "constant")])
    # case: _error("..."), a function returning a text made of its arguments: the form
    # of what it returns
    called = _text_function(node, reader.lookup)
    if called is not None:
        assert isinstance(node, ast.Call)  # _text_function's
        parts = reader.returned_by(called, node)
        return _distinct([reader.finish(parts, _form(_returned(called)))])
    # case: TEMPLATE % values, TEMPLATE.format(...), with TEMPLATE a variable or constant
    base = _template_base(node)
    via = None
    if isinstance(base, (ast.Name, ast.Attribute)):
        local = isinstance(base, ast.Name) and reader.lookup.local(base.id)
        via = "variable" if local else "constant"
    found = [reader.finish(reader.parts(node), via or _form(node))]
    # the plural, a candidate of its own (every name of _NGETTEXT holds "ngettext")
    if found[0] is not None and src.holds("ngettext") and _calls_ngettext(node):
        other = _Reader(src, reader.lookup, plural=True)
        found.append(other.finish(other.parts(node), via or _form(node)))
    return _distinct(found)


def _tuple_parts(node: ast.Tuple, src: Source) -> tuple[MessagePart, ...] | None:
    """str() of a tuple display: its items' reprs between parentheses, a lone item with
    its comma; None where an item is unpacked (`(*names,)`), whose count is unknown."""
    if any(isinstance(item, ast.Starred) for item in node.elts):
        return None
    parts = [MessagePart(text="(")]
    for i, item in enumerate(node.elts):
        if i:
            parts.append(MessagePart(text=", "))
        parts.append(inline(MessagePart(expr=src.expression(item), conversion="r")))
    parts.append(MessagePart(text=",)" if len(node.elts) == 1 else ")"))
    return tuple(merge(parts))


def local_values(chains: list[Chain], src: Source, lookup: Lookup) -> list[Template]:
    """Each text a local may hold, its value `chains` as `lookup.local` gives them, in
    source order, the empty one too: as a part of a larger text (`dim = f" ({d})"` under
    a condition, `""` else), a path of its own, which `templates` of the name alone leaves
    out (_general); [] where one is not read."""
    reader = _Reader(src, lookup)
    found = [reader.finish(reader.chain(chain), "variable") for chain in _branches(chains)]
    return _distinct(found) if all(found) else []


# message_source of a text the code gives where its user sets none
DEFAULT = "default"


def _defaults(chains: list[Chain], src: Source, lookup: Lookup) -> list[Template]:
    """The texts a local holds where it is not a text set elsewhere (a parameter or an
    attribute, its only value), each a default; [] where one of them is not read, or
    no path holds a text set elsewhere."""
    reader = _Reader(src, lookup)
    found: list[Template | None] = []
    given = False
    for chain in _branches(chains):
        if len(chain) == 1 and _set_elsewhere(chain[0], lookup):
            given = True
            continue
        read = reader.finish(reader.chain(chain), "variable")
        if read is None or not read.text:
            return []
        found.append(Template(read.parts, DEFAULT))
    return _distinct(found) if given and found else []


def _set_elsewhere(node: ast.expr, lookup: Lookup) -> bool:
    """Whether `node` holds a text set outside the code read here: a parameter or an
    attribute (`msg`, `self.msg`), not a local the lookup follows nor a literal."""
    if isinstance(node, ast.Name):
        return lookup.local(node.id) is None and lookup.constant(node) is None
    return isinstance(node, ast.Attribute) and lookup.constant(node) is None


def _mentions(test: ast.expr, value: ast.expr) -> bool:
    """Whether a condition reads `value` (`msg is None` of `msg`)."""
    wanted = ast.dump(value)
    return any(ast.dump(node) == wanted for node in scope.walk(test) if type(node) is type(value))


# `__`: Sphinx's console messages (`__ = get_translation('sphinx', 'console')`)
_GETTEXT = frozenset(("_", "__", "gettext", "ugettext", "gettext_lazy", "ugettext_lazy", "_l"))
_NGETTEXT = frozenset(("ngettext", "ungettext", "ngettext_lazy"))


def _translated(node: ast.expr, plural: bool = False) -> ast.expr | None:
    """The text a gettext call translates (`_("...")`, `gettext("...")`, and the singular,
    or with `plural` the plural, of `ngettext(...)`); None for any other expression."""
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    name = _callee_name(node)
    if name in _GETTEXT and len(node.args) == 1:
        return node.args[0]
    if name in _NGETTEXT and len(node.args) == 3:
        return node.args[1 if plural else 0]
    return None


def _callee_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _calls_ngettext(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and _callee_name(n) in _NGETTEXT for n in scope.walk(node))


def _branches(chains: list[Chain]) -> list[Chain]:
    """Each chain once for each side of a conditional expression it starts with
    (`msg = "a" if c else f"b {x}"`), and for each value of a literal dict it looks its
    first value up in (`msg = {OPEN: "a", CLOSED: "b"}[state]`), at most 16 chains."""
    out: list[Chain] = []
    todo = list(chains)
    while todo and len(out) + len(todo) <= 16:
        chain = todo.pop(0)
        first = chain[0]
        choices = _choices(first)
        if choices is not None:
            todo[:0] = [(choice, *chain[1:]) for choice in choices]
        else:
            out.append(chain)
    return out + todo


def _choices(node: ast.expr) -> list[ast.expr] | None:
    """The expressions one of which `node` is: both sides of `a if c else b`, the values
    of `{k: a, ...}[key]` and of `{k: a, ...}.get(key, default)` (the default too, None
    where none is given); None for any other expression."""
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    # case: {OPEN: "a", CLOSED: "b"}[state]
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Dict)
        and node.value.values
        and None not in node.value.keys
    ):
        return list(node.value.values)
    # case: {OPEN: "a"}.get(state, "unknown")
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and isinstance(node.func.value, ast.Dict)
        and node.func.value.values
        and None not in node.func.value.keys
        and 1 <= len(node.args) <= 2
        and not node.keywords
    ):
        default = node.args[1] if len(node.args) == 2 else ast.Constant(value=None)
        return [*node.func.value.values, default]
    return None


def _general(found: list[Template], name: str) -> list[Template]:
    """A variable's candidates with the most general first: where they share literal text
    at the start or the end (an optional part added under a condition, a loop's
    additions), one template of that text around a placeholder for the rest, which every
    path's message matches. An empty message (`msg = ""` before the branches that set
    it) is no candidate beside others."""
    said = [t for t in found if t.text]
    found = said or found
    if len(found) < 2:
        return found
    tokens = [_tokens(t.parts) for t in found]
    shortest = min(len(ts) for ts in tokens)
    start = 0
    while start < shortest and all(ts[start] == tokens[0][start] for ts in tokens):
        start += 1
    while start and any(_inside_word(ts, start) for ts in tokens):
        start -= 1  # the shared text ends between words, not inside one
    end = 0
    while start + end < shortest and all(ts[-1 - end] == tokens[0][-1 - end] for ts in tokens):
        end += 1
    while end and any(_inside_word(ts, len(ts) - end) for ts in tokens):
        end -= 1
    kept = tokens[0][:start] + tokens[0][len(tokens[0]) - end :]
    if not any(isinstance(token, str) and token.strip() for token in kept):
        return found  # nothing literal in common: no general template
    rest = MessagePart(expr=name)
    parts = [MessagePart(text=t) if isinstance(t, str) else t for t in tokens[0][:start]]
    parts.append(rest)
    parts += [
        MessagePart(text=t) if isinstance(t, str) else t for t in tokens[0][len(tokens[0]) - end :]
    ]
    merged = Template(tuple(merge(parts)), found[0].source)
    return _distinct([merged, *found])


def _inside_word(tokens: list[str | MessagePart], at: int) -> bool:
    """Whether position `at` falls between two letters or digits of one word."""
    if not 0 < at < len(tokens):
        return False
    before, after = tokens[at - 1], tokens[at]
    return isinstance(before, str) and isinstance(after, str) and (before + after).isalnum()


def _tokens(parts: Sequence[MessagePart]) -> list[str | MessagePart]:
    """A template as characters of its text and placeholders, one token each."""
    out: list[str | MessagePart] = []
    for part in parts:
        if part.text is not None:
            out.extend(part.text)
        else:
            out.append(part)
    return out


def _distinct(found: list[Template | None]) -> list[Template]:
    out: list[Template] = []
    for item in found:
        if item is not None and all(item.text != seen.text for seen in out):
            out.append(item)
    return out


def _text_function(node: ast.expr, lookup: Lookup) -> ast.FunctionDef | None:
    """The text function (bindings.text_functions) `node` calls by name, if it is one."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    return lookup.function(node.func.id)


def _returned(function: ast.FunctionDef) -> ast.expr:
    """What a text function returns (bindings.text_functions: its last statement)."""
    last = function.body[-1]
    assert isinstance(last, ast.Return) and last.value is not None
    return last.value


def _bound_arguments(function: ast.FunctionDef, call: ast.Call) -> dict[str, ast.expr] | None:
    """Each parameter of `function` with what `call` gives it, or its default; None
    where the call does not fit (a `*` or `**` argument, one too many, one missing)."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    if len(call.args) > len(positional) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    bound = {param.arg: value for param, value in zip(positional, call.args, strict=False)}
    names = {a.arg for a in (*args.args, *args.kwonlyargs)}
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in names or keyword.arg in bound:
            return None
        bound[keyword.arg] = keyword.value
    defaults = dict(zip([p.arg for p in positional][::-1], args.defaults[::-1], strict=False))
    kw_defaults = zip(args.kwonlyargs, args.kw_defaults, strict=True)
    defaults |= {a.arg: d for a, d in kw_defaults if d is not None}
    for param in (*positional, *args.kwonlyargs):
        if param.arg not in bound:
            if param.arg not in defaults:
                return None
            bound[param.arg] = defaults[param.arg]
    return bound


def _template_base(node: ast.expr) -> ast.expr | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return node.left
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Attribute) and func.attr == "format":
        return func.value
    return None


def form_of(expression: str | None) -> str:
    """The message_source of a message given as `expression` (source text), where a
    reading read it as a factory's argument: its form, a name's "variable", an
    attribute's "constant"; "concat" where the text does not parse (cut short)."""
    try:
        node = ast.parse(expression or "", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "concat"
    if isinstance(node, ast.Name):
        return "variable"
    if isinstance(node, ast.Attribute):
        return "constant"
    return _form(node)


def _form(node: ast.expr) -> str:
    # case: _("..."), the form of what it translates
    translated = _translated(node)
    if translated is not None:
        return _form(translated)
    # case: "literal" (implicit concatenation of plain literals included)
    if isinstance(node, ast.Constant):
        return "literal"
    # case: f"..." (a plain literal joined to an f-string becomes one JoinedStr)
    if isinstance(node, ast.JoinedStr):
        return "fstring"
    # case: "..." % values
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return "percent"
    # case: "...".format(...)
    if _template_base(node) is not None:
        return "format"
    # case: a + b, "sep".join([...]), dedent("..."): parts put together
    return "concat"


# a placeholder as a template's text shows it: `{expr}`, one level of nested braces
PLACEHOLDER = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
_MAX_DEPTH = 8  # names resolved through names, at most
_MAX_STEPS = 400  # expressions read for one message: `msg += msg` twelve times is 2**12
_MAX_PARTS = 256  # parts of one message
MAX_CHARS = 4096  # characters of one message; the rest becomes one placeholder
_STRIP: dict[str, Callable[[str], str]] = {
    "strip": str.strip,
    "lstrip": str.lstrip,
    "rstrip": str.rstrip,
    "dedent": textwrap.dedent,
    "cleandoc": inspect.cleandoc,
}


class _Reader:
    """Turns one message expression into parts, resolving names through a Lookup."""

    def __init__(self, src: Source, lookup: Lookup, plural: bool = False) -> None:
        """`plural`: read ngettext's plural rather than its singular."""
        self.src = src
        self.lookup = lookup
        self.plural = plural
        self.depth = 0
        self.steps = 0  # expressions read; past _MAX_STEPS the message is not read
        self.exhausted = False

    def finish(self, parts: list[MessagePart] | None, source: str) -> Template | None:
        if parts is None or self.exhausted:
            return None
        merged = tuple(merge([inline(part) for part in parts]))
        if source == "concat" and not any(part.text for part in merged):
            return None  # `a + b` of unknown values: nothing says it is a string at all
        return Template(_shortened(merged), source)

    def chain(self, chain: Chain) -> list[MessagePart] | None:
        """`msg = first` then `msg += rest...`."""
        first = self.parts(chain[0])
        if first is None:
            return None
        for operand in chain[1:]:
            first = first + self.operand(operand)
            if len(first) > _MAX_PARTS:
                self.exhausted = True
                return None
        return first

    def parts(self, node: ast.expr) -> list[MessagePart] | None:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            self.exhausted = True
        if self.exhausted or self.depth >= _MAX_DEPTH:
            return None
        self.depth += 1
        try:
            return self._parts(node)
        finally:
            self.depth -= 1

    def literal(self, node: ast.expr) -> str | None:
        """The plain string `node` is (maybe through a variable or constant), or None."""
        parts = self.parts(node)
        if parts is not None and all(part.text is not None for part in parts):
            return "".join(part.text or "" for part in parts)
        return None

    def _parts(self, node: ast.expr) -> list[MessagePart] | None:
        src = self.src
        # case: "literal"
        if isinstance(node, ast.Constant):
            return [MessagePart(text=node.value)] if isinstance(node.value, str) else None
        # case: f"..."
        if isinstance(node, ast.JoinedStr):
            return _fstring_parts(node, src)
        # case: a name holding a string: one local value, or a constant
        if isinstance(node, ast.Name):
            chains = self.lookup.local(node.id)
            if chains is not None:
                return self.chain(chains[0]) if len(chains) == 1 else None
        if isinstance(node, (ast.Name, ast.Attribute)):
            constant = self.lookup.constant(node)
            return self.parts(constant) if constant is not None else None
        # case: "..." % values
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            fmt = self.literal(node.left)
            return _percent_parts(fmt, node.right, src) if fmt is not None else None
        # case: a + b + ...
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.operand(node.left) + self.operand(node.right)
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _call(self, node: ast.Call) -> list[MessagePart] | None:
        func = node.func
        method = func.attr if isinstance(func, ast.Attribute) else None
        # case: "...".format(...)
        if isinstance(func, ast.Attribute) and method == "format":
            fmt = self.literal(func.value)
            return _format_parts(fmt, node, self.src) if fmt is not None else None
        # case: " ".join([a, b, c]) over a literal list or tuple
        if isinstance(func, ast.Attribute) and method == "join" and len(node.args) == 1:
            return self._join(func.value, node.args[0])
        # case: "...".strip() and its kin
        if isinstance(func, ast.Attribute) and method in _STRIP and not node.args:
            inner = self.parts(func.value)
            return _through_text(inner, _STRIP[method]) if inner is not None else None
        # case: textwrap.dedent("..."), inspect.cleandoc("...")
        name = method or (func.id if isinstance(func, ast.Name) else None)
        if name in ("dedent", "cleandoc") and len(node.args) == 1 and not node.keywords:
            inner = self.parts(node.args[0])
            return _through_text(inner, _STRIP[name]) if inner is not None else None
        # case: _("..."), gettext("..."), ngettext("one", "many", n) (the singular; the
        # plural is a candidate of its own): the untranslated text, as most users see it
        text = _translated(node, self.plural)
        if text is not None:
            return self.parts(text)
        # case: _error(f"Expected {kind}"), a function returning a text of its arguments
        called = _text_function(node, self.lookup)
        if called is not None:
            return self.returned_by(called, node)
        return None

    def returned_by(self, function: ast.FunctionDef, call: ast.Call) -> list[MessagePart] | None:
        """What a text function returns, the call's arguments (or the defaults it leaves)
        in place of its parameters: read as parts where a part is the parameter itself,
        else a placeholder of the argument with the part's conversion and format."""
        bound = _bound_arguments(function, call)
        if bound is None:
            return None
        inner = _Reader(self.src, _Within(self.lookup, function), self.plural)
        inner.steps = self.steps
        returned = inner.parts(_returned(function))
        self.steps = inner.steps
        if returned is None or inner.exhausted:
            return None
        out: list[MessagePart] = []
        for part in returned:
            argument = bound.get(part.expr) if part.expr is not None else None
            if argument is None:
                out.append(part)
            elif part.conversion in (None, "s") and not part.format_spec:
                out.extend(self.operand(argument))
            else:
                shown = self.src.expression(argument)
                out.append(MessagePart(expr=shown, conversion=part.conversion,
                                       format_spec=part.format_spec))  # fmt: skip
        return out

    def _join(self, separator_node: ast.expr, items: ast.expr) -> list[MessagePart] | None:
        separator = self.literal(separator_node)
        if separator is None or not isinstance(items, (ast.List, ast.Tuple)):
            return None
        if any(isinstance(item, ast.Starred) for item in items.elts):
            return None
        joined: list[MessagePart] = []
        for i, item in enumerate(items.elts):
            if i:
                joined.append(MessagePart(text=separator))
            joined.extend(self.operand(item))
        return joined

    def operand(self, node: ast.expr) -> list[MessagePart]:
        """A piece of a concatenation: a string we can read, or a placeholder."""
        parts = self.parts(node)
        if parts is not None:
            return parts
        # case: str(x) and repr(x) read as {x} and {x!r}
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("str", "repr")
            and len(node.args) == 1
            and not node.keywords
            and not isinstance(node.args[0], ast.Starred)
        ):
            conversion = "r" if node.func.id == "repr" else None
            return [MessagePart(expr=self.src.expression(node.args[0]), conversion=conversion)]
        return [MessagePart(expr=self.src.expression(node))]


def _shortened(parts: tuple[MessagePart, ...]) -> tuple[MessagePart, ...]:
    """At most MAX_CHARS of the message, the rest one placeholder that says how much it
    stands for: the template still matches the message, and says it was cut."""
    sizes = [len(part.text if part.text is not None else part.expr or "") for part in parts]
    if sum(sizes) <= MAX_CHARS:
        return parts
    kept: list[MessagePart] = []
    room = MAX_CHARS
    for part, size in zip(parts, sizes, strict=True):
        if size > room:
            if part.text is not None and room:
                kept.append(MessagePart(text=part.text[:room]))
                room = 0
            break
        kept.append(part)
        room -= size
    cut = sum(sizes) - (MAX_CHARS - room)
    kept.append(MessagePart(expr=f"... {cut} more characters, cut by errscan"))
    return tuple(kept)


def literal_value(expr: str) -> tuple[bool, object]:
    """(True, value) where `expr` is a plain literal such as "db", 3 or 0.5."""
    if not expr or not (expr[0] in "\"'-+.0123456789" or expr in ("True", "False", "None")):
        return False, None
    if expr[0] in "\"'" and "{" in expr:
        return False, None  # may be an f-string's nested literal; leave it as written
    try:
        return True, _literal(ast.parse(expr.lstrip(" \t"), mode="eval").body)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def _literal(node: ast.expr) -> object:
    """`ast.literal_eval` of an expression that starts as a literal does: its cases but
    complex numbers done here, as literal_eval leaves a reference cycle on each call."""
    if isinstance(node, ast.Constant):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float, complex))
        and not isinstance(node.operand.value, bool)
    ):
        value = node.operand.value
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp):  # a complex number such as 1+2j
        return ast.literal_eval(node)
    raise ValueError("not a literal")  # such as "', '.join(names)": what literal_eval says


def inline(part: MessagePart) -> MessagePart:
    """A placeholder whose expression is a literal becomes the text it formats to."""
    if part.expr is None or (part.format_spec and "{" in part.format_spec):
        return part
    known, value = literal_value(part.expr)
    if not known:
        return part
    converted: object = value
    if part.conversion == "r":
        converted = repr(value)
    elif part.conversion == "a":
        converted = ascii(value)
    elif part.conversion == "s":
        converted = str(value)
    if _too_wide(part.format_spec or ""):
        return part
    try:
        return MessagePart(text=format(converted, part.format_spec or ""))
    except (ValueError, TypeError, OverflowError):
        return part


_MAX_WIDTH = 1000  # a literal formatted wider than this stays a placeholder
_NUMBER = re.compile(r"\d+")


def _too_wide(spec: str) -> bool:
    """Whether a format spec asks for a width or precision past _MAX_WIDTH (`{1:100000000}`
    would make a 100 MB message)."""
    return any(len(n) > 4 or int(n) > _MAX_WIDTH for n in _NUMBER.findall(spec))


def _through_text(
    parts: list[MessagePart], change: Callable[[str], str]
) -> list[MessagePart] | None:
    """Apply a text function to a template, each placeholder standing in as an opaque token
    made of a private-use character the text does not hold."""
    literal = "".join(part.text for part in parts if part.text is not None)
    mark = next((chr(c) for c in range(0xE000, 0xF900) if chr(c) not in literal), None)
    if mark is None:
        return None  # a text holding every private-use character: not read
    text = "".join(
        part.text if part.text is not None else f"{mark}{i}{mark}" for i, part in enumerate(parts)
    )
    out: list[MessagePart] = []
    for piece in re.split(f"({mark}\\d+{mark})", change(text)):
        if len(piece) > 2 and piece[0] == piece[-1] == mark:
            out.append(parts[int(piece[1:-1])])
        elif piece:
            out.append(MessagePart(text=piece))
    return out


def _fstring_parts(node: ast.JoinedStr, src: Source) -> list[MessagePart]:
    parts: list[MessagePart] = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(MessagePart(text=str(value.value)))
        elif isinstance(value, ast.FormattedValue):
            parts.append(_formatted_value(value, src))
    return parts


def _formatted_value(value: ast.FormattedValue, src: Source) -> MessagePart:
    conversion = chr(value.conversion) if value.conversion and value.conversion > 0 else None
    spec = None
    if isinstance(value.format_spec, ast.JoinedStr):
        spec = "".join(part.placeholder for part in _fstring_parts(value.format_spec, src))
    expr = src.expression(value.value, verify=True)
    return MessagePart(expr=expr, conversion=conversion, format_spec=spec or None)


# %[(key)][flags][width][.precision][length]type, as printf-style formatting reads it.
_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?"
    r"(?:\.(?P<precision>\*|\d+))?[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)


def _percent_parts(fmt: str, values: ast.expr, src: Source) -> list[MessagePart] | None:
    specs = list(_PERCENT.finditer(fmt))
    positional = [m for m in specs if m["type"] != "%" and m["key"] is None]
    star_fields = sum((m["width"] == "*") + (m["precision"] == "*") for m in positional)
    operands = _percent_operands(values, len(positional) + star_fields, src)
    parts: list[MessagePart] = []
    pos = 0
    index = 0
    for match in specs:
        parts.append(MessagePart(text=fmt[pos : match.start()]))
        pos = match.end()
        if match["type"] == "%":
            parts.append(MessagePart(text="%"))
            continue
        if match["key"] is not None:
            expr = _mapping_value(values, match["key"], src)
        else:
            index += (match["width"] == "*") + (match["precision"] == "*")
            if index >= len(operands):
                return None  # more fields than values: a TypeError at run time, not a message
            expr = operands[index]
            index += 1
        parts.append(_printf_placeholder(expr, match))
    parts.append(MessagePart(text=fmt[pos:]))
    return parts


def _percent_operands(values: ast.expr, needed: int, src: Source) -> list[str]:
    # case: "..." % (a, b)
    if isinstance(values, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in values.elts):
        return [src.expression(elt) for elt in values.elts]
    text = src.expression(values)
    # case: "... %s" % value
    if needed <= 1:
        return [text]
    # case: "... %s %s" % args, a tuple held elsewhere
    return [f"{text}[{i}]" for i in range(needed)]


def _mapping_value(values: ast.expr, key: str, src: Source) -> str:
    # case: "%(name)s" % {"name": value}
    if isinstance(values, ast.Dict):
        for dict_key, dict_value in zip(values.keys, values.values, strict=True):
            if isinstance(dict_key, ast.Constant) and dict_key.value == key:
                return src.expression(dict_value)
    # case: "%(name)s" % mapping
    return f"{src.expression(values)}[{key!r}]"


def _printf_placeholder(expr: str, match: re.Match[str]) -> MessagePart:
    kind = match["type"]
    known, value = literal_value(expr)
    if known and "*" not in match.group(0) and not _too_wide(match.group(0)):
        spec = match.group(0)
        if match["key"] is not None:
            spec = "%" + spec[len(match["key"]) + 3 :]
        try:
            return MessagePart(text=spec % (value,))
        except (TypeError, ValueError, OverflowError):
            pass
    plain = not (match["flags"] or match["width"] or match["precision"])
    if kind in "rsa" and plain:
        return MessagePart(expr=expr, conversion=None if kind == "s" else kind)
    spec = match.group(0)[1:]
    if match["key"] is not None:
        spec = spec[len(match["key"]) + 2 :]
    return MessagePart(expr=expr, format_spec=spec)


def _format_parts(fmt: str, node: ast.Call, src: Source) -> list[MessagePart] | None:
    binder = _FieldBinder(node, src)
    try:
        return list(_format_fields(fmt, binder, depth=0))
    except (ValueError, IndexError):
        return None  # malformed format string: str.format raises instead of building a message


def _format_fields(fmt: str, binder: _FieldBinder, depth: int) -> Iterator[MessagePart]:
    for literal, field_name, spec, conversion in string.Formatter().parse(fmt):
        if literal:
            yield MessagePart(text=literal)
        if field_name is None:
            continue
        if depth > 1:
            raise ValueError("Max string recursion exceeded")
        nested_spec = "".join(p.placeholder for p in _format_fields(spec or "", binder, depth + 1))
        yield MessagePart(
            expr=binder.bind(field_name),
            conversion=conversion,
            format_spec=nested_spec or None,
        )


class _FieldBinder:
    """Maps a str.format field name to the source of the argument it reads."""

    def __init__(self, call: ast.Call, src: Source) -> None:
        self.src = src
        self.args = call.args
        self.keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
        self.star_kwargs = [kw.value for kw in call.keywords if kw.arg is None]
        self.auto = 0
        self.numbering: str | None = None

    def bind(self, field_name: str) -> str:
        first, rest = _split_field(field_name)
        if first == "":
            self._number("automatic")
            index: int | str = self.auto
            self.auto += 1
        elif first.isdigit():
            self._number("manual")
            index = int(first)
        else:
            index = first
        return self._argument(index) + rest

    def _number(self, numbering: str) -> None:
        """str.format refuses to mix `{}` with `{0}`; so does the template."""
        if self.numbering not in (None, numbering):
            raise ValueError("cannot switch between automatic and manual field numbering")
        self.numbering = numbering

    def _argument(self, index: int | str) -> str:
        if isinstance(index, int):
            starred = [i for i, arg in enumerate(self.args) if isinstance(arg, ast.Starred)]
            if not starred or index < starred[0]:
                if index >= len(self.args):
                    raise IndexError(index)
                return self.src.expression(self.args[index])
            # case: "{0}".format(*values): the field reads into the starred sequence
            star = self.args[starred[0]]
            assert isinstance(star, ast.Starred)
            return f"{self.src.expression(star.value)}[{index - starred[0]}]"
        if index in self.keywords:
            return self.src.expression(self.keywords[index])
        if self.star_kwargs:
            return f"{self.src.expression(self.star_kwargs[0])}[{index!r}]"
        raise IndexError(index)


def _split_field(field_name: str) -> tuple[str, str]:
    """'0.attr[1]' -> ('0', '.attr[1]')."""
    for i, char in enumerate(field_name):
        if char in ".[":
            return field_name[:i], field_name[i:]
    return field_name, ""


def merge(parts: list[MessagePart]) -> Iterator[MessagePart]:
    """Join neighbouring literal texts and drop empty ones."""
    text = ""
    for part in parts:
        if part.text is not None:
            text += part.text
            continue
        if text:
            yield MessagePart(text=text)
            text = ""
        yield part
    if text:
        yield MessagePart(text=text)
