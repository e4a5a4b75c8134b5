"""Text from a scanned repository, made safe for where it is shown: Markdown, terminals, CSV.

code_span("a `b`")        ->  "`` a `b` ``"       (never closed early)
fence("```\\nx", "text")  ->  "````text\\n```\\nx\\n````"
inline("# <img src=x>")   ->  "\\# &lt;img src=x&gt;"  (no heading, link, image or HTML)
visible("\\x1b[2J")       ->  "\\\\x1b[2J"              (no escape sequence reaches a terminal)
"""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")
# Punctuation that means something inside a line of Markdown (code spans, emphasis,
# links and images, attribute lists, tables, strikethrough, mentions, math), escaped with
# a backslash; `<`, `>` and `&` become entities, which every renderer, HTML-allowing ones
# included, shows as the characters. Inline text never starts a line here, so the
# block markers (`-`, `+`, `1.`, `=`) need nothing.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]#!|~@$^])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and
# isolates that reorder what a terminal or an editor shows (Trojan Source)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_AND_LAYOUT = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\t":
        return "\\t"
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str, keep_newlines: bool = False) -> str:
    """`text` for a terminal or a text file: every control character (escape sequences,
    carriage returns, bidi overrides) written out as its Python escape, so none acts.
    `keep_newlines`: newlines and tabs stay, for multi-line blocks such as code."""
    pattern = _CONTROL if keep_newlines else _CONTROL_AND_LAYOUT
    return _LONE_SURROGATE.sub(_escaped, pattern.sub(_escaped, text))


def inline(text: str) -> str:
    """`text` as plain Markdown inline text, for a place inside a line: one line, with
    nothing Markdown or HTML could read as markup (links, images, tables, HTML tags)."""
    one_line = " ".join(visible(text).split())
    escaped = _MARKDOWN_PUNCTUATION.sub(r"\\\1", one_line)
    return "".join(_ENTITIES.get(char, char) for char in escaped)


def code_span(text: str) -> str:
    """`text` as a Markdown code span on one line, its backtick string longer than any
    run of backticks inside it (CommonMark 6.1)."""
    one_line = " ".join(visible(text).split()) or " "
    longest = max((len(run) for run in _BACKTICKS.findall(one_line)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if one_line[0] in "` " or one_line[-1] in "` " else ""
    return f"{ticks}{pad}{one_line}{pad}{ticks}"


def fence(text: str, info: str = "") -> str:
    """`text` as a fenced code block whose fence is longer than any run of backticks in
    it, so no line of it closes the block (CommonMark 4.5, Python-Markdown's
    fenced_code)."""
    body = visible(text, keep_newlines=True)
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{body}\n{ticks}"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str) -> str:
    """A cell a spreadsheet shows as text, never runs as a formula (OWASP's rule: a
    leading `'` before =, +, -, @, tab or carriage return)."""
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def link_url(url: str | None) -> str | None:
    """`url` if it is an http or https address that can stand in a link, else None."""
    if url is None:
        return None
    lowered = url.strip().lower()
    if not lowered.startswith(("https://", "http://")):
        return None
    if any(char in url for char in ' "<>`\\') or _CONTROL_AND_LAYOUT.search(url):
        return None
    return url
