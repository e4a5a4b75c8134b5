"""Message expression -> template parts: literal text and `{expr}` placeholders.

f"weight {op} of {ratio:.2f}"  ->  [text "weight ", expr op, text " of ", expr ratio spec .2f]
"bad %r" % (name,)            ->  [text "bad ", expr name conversion r]
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass

from errscan.extractors.source import Source
from errscan.models import MessagePart


@dataclass(frozen=True)
class Template:
    """A resolved message: its parts and the form it was written in."""

    parts: tuple[MessagePart, ...]
    source: str

    @property
    def text(self) -> str:
        return "".join(part.placeholder for part in self.parts)


def template(node: ast.expr, src: Source) -> Template | None:
    """The template of a message expression, or None where it is not a string we can read."""
    parts = _parts(node, src)
    if parts is None:
        return None
    form = _form(node)
    merged = tuple(_merge(parts))
    if form == "concat" and not any(part.text for part in merged):
        return None  # `a + b` of unknown values: nothing says it is a string at all
    return Template(merged, form)


def _form(node: ast.expr) -> str:
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
    if isinstance(node, ast.Call):
        return "format"
    return "concat"


def _parts(node: ast.expr, src: Source) -> list[MessagePart] | None:
    # case: "literal"
    if isinstance(node, ast.Constant):
        return [MessagePart(text=node.value)] if isinstance(node.value, str) else None
    # case: f"..."
    if isinstance(node, ast.JoinedStr):
        return _fstring_parts(node, src)
    # case: "..." % values
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            return _percent_parts(node.left.value, node.right, src)
        return None
    # case: "...".format(...)
    if _is_format_call(node):
        return _format_parts(node, src)  # type: ignore[arg-type]
    # case: a + b + ...
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _concat_operand(node.left, src)
        right = _concat_operand(node.right, src)
        return left + right
    return None


def _concat_operand(node: ast.expr, src: Source) -> list[MessagePart]:
    parts = _parts(node, src)
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
        return [MessagePart(expr=src.expression(node.args[0]), conversion=conversion)]
    return [MessagePart(expr=src.expression(node))]


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
    plain = not (match["flags"] or match["width"] or match["precision"])
    if kind in "rsa" and plain:
        return MessagePart(expr=expr, conversion=None if kind == "s" else kind)
    spec = match.group(0)[1:]
    if match["key"] is not None:
        spec = spec[len(match["key"]) + 2 :]
    return MessagePart(expr=expr, format_spec=spec)


def _is_format_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    )


def _format_parts(node: ast.Call, src: Source) -> list[MessagePart] | None:
    assert isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Constant)
    fmt = str(node.func.value.value)
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


def _merge(parts: list[MessagePart]) -> Iterator[MessagePart]:
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
