"""Source in syntax newer than this Python -> the same program in syntax its `ast` accepts.

LibCST parses the grammar of Python 3.0 to 3.14 whatever the running interpreter, so a
file that `ast` rejects is read with it and written back, line for line, with the new
forms spelled the old way; the result goes through the same `ast` extractors as any
other file. Only that file pays for LibCST, which is imported on first need.

    f"{d["key"]}"            ->  f'{d["key"]}'        (PEP 701 quotes reused inside)
    type Alias = list[int]   ->  Alias = list[int]    (PEP 695)
    def first[T](xs: T): ... ->  def first(xs: T): ... (PEP 695)
    except A, B:             ->  except (A, B):       (PEP 758)
    except* E:               ->  except  E:           (PEP 654, for Python 3.10)

A rewritten line keeps its length where a site's column could sit on it (`except*`
becomes `except` and a space), so records read the same on every Python.
"""

from __future__ import annotations

import re
from typing import Any

from errscan.extractors.source import UNREADABLE

_QUOTES = ('"', "'", '"""', "'''")


# LibCST's native parser overflows its stack on deep nesting (2,000 parentheses crash
# the process); CPython itself refuses more than 200 open brackets and 100 indentation
# levels, so no valid file is turned away by these bounds.
_MAX_BRACKETS = 200
_MAX_INDENT = 100 * 8
_MAX_BYTES = 2 << 20
_BRACKET = re.compile(r"[()\[\]{}]")
_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)


def downlevel(text: str) -> str | None:
    """`text` rewritten for this interpreter's `ast`, or None where LibCST cannot read it.

    LibCST runs in a helper process (isolated.py): isolated.Failed where it crashed,
    overran its time or ran out of memory on this text.
    """
    if len(text) > _MAX_BYTES or _too_deep(text):
        return None
    from errscan.analyzer.isolated import HELPER

    return HELPER.rewrite(text)


def rewrite(text: str) -> str | None:
    """downlevel's work, in this process: for the helper process, and for tests."""
    import libcst as cst

    try:
        module = cst.parse_module(text)
        rewritten = module.visit(_make_transformer(cst))
    except Exception:
        return None
    code: str = rewritten.code
    return code


def _too_deep(text: str) -> bool:
    depth = 0
    for match in _BRACKET.finditer(text):
        depth += 1 if match.group() in "([{" else -1
        if depth > _MAX_BRACKETS:
            return True
    return any(len(m.group().expandtabs(8)) > _MAX_INDENT for m in _INDENT.finditer(text))


def _make_transformer(cst: Any) -> Any:
    """The transformer class is built here so that libcst is imported only when needed."""

    class Downlevel(cst.CSTTransformer):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.empty = cst.Module(body=[])

        # case: type Alias = value  ->  Alias = value
        def leave_TypeAlias(self, original: Any, updated: Any) -> Any:
            return cst.Assign(targets=[cst.AssignTarget(target=updated.name)], value=updated.value)

        # case: def f[T](...) / class C[T]: the type parameters dropped
        def leave_FunctionDef(self, original: Any, updated: Any) -> Any:
            return updated.with_changes(type_parameters=None)

        def leave_ClassDef(self, original: Any, updated: Any) -> Any:
            return updated.with_changes(type_parameters=None)

        # case: except A, B:  ->  except (A, B):
        def leave_ExceptHandler(self, original: Any, updated: Any) -> Any:
            return updated.with_changes(type=_parenthesized(cst, updated.type))

        # case: try: ... except* E: ...  ->  try: ... except  E: ... (errscan reads both
        # alike; 3.10's `ast` has no TryStar)
        def leave_TryStar(self, original: Any, updated: Any) -> Any:
            return cst.Try(
                body=updated.body,
                handlers=[_plain_handler(cst, h) for h in updated.handlers],
                orelse=updated.orelse,
                finalbody=updated.finalbody,
                leading_lines=updated.leading_lines,
                whitespace_before_colon=updated.whitespace_before_colon,
            )

        # case: f-strings that reuse their own quotes inside, or span lines in one quote
        def leave_FormattedString(self, original: Any, updated: Any) -> Any:
            codes = [
                self.empty.code_for_node(part)
                for part in updated.parts
                if isinstance(part, cst.FormattedStringExpression)
            ]
            prefix = updated.start[: -len(updated.quote)]
            if "\\" in "".join(codes) or "#" in "".join(codes):
                return self.unreadable(original)  # not expressible before 3.12
            for quote in _QUOTES:
                multiline = any("\n" in code for code in codes)
                if multiline and len(quote) == 1:
                    continue
                # before 3.12, an expression may hold any quote but the string's own; in a
                # triple-quoted string that is the triple, and a quote at either end
                if any(quote in code for code in codes):
                    continue
                parts = [_requote(cst, part, quote) for part in updated.parts]
                return updated.with_changes(start=prefix + quote, end=quote, parts=parts)
            return self.unreadable(original)

        def unreadable(self, original: Any) -> Any:
            """An f-string no older Python can spell (a backslash or a comment inside its
            braces), as `__errscan_unreadable__["<its source>"]` on as many lines: the
            file keeps every other site, and this message reads as unresolved."""
            code = self.empty.code_for_node(original)
            newlines = "\n" * code.count("\n")
            return cst.parse_expression(f"{UNREADABLE}[{newlines}{code!r}]")

    return Downlevel()


def _parenthesized(cst: Any, kind: Any) -> Any:
    """A handler's bare tuple of classes in parentheses (PEP 758's `except A, B:`)."""
    if isinstance(kind, cst.Tuple) and not kind.lpar:
        return kind.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return kind


def _plain_handler(cst: Any, star: Any) -> Any:
    """`except* E as eg:` as `except  E as eg:`, as long: the star's place a space."""
    between = star.whitespace_after_except.value + " " + star.whitespace_after_star.value
    return cst.ExceptHandler(
        body=star.body,
        type=_parenthesized(cst, star.type),
        name=star.name,
        leading_lines=star.leading_lines,
        whitespace_after_except=cst.SimpleWhitespace(between),
        whitespace_before_colon=star.whitespace_before_colon,
    )


def _requote(cst: Any, part: Any, quote: str) -> Any:
    """Literal text escaped for the new quotes; nested format specs likewise."""
    if isinstance(part, cst.FormattedStringText):
        value: str = part.value
        if quote in ('"', "'"):
            value = _escape_quote(value, quote)
        elif quote[0] in value:
            value = _escape_quote(value, quote[0])
        return part.with_changes(value=value)
    if isinstance(part, cst.FormattedStringExpression) and part.format_spec:
        spec = [_requote(cst, p, quote) for p in part.format_spec]
        return part.with_changes(format_spec=spec)
    return part


def _escape_quote(value: str, quote: str) -> str:
    """Put a backslash before each unescaped `quote` in literal f-string text."""
    out = []
    escaped = False
    for char in value:
        if char == quote and not escaped:
            out.append("\\")
        out.append(char)
        escaped = char == "\\" and not escaped
    return "".join(out)
