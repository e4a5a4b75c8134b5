"""Decoded source text indexed by line, so extractors can slice out what a node spans.

src = Source("x = f(a,\\n      b)\\n")
src.segment(call_node) == "f(a,\\n      b)"
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
from collections.abc import Sequence
from typing import Any

# Python ends a line at \r\n, \r or \n, and at nothing else (str.splitlines also splits
# at \f, \v, \x1c.. and would shift every line number after one).
_NEWLINE = re.compile(r"\r\n|\r|\n")


class Source:
    """One file's text: its lines as Python numbers them, and node segments."""

    __slots__ = (
        "_encoded", "_expressions", "_holds", "_walrus_lines", "lines", "path", "shown_lines",
        "text",
    )  # fmt: skip

    def __init__(self, text: str, path: str = "mod.py", shown: str | None = None) -> None:
        """`shown`: the file as written, where `text` is a rewrite of it, line for line."""
        self.text = text
        self.path = path
        self.lines = _split(text)
        self.shown_lines = self.lines
        if shown is not None and len(_split(shown)) == len(self.lines):
            self.shown_lines = _split(shown)
        self._encoded: dict[int, bytes] = {}
        self._holds: dict[str, bool] = {}
        self._walrus_lines: list[int] | None = None
        # expression's answers by node (held, so no other node takes its id meanwhile):
        # a guard's test, a raised call's message, asked again for each site they reach
        self._expressions: dict[tuple[int, bool], tuple[ast.AST, str]] = {}

    def _line_bytes(self, lineno: int) -> bytes:
        """Line `lineno` (1-based) as UTF-8: ast column offsets count UTF-8 bytes."""
        encoded = self._encoded.get(lineno)
        if encoded is None:
            encoded = self.lines[lineno - 1].encode("utf-8", "surrogatepass")
            self._encoded[lineno] = encoded
        return encoded

    def holds(self, text: str) -> bool:
        """Whether the file holds `text` anywhere (asked once a file): a name no line holds
        is called nowhere."""
        found = self._holds.get(text)
        if found is None:
            found = self._holds[text] = text in self.text
        return found

    def walrus_in(self, body: Sequence[ast.stmt]) -> bool:
        """Whether an expression of `body` may bind a name (`:=`), so that its statements
        alone do not tell every name it binds: a line it spans holds `:=` (in code, or
        in a string or a comment, alike)."""
        if not body:
            return False
        if self._walrus_lines is None:
            self._walrus_lines = self._lines_holding(":=")
        found = self._walrus_lines
        if not found:
            return False
        first = body[0].lineno
        last = body[-1].end_lineno or len(self.lines)
        at = bisect.bisect_left(found, first)
        return at < len(found) and found[at] <= last

    def _lines_holding(self, text: str) -> list[int]:
        """The numbers of the lines that hold `text`, in order."""
        whole = self.text
        if text not in whole:
            return []
        if "\r" in whole:  # line ends of three kinds: line by line
            return [n for n, line in enumerate(self.lines, 1) if text in line]
        found: list[int] = []
        at = whole.find(text)
        line, counted = 1, 0
        while at >= 0:
            line += whole.count("\n", counted, at)
            counted = at
            if not found or found[-1] != line:
                found.append(line)
            at = whole.find(text, at + len(text))
        return found

    def column(self, lineno: int, byte_offset: int) -> int:
        """The 0-based character column of a UTF-8 byte offset on line `lineno`."""
        if byte_offset == 0 or not 1 <= lineno <= len(self.lines):
            return byte_offset
        line = self.lines[lineno - 1]
        if line.isascii():
            return byte_offset
        return len(self._line_bytes(lineno)[:byte_offset].decode("utf-8", "replace"))

    def segment(self, node: ast.AST) -> str | None:
        """The exact source text of `node`, or None where positions are missing."""
        lineno = getattr(node, "lineno", None)
        end_lineno = getattr(node, "end_lineno", None)
        col = getattr(node, "col_offset", None)
        end_col = getattr(node, "end_col_offset", None)
        if lineno is None or end_lineno is None or col is None or end_col is None:
            return None
        if not 1 <= lineno <= end_lineno <= len(self.lines):
            return None
        if lineno == end_lineno:
            return self._line_bytes(lineno)[col:end_col].decode("utf-8", "replace")
        pieces = [self._line_bytes(lineno)[col:]]
        pieces.extend(self._line_bytes(n) for n in range(lineno + 1, end_lineno))
        pieces.append(self._line_bytes(end_lineno)[:end_col])
        return "\n".join(piece.decode("utf-8", "replace") for piece in pieces)

    def expression(self, node: ast.AST, *, verify: bool = False) -> str:
        """Source text of an expression on one line, as a template placeholder shows it.

        The text as written where it is one line (and, with `verify`, parses back to
        the same tree: positions inside f-strings were unreliable before Python 3.12);
        otherwise the canonical `ast.unparse` form.
        """
        key = (id(node), verify)
        found = self._expressions.get(key)
        if found is not None and found[0] is node:
            return found[1]
        text = self._expression(node, verify)
        self._expressions[key] = (node, text)
        return text

    def _expression(self, node: ast.AST, verify: bool) -> str:
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == UNREADABLE
            and isinstance(node.slice, ast.Constant)
        ):
            return " ".join(str(node.slice.value).split())  # the f-string as written
        text = self.segment(node)
        if text is not None and "\n" not in text and (not verify or _same_tree(text, node)):
            return text
        return canonical(node).replace(OPAQUE, "")


