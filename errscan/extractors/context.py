"""Source lines around a site, clipped to the file.

around(src, line=40, end_line=42, radius=15)  ->  Context(25, 57, "<lines 25..57>")

A line longer than MAX_LINE characters is cut there and ends in " …".
"""

from __future__ import annotations

from errscan.extractors.source import Source
from errscan.models import Context


def around(src: Source, line: int, end_line: int, radius: int) -> Context:
    """`radius` lines before `line` and after `end_line`, as they stand in the file."""
    count = len(src.shown_lines)
    start = max(1, line - radius)
    end = min(count, end_line + radius)
    lines = [_clip(text) for text in src.shown_lines[start - 1 : end]]
    return Context(start_line=start, end_line=end, code="\n".join(lines))


MAX_LINE = 400  # characters of one context line; minified code has lines of megabytes


def _clip(text: str) -> str:
    return text if len(text) <= MAX_LINE else text[:MAX_LINE] + " …"
