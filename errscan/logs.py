"""A whole log -> each error in it, looked up: tracebacks and `Type: message` lines.

    for found in scan_log(stream, index):
        print(found.line, found.match.record.id if found.match else "unmatched")

The log is read a block of lines at a time and searched with bytes.find for the words
that start an error (a traceback's header, a name ending in Error, Exception, Warning,
Exit or Interrupt); only those lines reach Python code, so memory stays flat and the
speed is that of the search.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO

from errscan.analyzer.lookup import Match, TemplateIndex

_BLOCK = 4 << 20  # bytes read at once
# the end of an exception's name before its message, on a line found by _starts
_START = re.compile(
    rb"Traceback \(most recent call last\):"
    rb"|(?:Error|Exception|Warning|Exit|Interrupt)(?=: |:\r?$|\r?$)",
    re.MULTILINE,
)
# the whole name, checked on the line of a candidate only
_NAME = re.compile(rb"(?<![\w.])(?:[A-Za-z_]\w*\.)*[A-Z]\w*$")


@dataclass(frozen=True)
class Found:
    """One error in the log: the line it starts on, what it says, and its best match."""

    line: int
    text: str
    match: Match | None


@dataclass
class Summary:
    errors: int = 0
    unmatched: int = 0
    by_id: Counter[str] = field(default_factory=Counter)


def scan_log(
    stream: IO[bytes], index: TemplateIndex, summary: Summary | None = None
) -> Iterator[Found]:
    """Each error of the log in order, looked up in `index`; counts go to `summary`."""
    summary = summary if summary is not None else Summary()
    for number, text in errors_in(_lines(stream)):
        matches = index.lookup(text)
        best = matches[0] if matches else None
        summary.errors += 1
        if best is None:
            summary.unmatched += 1
        else:
            summary.by_id[best.record.id] += 1
        yield Found(number, text, best)


_HEADER = b"Traceback (most recent call last):"
_LONGEST = 1 << 20  # a traceback longer than this is cut where a block ends


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """(number, line, starts an error) for the lines that matter: each that may start
    an error, and the lines of each traceback, which a block never cuts in two."""
    number = 0
    rest = b""
    while True:
        block = stream.read(_BLOCK)
        data = rest + block
        if not block:
            if data:
                yield from _pick(data if data.endswith(b"\n") else data + b"\n", number)
            return
        cut = data.rfind(b"\n") + 1
        open_at = _open_traceback(data, cut)
        if open_at is not None and cut - open_at < _LONGEST:
            cut = open_at  # the unfinished traceback goes whole into the next block
        chunk, rest = data[:cut], data[cut:]
        yield from _pick(chunk, number)
        number += chunk.count(b"\n")


def _open_traceback(data: bytes, end: int) -> int | None:
    """Where the last traceback before `end` starts, where it may go on past `end`: no
    line after its exception's line (and that message's indented lines) is there yet."""
    header = data.rfind(_HEADER, 0, end)
    if header < 0:
        return None
    start = data.rfind(b"\n", 0, header) + 1
    after = data.find(b"\n", header)
    ended = False  # its exception's line seen: an unindented line after it ends it
    for line in data[after + 1 : end].split(b"\n")[:-1]:
        indented = line[:1].isspace()
        if ended and not indented:
            return None
        ended = ended or (bool(line) and not indented)
    return start


_KEYWORDS = (b"Error", b"Exception", b"Warning", b"Exit", b"Interrupt")


def _starts(chunk: bytes) -> list[tuple[int, int, bool]]:
    """(start, end, is a traceback) of what may start an error, in order: found with
    bytes.find, some ten times faster than a regular expression's alternation."""
    found: list[tuple[int, int, bool]] = []
    for word, header in [(_HEADER, True)] + [(k, False) for k in _KEYWORDS]:
        at = chunk.find(word)
        while at >= 0:
            end = at + len(word)
            if header or chunk[end : end + 2] in (b": ", b":\n", b"\n", b"\r\n", b":\r", b""):
                found.append((at, end, header))
            at = chunk.find(word, end)
    found.sort()
    return found


def _pick(chunk: bytes, number: int) -> Iterator[tuple[int, bytes, bool]]:
    position = 0
    for at, stop, header in _starts(chunk):
        start = chunk.rfind(b"\n", 0, at) + 1
        if start < position:
            continue  # a line passed on already
        if not header and not _NAME.search(chunk, start, stop):
            continue  # `ValueError` inside a word, or a lowercase name
        number += chunk.count(b"\n", position, start)
        end = chunk.find(b"\n", stop)
        end = len(chunk) if end < 0 else end
        yield number, chunk[start:end], True
        number += 1
        position = end + 1
        if not header:
            continue
        ended = False  # past the exception's line: its message's indented lines follow
        while position < len(chunk):  # the traceback's lines, through its last
            end = chunk.find(b"\n", position)
            end = len(chunk) if end < 0 else end
            line = chunk[position:end]
            indented = line[:1].isspace()
            if ended and not indented:
                break
            yield number, line, False
            number += 1
            position = end + 1
            ended = ended or (bool(line) and not indented)


def errors_in(lines: Iterable[tuple[int, bytes, bool]]) -> Iterator[tuple[int, str]]:
    """(line number, text) of each error: a traceback whole, or a `Type: message` line
    (its part from the exception's name on)."""
    block: list[str] = []
    start = 0
    ended = False  # the traceback's exception line seen: indented lines go on its message
    for number, raw, starts in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if block and not starts:
            indented = line[:1].isspace()
            if not (ended and not indented):
                block.append(line)
                ended = ended or (bool(line) and not indented)
                continue
        if block:
            yield start + 1, "\n".join(block)
            block, ended = [], False
        if not starts:
            continue
        if "Traceback (most recent call last):" in line:
            block, start, ended = [line[line.index("Traceback") :]], number, False
            continue
        for found in _START.finditer(raw):
            name = _NAME.search(raw, 0, found.end())
            if name is not None:
                text = raw[name.start() :].decode("utf-8", "replace").rstrip("\r")
                yield number + 1, text
                break
    if block:
        yield start + 1, "\n".join(block)