def unparse(node: ast.AST) -> str:
    """ast.unparse(node), where a name or a dotted name (`errors.ArgumentError`, the
    commonest by far), or one of a call without arguments (`super().clean`), is written
    without the cost of the unparser."""
    names: list[str] = []
    inner = node
    while isinstance(inner, ast.Attribute):
        names.append(inner.attr)
        inner = inner.value
    if isinstance(inner, ast.Name):
        names.append(inner.id)
        return ".".join(reversed(names))
    if (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Name)
        and not inner.args
        and not inner.keywords
    ):  # `super().clean`, the commonest of the rest
        names.append(f"{inner.func.id}()")
        return ".".join(reversed(names))
    return canonical(node)


_Unparser: Any = getattr(ast, "_Unparser")  # noqa: B009  # private: not in typeshed


class _Canonical(_Unparser):  # type: ignore[misc]
    """ast.unparse as Python 3.11 to 3.13 write an expression, on 3.10 too (whose own
    writes a comprehension's tuple target in parentheses, and `lambda : x`): a record's
    placeholders, and so its id, are the same on every Python errscan runs on."""

    def visit_Tuple(self, node: ast.Tuple) -> None:
        bare = self.get_precedence(node) <= self._tuple  # a target: `for k, v in`
        with self.delimit_if("(", ")", not node.elts or not bare):
            self.items_view(self.traverse, node.elts)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self.write(" async for " if node.is_async else " for ")
        self.set_precedence(self._tuple, node.target)
        self.traverse(node.target)
        self.write(" in ")
        self.set_precedence(self._test.next(), node.iter, *node.ifs)
        self.traverse(node.iter)
        for if_clause in node.ifs:
            self.write(" if ")
            self.traverse(if_clause)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        with self.require_parens(self._test, node):
            params = node.args
            if (
                params.posonlyargs
                or params.args
                or params.vararg
                or params.kwonlyargs
                or params.kwarg
            ):
                self.write("lambda ")
                self.traverse(params)
            else:
                self.write("lambda")
            self.write(": ")
            self.set_precedence(self._test, node.body)
            self.traverse(node.body)

    _tuple = getattr(ast, "_Precedence").TUPLE  # noqa: B009
    _test = getattr(ast, "_Precedence").TEST  # noqa: B009


def canonical(node: ast.AST) -> str:
    """The canonical source of an expression (ast.unparse's, the same on every Python)."""
    if sys.version_info >= (3, 11):
        return ast.unparse(node)
    return str(_Canonical().visit(node))


# a name of a raising helper's body put into a caller's site, which no lookup in the
# caller's function may resolve (extractors/helpers.py): shown without the prefix
OPAQUE = "__errscan_helper_local_"
# downlevel writes an f-string no older Python can spell as UNREADABLE["<its source>"]
UNREADABLE = "__errscan_unreadable__"
MAX_SOURCE = 1000  # characters kept of an argument's source text in a record


def cut(text: str) -> str:
    """Source text of an argument, at most MAX_SOURCE characters (a 1 MB literal once
    filled a record twice over)."""
    return text if len(text) <= MAX_SOURCE else f"{text[:MAX_SOURCE]} … ({len(text):,} chars)"


def _split(text: str) -> list[str]:
    # without a \r, only \n ends a line: str.split is some 10x faster than the pattern
    lines = _NEWLINE.split(text) if "\r" in text else text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return lines


def _same_tree(text: str, node: ast.AST) -> bool:
    try:
        parsed = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return _same_node(parsed, node)


def _same_node(a: object, b: object) -> bool:
    """What `ast.dump(a) == ast.dump(b)` says, without its garbage: each dump leaves a
    reference cycle (a nested function that calls itself), and a worker whose collector
    runs seldom would pile up thousands of them."""
    if isinstance(a, ast.AST):
        return type(a) is type(b) and all(
            _same_node(getattr(a, name, None), getattr(b, name, None)) for name in a._fields
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same_node, a, b))
    return type(a) is type(b) and (a == b or repr(a) == repr(b))
