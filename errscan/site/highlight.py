"""The code around a site, highlighted by Pygments' Python lexer.

The records of one file show overlapping stretches of it, so a file's stretches are
joined where they touch and each joined stretch is lexed once; each record then takes
its own lines. Every character is escaped; the classes are Pygments' own, so its style
sheets colour them.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from errscan.models import ErrorRecord


class Highlighter:
    """Lines of code as HTML, one string a line, through one lexer."""

    @staticmethod
    def load() -> None:
        """Import Pygments and compile the lexer's rules, once a process (a page worker
        does as it starts)."""
        Highlighter().lines("")

    def __init__(self) -> None:
        from pygments.lexers import PythonLexer
        from pygments.token import STANDARD_TYPES

        self._lexer = PythonLexer(stripnl=False, stripall=False, ensurenl=False, tabsize=0)
        self._standard: Mapping[Any, str] = STANDARD_TYPES
        self._css: dict[Any, str] = {}

    def _class(self, ttype: Any) -> str:
        found = self._css.get(ttype)
        if found is None:
            kind = ttype
            while kind not in self._standard:
                kind = kind.parent
            found = self._css[ttype] = self._standard[kind]
        return found

    def lines(self, text: str) -> list[str]:
        """Each line of `text` as HTML."""
        out: list[list[str]] = [[]]
        for ttype, value in self._lexer.get_tokens(text):
            css = self._class(ttype)
            for i, part in enumerate(value.split("\n")):
                if i:
                    out.append([])
                if part:
                    shown = html.escape(part, quote=False)
                    out[-1].append(f'<span class="{css}">{shown}</span>' if css else shown)
        return ["".join(parts) for parts in out]

    def file_lines(self, records: Iterable[ErrorRecord]) -> dict[int, str]:
        """The highlighted lines of the stretches of one file that `records` show, by
        line number: touching stretches joined, and each lexed once."""
        stretches: list[tuple[int, list[str]]] = []
        for record in sorted(records, key=lambda r: r.context.start_line):
            start = record.context.start_line
            lines = record.context.code.split("\n")
            if stretches and start <= stretches[-1][0] + len(stretches[-1][1]):
                first, held = stretches[-1]
                held.extend(lines[first + len(held) - start :])
            else:
                stretches.append((start, list(lines)))
        found: dict[int, str] = {}
        for first, lines in stretches:
            for number, line in enumerate(self.lines("\n".join(lines)), first):
                found[number] = line
        return found


def block(lines: dict[int, str], first: int, count: int, marked: range) -> str:
    """The HTML of lines first..first+count-1, numbered, the lines of `marked` marked,
    in the shape of Pygments' HtmlFormatter (div.highlight, span.linenos, span.hll)."""
    width = len(str(first + count - 1))
    out = []
    for number in range(first, first + count):
        body = lines.get(number, "")
        line = f'<span class="linenos">{number:>{width}}</span>{body}'
        if number in marked:
            line = f'<span class="hll">{line}\n</span>'
        else:
            line += "\n"
        out.append(f'<a id="L-{number}"></a>{line}')
    return f'<div class="highlight"><pre><code>{"".join(out)}</code></pre></div>'


def record_block(record: ErrorRecord, lines: dict[int, str] | None = None) -> str:
    """The record's context as highlighted HTML (its own lines lexed, or from `lines`)."""
    if lines is None:
        lines = Highlighter().file_lines([record])
    count = record.context.code.count("\n") + 1
    return block(lines, record.context.start_line, count, range(record.line, record.end_line + 1))


def by_file(records: Sequence[ErrorRecord]) -> dict[str, dict[int, str]]:
    """Each file's highlighted lines, for records sorted by file."""
    highlighter = Highlighter()
    files: dict[str, list[ErrorRecord]] = {}
    for record in records:
        files.setdefault(record.file, []).append(record)
    return {name: highlighter.file_lines(group) for name, group in files.items()}
