"""A whole log -> each error in it, looked up: tracebacks and `Type: message` lines.

    for found in scan_log(stream, index):
        print(found.line, found.match.record.id if found.match else "unmatched")

The log is read a block of lines at a time and searched with bytes.find for the words
that start an error (a traceback's header, a name ending in Error, Exception, Warning,
Exit or Interrupt); only those lines reach Python code, so memory stays flat and the
speed is that of the search.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from errscan.frozen import frozen
from errscan.matching import ANSI, Match, TemplateIndex

_BLOCK = 4 << 20  # bytes read at once
# the whole name, checked on the line of a candidate only
_NAME = re.compile(rb"(?<![\w.])(?:[A-Za-z_]\w*\.)*[A-Z]\w*$")


@frozen
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
    for number, text in errors_in(stream):
        matches = index.lookup(text)
        best = matches[0] if matches else None
        summary.errors += 1
        if best is None:
            summary.unmatched += 1
        else:
            summary.by_id[best.record.id] += 1
        yield Found(number, text, best)


_HEADER = b"Traceback (most recent call last):"
# an exception group's traceback: its header, and each of its lines, behind a margin
_GROUP_MARK = b"+ Exception Group "
_GROUP = _GROUP_MARK + _HEADER
_BOXED = re.compile(rb" *[|+]")
_ANSI = re.compile(ANSI.pattern.encode())
# what comes before a class called in a line of code, not in a repr a log shows
_CODE = re.compile(rb"(?:\b(?:raise|return|yield|await)|[(\[,]| = ?)[ \t]*$")
_PLACE = re.compile(rb"(?<![^\s])(?:[A-Za-z]:[\\/])?[^\s:]+\.py:\d+: $")
_LONGEST = 1 << 20  # a traceback longer than this is cut where a block ends
_KEYWORDS = (b"Error", b"Exception", b"Warning", b"Exit", b"Interrupt")
# what follows a name's end: its message, or the arguments of its repr (`KeyError('k')`)
_ENDINGS = (b": ", b":\n", b"\n", b"\r\n", b":\r", b"", b"('", b'("', b"()")


def errors_in(stream: IO[bytes]) -> Iterator[tuple[int, str]]:
    """(line number, text) of each error of a log: a traceback whole, or a line's
    `Type: message` (from the exception's name on). A block never cuts a traceback."""
    number = 0
    rest = b""
    while True:
        block = stream.read(_BLOCK)
        data = rest + block
        if not block:
            data = _ANSI.sub(b"", data) if b"\x1b" in data else data
            if data:
                yield from _errors(data if data.endswith(b"\n") else data + b"\n", number)
            return
        cut = data.rfind(b"\n") + 1
        if b"\x1b" in data:  # a terminal's colours off its whole lines (no sequence
            whole = _ANSI.sub(b"", data[:cut])  # holds a newline)
            data, cut = whole + data[cut:], len(whole)
        header = data.rfind(_HEADER, 0, cut)
        if header >= 0:
            start = data.rfind(b"\n", 0, header) + 1
            group = data.rfind(_GROUP, 0, start)
            if group >= 0:  # the last header may be inside an exception group's box
                group_start = data.rfind(b"\n", 0, group) + 1
                group += len(_GROUP) - len(_HEADER)
                group_end, _ = _traceback(data, group_start, group, cut)
                if group_end is None or group_end > start:
                    start, header = group_start, group
            stop, _ = _traceback(data, start, header, cut)
            if stop is None and cut - start < _LONGEST:
                cut = start  # the unfinished traceback goes whole into the next block
        chunk, rest = data[:cut], data[cut:]
        yield from _errors(chunk, number)
        number += chunk.count(b"\n")


def _in_json_string(chunk: bytes, start: int, at: int, line_end: int) -> bytes | None:
    """What a JSON string of the line holds from `at` on, decoded, where `at` is inside
    one (after an odd number of unescaped quotes): a JSON log's field, structlog's or
    python-json-logger's `"exc_info": "Traceback ...\\n  File ..."` or `"error":
    "KeyError: 'k'"`; None for any other place."""
    quotes = []
    quote = chunk.find(b'"', start, at)
    while quote >= 0:
        if not _escaped(chunk, start, quote):
            quotes.append(quote)
        quote = chunk.find(b'"', quote + 1, at)
    if len(quotes) % 2 == 0:
        return None
    opening = quotes[-1]
    try:
        before, _ = _JSON.raw_decode(chunk[opening:at].decode("utf-8", "replace") + '"')
        value, _ = _JSON.raw_decode(chunk[opening:line_end].decode("utf-8", "replace"))
    except ValueError:  # no string closed on the line, or an escape JSON has not
        return None
    if not isinstance(before, str) or not isinstance(value, str):
        return None
    return value[len(before) :].rstrip("\n").encode()


_JSON = json.JSONDecoder()


def _escaped(chunk: bytes, start: int, quote: int) -> bool:
    """Whether the quote at `quote` is escaped: an odd number of backslashes before it."""
    before = quote
    while before > start and chunk[before - 1] == 0x5C:
        before -= 1
    return (quote - before) % 2 == 1


def _traceback(data: bytes, start: int, at: int, end: int) -> tuple[int | None, bytes]:
    """Where the traceback whose header (`Traceback (most recent call last):`) is at `at`,
    in the line starting at `start`, ends (None where `end` comes first), and its text.
    Where the log puts something before each line (a timestamp, a container's or a
    process's name: Docker's, journald's, GitHub Actions' logs), the traceback is the
    lines that carry it, their digits any digits, and its text is theirs without it."""
    group = data.rfind(_GROUP_MARK, start, at)
    head = group if group >= 0 else at
    prefixed = _prefixed(data, start, head, end) if head > start else None
    if prefixed is None:  # its lines as they are (a header after a text of its line too)
        stop = _traceback_end(data, start, end)
        return stop, data[at : end if stop is None else stop].rstrip(b"\n")
    return prefixed


def _prefixed(data: bytes, start: int, head: int, end: int) -> tuple[int | None, bytes] | None:
    """_traceback's, where the header's line holds something before it that the next
    line holds too (its digits any digits); None where the next line does not."""
    pieces = re.split(rb"(\d+)", data[start:head])
    prefix = re.compile(b"".join(rb"\d+" if i % 2 else re.escape(p) for i, p in enumerate(pieces)))
    lines: list[bytes] = []
    ends: list[int] = []
    position, other = start, False
    while position < end:
        line_end = data.find(b"\n", position, end)
        found = prefix.match(data, position, line_end) if line_end >= 0 else None
        if found is None:
            other = line_end >= 0  # a line of another kind: the traceback ended before it
            break
        lines.append(data[found.end() : line_end])
        ends.append(line_end + 1)
        position = line_end + 1
    if len(lines) == 1 and other:
        return None
    joined = b"\n".join(lines) + b"\n"
    stop = _traceback_end(joined, 0, len(joined))
    if stop is None:
        return (ends[-1] if other else None), joined.rstrip(b"\n")
    count = joined.count(b"\n", 0, stop)
    return ends[count - 1], b"\n".join(lines[:count])


def _traceback_end(data: bytes, start: int, end: int) -> int | None:
    """Where the traceback whose header line starts at `start` ends (past its
    exception's line and that message's indented lines; an exception group's, past its
    last line behind a margin), or None where `end` comes first: the next unindented
    line after the exception's is not there yet."""
    position = data.find(b"\n", start, end) + 1
    if _GROUP in data[start:position]:
        while 0 < position < end:
            line_end = data.find(b"\n", position, end)
            if line_end < 0:
                return None
            if _BOXED.match(data, position, line_end) is None:
                return position
            position = line_end + 1
        return None
    ended = False  # past the exception's line
    while 0 < position < end:
        line_end = data.find(b"\n", position, end)
        if line_end < 0:
            return None
        line = data[position:line_end]
        indented = line[:1].isspace()
        if ended and not indented:
            return position
        ended = ended or (bool(line) and not indented)
        position = line_end + 1
    return None


def _starts(chunk: bytes) -> list[tuple[int, int, bool]]:
    """(start, end, is a traceback) of what may start an error, in order: found with
    bytes.find, some ten times faster than a regular expression's alternation."""
    found: list[tuple[int, int, bool]] = []
    for word, header in [(_HEADER, True)] + [(k, False) for k in _KEYWORDS]:
        at = chunk.find(word)
        while at >= 0:
            end = at + len(word)
            if header or chunk[end : end + 2] in _ENDINGS:
                found.append((at, end, header))
            at = chunk.find(word, end)
    found.sort()
    return found


def _errors(chunk: bytes, number: int) -> Iterator[tuple[int, str]]:
    """The errors of a chunk of whole lines whose first line is line `number` + 1 (a
    traceback not ended within it runs to its end: errors_in cuts chunks so that only
    the log's last one can hold such a traceback)."""
    position = 0
    for at, stop, header in _starts(chunk):
        start = chunk.rfind(b"\n", 0, at) + 1
        if start < position:
            continue  # within an error already given
        line_end = chunk.find(b"\n", stop)
        held = _in_json_string(chunk, start, at, line_end) if header else None
        if held is not None:  # a JSON log's field: the traceback is that string's
            end, text = line_end + 1, held
        elif header:
            ended, text = _traceback(chunk, start, at, len(chunk))
            end = len(chunk) if ended is None else ended
        else:
            name = _NAME.search(chunk, start, stop)
            if name is None:
                continue  # `ValueError` inside a word, or a lowercase name
            if chunk[stop : stop + 1] == b"(" and _CODE.search(chunk, start, name.start()):
                continue  # `raise ValueError('...')`: a line of code (pytest's), no repr
            end = line_end + 1
            # a warning's place before it (`/srv/m.py:7: UserWarning: ...`, pytest's
            # --tb=line too): the frame that tells its site
            place = _PLACE.search(chunk, start, name.start())
            begin = place.start() if place else name.start()
            held = (
                _in_json_string(chunk, start, begin, line_end)
                if b'"' in chunk[start:begin]
                else None
            )
            text = held if held is not None else chunk[begin:line_end]
        number += chunk.count(b"\n", position, start)
        yield number + 1, text.decode("utf-8", "replace").replace("\r\n", "\n").rstrip("\r")
        number += chunk.count(b"\n", start, end)
        position = end
