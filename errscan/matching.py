"""What a user saw -> the records that could have produced it, best first.

    lookup("ValueError: bad name 'x'", records)
        ->  [Match(record with template "bad name {name!r}", "full", ...), ...]

The input is a bare message, `Type: message`, or a whole pasted traceback (its last
exception line, and its `File "...", line N` frames). Full matches come first: templates
whose literal parts match in full, a site named by a frame before the rest, then the
longest literal coverage; then close matches by similarity, with their score.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import itertools
import marshal
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from errscan.builtin_exceptions import BUILTIN_EXCEPTIONS, is_builtin_subclass
from errscan.extractors.message import PLACEHOLDER
from errscan.frozen import frozen
from errscan.models import ErrorRecord
from errscan.tempname import write_atomically

_FRAME = re.compile(
    r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<function>\S+))?', re.MULTILINE
)
_TYPED = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*): ?(?P<message>.*)$", re.DOTALL)
_BARE = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*$")
_CLOSE_LIMIT = 5
_CLOSE_FLOOR = 0.5


@frozen
class Seen:
    """What the user saw, taken apart."""

    exception: str | None
    message: str
    frames: tuple[tuple[str, int, str], ...]  # (file, line, function)


@frozen
class Match:
    record: ErrorRecord
    kind: str  # "full", "frame" (named by a traceback, message unread) or "close"
    score: float


# what Python prints between the tracebacks of a chain of exceptions
_CHAINED = re.compile(
    r"^\s*(?:The above exception was the direct cause of the following exception:"
    r"|During handling of the above exception, another exception occurred:)\s*$",
    re.MULTILINE,
)


# a terminal's escape sequences (colours: pytest's --color=yes, Python 3.13's
# tracebacks on a terminal, CI logs): CSI, OSC and the two-character ones
ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def parse_chain(text: str, as_given: bool = False) -> list[Seen]:
    """Each exception of a pasted chain, the first cause first. An exception group's
    traceback (Python 3.11+, anyio's and trio's) is taken box by box: the group's own
    comes last, so that a lookup, last first, offers the group, then its exceptions in
    their order. A terminal's colours are no part of what it says, unless `as_given`."""
    text = text if as_given else ANSI.sub("", text)
    text = text.replace("\r\n", "\n")  # a text copied on Windows, or a log written there
    boxes = _boxes(text)
    if boxes is None:
        return _chain(text)
    group, *inner = boxes
    return [seen for box in reversed(inner) for seen in _chain(box)] + _chain(group)


def _chain(text: str) -> list[Seen]:
    return [_parse_one(part) for part in _CHAINED.split(text) if part.strip()] or [_parse_one(text)]


# what Python prints of an exception group: each exception in a box of its own, its
# lines behind a margin (`  | `, `  + ` on the group's first line), the boxes between
# rules (`  +-+---------------- 1 ----------------`, `    +---------------- 2 ---...`,
# `    +------------------------------------` after the last)
_RULE = re.compile(r"^ *\+(?:-\+)?-{4,}(?: (?:\d+|\.\.\.) -{4,})? *$")
_FIRST_RULE = re.compile(r"^ *\+-\+-{4,} 1 -{4,} *$", re.MULTILINE)  # before a group's first
_MARGIN = re.compile(r"^ *[|+](?: |$)")
_GROUP_HEADER = "Exception Group Traceback (most recent call last):"


def _boxes(text: str) -> list[str] | None:
    """The text of each box of an exception group's traceback, its margin off, in the
    order printed (the group's first, a nested group's before its own exceptions); None
    for a text without the rule before a group's first exception (a message's own
    `+-----` lines stay its own)."""
    if _FIRST_RULE.search(text) is None:
        return None
    lines = text.split("\n")
    boxes: list[list[str]] = [[]]
    for line in lines:
        if _RULE.match(line):
            boxes.append([])
        else:
            line = _MARGIN.sub("", line, count=1)
            boxes[-1].append(line.replace(_GROUP_HEADER, "Traceback (most recent call last):"))
    return ["\n".join(box) for box in boxes if any(line.strip() for line in box)]


# pytest's report of a failure: each entry of its traceback ends with its place,
# `m.py:8: in load` (`--tb=long`'s last, `m.py:2: KeyError`), and the exception's lines
# follow `E` and the code's indent; `--tb=line` gives `/path/m.py:2: KeyError: text`
_PYTEST_PLACE = re.compile(
    r"^(?P<file>(?:[A-Za-z]:[\\/])?[^\s:][^:\n]*?\.py):(?P<line>\d+):"
    r"(?: in (?P<function>\S+)| (?P<type>[A-Za-z_][\w.]*)(?P<said>: .*)?)?[ \t]*$",
    re.MULTILINE,
)
_PYTEST_ERROR = re.compile(r"^E(?P<gap> +)(?P<text>.*)$", re.MULTILINE)


def _typed(shown: str, frames: tuple[tuple[str, int, str], ...]) -> Seen | None:
    """`Type: message`, its type a dotted name; None for other text."""
    typed = _TYPED.match(shown)
    if typed and " " not in typed["type"]:
        return Seen(typed["type"], typed["message"], frames)
    return None


def _seen(shown: str, frames: tuple[tuple[str, int, str], ...]) -> Seen:
    """What an exception's lines say, another tool having printed them: `Type: message`,
    a class alone (an empty message), else a text of no type known."""
    typed = _typed(shown, frames)
    if typed is not None:
        return typed
    if _BARE.match(shown):
        return Seen(shown, "", frames)
    return Seen(None, shown, frames)


def _pytest(text: str) -> Seen | None:
    """What pytest reported of a failure: the exception behind its `E` lines (or a
    `--tb=line` place), the entries' places as frames; None for other text."""
    places = list(_PYTEST_PLACE.finditer(text))
    said = [m for m in places if m["said"]]
    errors = list(_PYTEST_ERROR.finditer(text))
    if not errors and len(said) == 1 and len(places) == 1:
        place = said[0]
        shown = f"{place['type']}{place['said']}"
    elif errors and places:
        width = len(errors[0]["gap"])  # the code's indent: a line's own spaces after it
        shown = "\n".join(m["gap"][width:] + m["text"] for m in errors)
    else:
        return None
    frames = tuple((m["file"], int(m["line"]), m["function"] or "") for m in places)
    return _seen(shown, frames)


# IPython's and Jupyter's traceback: `KeyError    Traceback (most recent call last)`, then
# each frame's place (`File /srv/m.py:8, in load(key)`, `Cell In[1], line 3`) above its
# code, the line raising marked `---->`, and the exception last
_IPYTHON_HEADER = re.compile(r"^[\w.]+ +Traceback \(most recent call last\)$", re.MULTILINE)
_IPYTHON_FRAME = re.compile(
    r"^(?:File (?P<file>.+?):(?P<line>\d+)(?:, in (?P<function>[^\s(]+)\(.*\))?"
    r"|Cell In\[\d+\], line \d+)$",
    re.MULTILINE,
)
_IPYTHON_CODE = re.compile(r"^(?:-*> ?)? *\d+ ")  # a numbered line of a frame's code


def _ipython(text: str) -> Seen | None:
    """What IPython printed of an exception (a notebook's cell, `%run`); None for other
    text."""
    if _IPYTHON_HEADER.search(text) is None:
        return None
    places = list(_IPYTHON_FRAME.finditer(text))
    if not places:
        return None
    frames = tuple((m["file"], int(m["line"]), m["function"] or "") for m in places if m["file"])
    lines = text[places[-1].end() :].split("\n")[1:]
    start = next(
        (i for i, line in enumerate(lines) if line.strip() and not _IPYTHON_CODE.match(line)),
        None,
    )
    shown = "\n".join(lines[start:]).rstrip() if start is not None else ""
    return _seen(shown, frames)


# rich's traceback (rich.traceback.install, Typer's): a box under `Traceback (most recent
# call last)`, each frame's place (`│ /srv/m.py:8 in load │`) above its code, the
# exception below the box
_RICH_TOP = re.compile(r"^\S─+ Traceback \(most recent call last\) ─+\S$", re.MULTILINE)
_RICH_FRAME = re.compile(
    r"^│ (?P<file>[^│\s][^│]*?):(?P<line>\d+) in (?P<function>[^\s│]+) *│$", re.MULTILINE
)
_RICH_BOTTOM = re.compile(r"^╰─+╯$", re.MULTILINE)


def _rich(text: str) -> Seen | None:
    """What rich printed of an exception; None for other text."""
    top = _RICH_TOP.search(text)
    bottom = _RICH_BOTTOM.search(text, top.end()) if top else None
    if top is None or bottom is None:
        return None
    found = _RICH_FRAME.finditer(text, top.end(), bottom.start())
    frames = tuple((m["file"], int(m["line"]), m["function"]) for m in found)
    shown = text[bottom.end() :].strip("\n").rstrip()
    return _seen(shown, frames)


def _parse_one(text: str) -> Seen:
    text = text.strip("\n")
    found = list(_FRAME.finditer(text))
    frames = tuple((m["file"], int(m["line"]), m["function"] or "") for m in found)
    if not frames and not text.startswith("Traceback"):
        reported = _pytest(text) or _ipython(text) or _rich(text)
        if reported is not None:
            return reported
    if frames or text.startswith("Traceback"):
        # the exception comes after the last frame's indented code (and carets): its
        # first line is the first not indented, and every line after it is its message
        tail = text[found[-1].end() :] if frames else text
        lines = tail.split("\n")[1:]
        start = next(
            (i for i, line in enumerate(lines) if line.strip() and not line[0].isspace()),
            None,
        )
        text = "\n".join(lines[start:]).rstrip() if start is not None else tail.strip()
    typed = _typed(text, frames)
    if typed is not None:
        return typed
    if frames and _BARE.match(text):  # Python prints an empty message's class alone
        return Seen(text, "", frames)
    usage = _USAGE_ERROR.match(text) if not frames else None
    if usage is not None:  # argparse's exit: the usage, then `PROG: error: MESSAGE`
        return Seen("SystemExit", usage["error"], frames)
    shown = _repr_of_exception(text)
    if shown is not None:
        return Seen(shown[0], shown[1], frames)
    return Seen(None, text, frames)


# an exception as its repr shows it (asyncio's `exception=ValueError('bad')`, Celery's
# `raised unexpected: KeyError('k')`, a log's `%r`): the class, then literal arguments
_REPR = re.compile(
    r"(?<![\w.])(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt))\("
)
_REPR_LIMIT = 10_000  # characters of arguments read
_REPR_TRIES = 8  # reprs tried, and closing parentheses each, the arguments' end in turn


def _repr_of_exception(text: str) -> tuple[str, str] | None:
    """The class and the str() of the first exception in `text` written as its repr,
    `Type('text')`, whose arguments are literals (read with ast.literal_eval, which runs
    nothing): one argument's text (a KeyError's repr of it), several arguments' tuple;
    None where there is none."""
    import ast  # here: only a repr pasted needs it

    for found in itertools.islice(_REPR.finditer(text), _REPR_TRIES):
        start = found.end()
        close = text.find(")", start)
        for _ in range(_REPR_TRIES):
            if not 0 <= close < start + _REPR_LIMIT:
                break
            try:
                args = ast.literal_eval(f"({text[start:close]},)") if close > start else ()
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                close = text.find(")", close + 1)
                continue
            if not isinstance(args, tuple):
                break
            kind = found["type"]
            if len(args) == 1:
                keyed = kind.rsplit(".", 1)[-1] == "KeyError"
                return kind, repr(args[0]) if keyed else str(args[0])
            return kind, str(args) if args else ""
    return None


_USAGE_ERROR = re.compile(r"usage: .*?^(?P<error>[^\s:]+: error: .*)", re.DOTALL | re.MULTILINE)


def lookup(text: str, records: Iterable[ErrorRecord]) -> list[Match]:
    """The records behind what a user saw, best first: for a chain of exceptions, those
    of the last one, then those of the earlier ones."""
    return TemplateIndex(records).lookup(text)


_WORD = re.compile(r"[A-Za-z0-9_]{3,}")
_CLOSE_CANDIDATES = 64  # records, sharing the most words with a message, scored for closeness
_COMMON = 2000  # a word in more records than this is left out of closeness candidates
# Literal text this short (`{a!r} is {b!r}`, `{owner}.{viewname}`) is in most messages:
# away from a frame, such a template counts as one with none.
_FEW = 3
_FORMAT = 1  # of compiled(): raise it when the tables change


class TemplateIndex:
    """A scan's templates compiled once for many lookups (`lookup --log`, a site's
    paste box): each record is filed under the rarest whole words of its literal text,
    its file's name and its class, so a lookup verifies the few templates that could
    match rather than every record. A record with no whole word is checked always.

    The tables are plain lists, dicts and sets of strings and numbers, so `compiled()`
    writes them with marshal and `load()` reads them back without rebuilding (a cache
    keyed by the scan keeps them); what one candidate needs is computed as it is met.
    """

    def __init__(self, records: Iterable[ErrorRecord], tables: tuple[Any, ...] | None = None):
        self.records = list(records)
        size = len(self.records)
        self._templates: list[Sequence[Sequence[tuple[str | None, str | None]]] | None]
        self._templates = [None] * size
        self._names: list[frozenset[str] | None] = [None] * size
        self._literal: list[int | None] = [None] * size
        self._tables = tables if tables is not None else self._build()
        (self._anchored, self._paired, self._free, self._words, self._by_file,
         self._bases, self._needs) = self._tables  # fmt: skip

    def _build(self) -> tuple[Any, ...]:
        templates = [self._templates_of(i) for i in range(len(self.records))]
        # each template's whole words: a record is filed under the rarest of each, so
        # a message of any of its paths finds it
        per_template = [[_safe_words(parts) for parts in t] for t in templates]
        words = [set().union(*ws) if ws else set() for ws in per_template]
        counts: Counter[str] = Counter(w for ws in words for w in ws)
        anchored: dict[str, list[int]] = defaultdict(list)  # by one word
        paired: dict[str, dict[str, list[int]]] = defaultdict(dict)  # by two
        free: list[int] = []
        by_word: dict[str, list[int]] = defaultdict(list)
        by_file: dict[str, list[int]] = defaultdict(list)
        bases: dict[str, set[str]] = defaultdict(set)
        # words every template of a record holds: a message without one of them cannot
        # match it, and a set's subset test rules most candidates out before _matches
        needs = [frozenset(set.intersection(*ws)) if ws else frozenset() for ws in per_template]
        for i, record in enumerate(self.records):
            if record.message is not None and not all(per_template[i]):
                free.append(i)  # a template with no whole word: checked always
            else:
                for anchor in {_anchor(ws, counts) for ws in per_template[i]}:
                    if len(anchor) == 1:
                        anchored[anchor[0]].append(i)
                    else:
                        paired[anchor[0]].setdefault(anchor[1], []).append(i)
            for word in words[i]:
                if counts[word] <= _COMMON:
                    by_word[word].append(i)
            by_file[record.file.rsplit("/", 1)[-1]].append(i)
            name = class_name(record)
            if name:
                bases[name].add(name)
                bases[name].update(b.rsplit(".", 1)[-1] for b in record.exception_bases)
        return (dict(anchored), dict(paired), free, dict(by_word), dict(by_file),
                {name: frozenset(found) for name, found in bases.items()}, needs)  # fmt: skip

    def compiled(self) -> bytes:
        """The tables, for `load` with the same records in the same order."""
        return marshal.dumps((_FORMAT, len(self.records), self._tables))

    @classmethod
    def load(cls, records: Sequence[ErrorRecord], data: bytes) -> TemplateIndex | None:
        """The index `compiled()` wrote for these records; None where `data` is not one
        (another format, another number of records, damaged)."""
        try:
            version, size, tables = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None
        if version != _FORMAT or size != len(records) or len(tables) != 7:
            return None
        return cls(records, tables)

    def _templates_of(self, i: int) -> Sequence[Sequence[tuple[str | None, str | None]]]:
        found = self._templates[i]
        if found is None:
            record = self.records[i]
            found = self._templates[i] = templates_of(record) if record.message is not None else []
        return found

    def _names_of(self, i: int) -> frozenset[str]:
        found = self._names[i]
        if found is None:
            found = self._names[i] = class_names(self.records[i])
        return found

    def _literal_of(self, i: int) -> int:
        found = self._literal[i]
        if found is None:
            found = self._literal[i] = literal_length(self.records[i])
        return found

    def lookup(self, text: str) -> list[Match]:
        chain = parse_chain(text)
        ranked = self._ranked(chain)
        whole = _whole_line(text, chain)
        if whole is not None and not any(m.kind == "full" for m in ranked):
            # `KafkaError: broker down` pasted alone, where no `broker down` of a
            # KafkaError matches: it may be the whole str() of a class whose __str__
            # names it (`f"{type(self).__name__}: {self.args[0]}"`)
            ranked = _full_first(self._ranked([whole]), ranked)
        if ANSI.search(text):
            # a message may hold escape sequences of its own (a repository's text is
            # untrusted): what matches it in full as given comes first
            ranked = _full_first(self._ranked(parse_chain(text, as_given=True)), ranked)
        out: list[Match] = []
        taken: set[str] = set()
        for match in ranked:
            if match.record.id not in taken:
                taken.add(match.record.id)
                out.append(match)
        return out

    def _ranked(self, chain: list[Seen]) -> list[Match]:
        """The matches of each exception of a chain, its last first."""
        return [match for seen in reversed(chain) for match in self._lookup_one(seen)]

    def _ancestors(self, seen: str | None) -> frozenset[str] | None:
        """The simple names of the classes the type a user saw is, itself included;
        None where the type is unknown, which then filters nothing."""
        if seen is None:
            return None
        name = seen.rsplit(".", 1)[-1]
        found = set(self._bases.get(name, ()))
        found.update(BUILTIN_EXCEPTIONS.get(name, ()))
        return frozenset(found) if found else None

    def _candidates(self, seen: Seen, words: frozenset[str]) -> list[int]:
        found = set(self._free)
        for word in words:
            found.update(self._anchored.get(word, ()))
            partners = self._paired.get(word)
            if not partners:
                continue
            if len(partners) <= len(words):
                for second, indices in partners.items():
                    if second in words:
                        found.update(indices)
            else:
                for second in words:
                    found.update(partners.get(second, ()))
        for path, _, _ in seen.frames:
            found.update(self._by_file.get(path.replace("\\", "/").rsplit("/", 1)[-1], ()))
        return sorted(found)

    def _began_here(self, seen: Seen, depth: int) -> bool:
        """Whether a frame deeper than `depth` is in a file of the records, and not at
        another re-raise: the traceback shows where in the repository the error began."""
        for path, line, _ in list(reversed(seen.frames))[:depth]:
            shown = path.replace("\\", "/")
            same = [
                self.records[i]
                for i in self._by_file.get(shown.rsplit("/", 1)[-1], ())
                if same_file(shown, self.records[i].file)
            ]
            if same and not any(r.kind == "reraise" and r.line <= line <= r.end_line for r in same):
                return True
        return False

    def _close(self, seen: Seen) -> list[int]:
        """The records sharing the most words with the message, for a closeness score."""
        shared: Counter[int] = Counter()
        for word in {w.lower() for w in _WORD.findall(seen.message)}:
            shared.update(self._words.get(word, ()))
        ranked = sorted((-n, i) for i, n in shared.items())
        return [i for _, i in ranked[:_CLOSE_CANDIDATES]]

    def _lookup_one(self, seen: Seen) -> list[Match]:
        """Full matches a frame names, the most literal first (those of a class errscan
        could not resolve after those of the type seen); then sites a frame names whose
        template did not match (a class's __str__ may reword it) or was not read, but
        whose class is the type seen or unresolved; then full matches elsewhere; then
        sites a frame names of a class not known to be it; close matches only where none
        of those."""
        ancestors = self._ancestors(seen.exception)
        full: list[tuple[tuple[float, int, int, int, int, str], Match]] = []
        close: list[tuple[float, str, ErrorRecord]] = []
        words = frozenset(w.lower() for w in _WORD.findall(seen.message))
        for i in self._candidates(seen, words):
            record = self.records[i]
            depth = _frame_depth(record, seen) if seen.frames else None
            at_frame = depth is not None
            typed = _same_type(ancestors, self._names_of(i), record.kind)
            # A class errscan could not resolve (`raise parser.error_class(...)`,
            # `raise self.mapping[code]()`) may be the type seen: where a frame names the
            # site, it ranks as the type's would (a full match after theirs).
            maybe = typed or (at_frame and record.exception_qualname is None)
            if record.message is None:
                if (
                    depth is not None
                    and record.kind == "reraise"
                    and not self._began_here(seen, depth)
                ):
                    # where the error passed, and no deeper frame is in the repository:
                    # where it began is not shown (jinja2 re-raises every error with its
                    # traceback rewritten), so after full matches elsewhere with literal
                    # text, before those with none
                    full.append(((2, 0, 0, depth, 1, record.id), Match(record, "frame", 0.0)))
                elif depth is not None:  # a traceback names the site; its message unread
                    # of a class not known to be the type seen: after full matches
                    rank = 1 if maybe and ancestors is not None else 3
                    full.append(((rank, depth, 0, 0, 1, record.id), Match(record, "frame", 0.0)))
                continue
            needs = self._needs[i] <= words  # the cheap test first: most candidates fail it
            if (not needs and depth is None) or not maybe:
                continue
            literal = self._literal_of(i)
            plain = literal if at_frame or literal >= _FEW else 0
            matched = (
                needs
                # an empty template is exact: it matches the empty message alone
                and (
                    plain or not record.message or (ancestors is not None and seen.message.strip())
                )
                # `{message}` matches anything: only with a known type, and text
                and any(_matches(parts, seen.message) for parts in self._templates_of(i))
            )
            if matched:
                # templates with no literal text after every one with some
                # the most literal first, a helper's call (`invalid size: {v}`) before
                # the raise in it (`invalid {kind}: {v}`); then the innermost frame
                # an unresolved class's after the type's, before frames whose template did
                # not match (0.5)
                key = ((0 if typed else 0.5) if at_frame else 2, 0 if plain else 1, -literal,
                       depth or 0, 0 if seen.exception else 1, record.id)  # fmt: skip
                full.append((key, Match(record, "full", float(literal))))
            elif depth is not None and ancestors is not None:
                full.append(((1, depth, 0, 0, 0, record.id), Match(record, "frame", 0.0)))
        # close matches only where nothing matched in full: scoring costs far more
        for i in [] if full else self._close(seen):
            record = self.records[i]
            if record.message is None or not _same_type(ancestors, self._names_of(i), record.kind):
                continue
            skeleton = "".join(p.text or "" for p in record.message_parts)
            ratio = _similarity(skeleton, seen.message)
            if ratio >= _CLOSE_FLOOR:
                close.append((-ratio, record.id, record))
        full.sort(key=lambda item: item[0])
        close.sort(key=lambda item: (item[0], item[1]))
        best = [match for _, match in full]
        best += [Match(r, "close", round(-neg, 3)) for neg, _, r in close[:_CLOSE_LIMIT]]
        return best


def _full_first(other: list[Match], ranked: list[Match]) -> list[Match]:
    """`ranked` with the full matches of another reading of the text before it, and that
    reading's other matches after it (lookup keeps each record's first)."""
    return [m for m in other if m.kind == "full"] + ranked + other


def _whole_line(text: str, chain: list[Seen]) -> Seen | None:
    """A line pasted alone that was read as `Type: message`, as a message of a type not
    known: the text of a __str__ that begins with the class's name (kafka's KafkaError,
    `ConfigurationError: ...`) reads so too. None for anything else."""
    if len(chain) != 1 or chain[0].frames or chain[0].exception is None:
        return None
    line = ANSI.sub("", text).strip()
    if "\n" in line or not _TYPED.match(line):
        return None
    return Seen(None, line, ())


def _anchor(words: set[str], counts: Counter[str]) -> tuple[str, ...]:
    """A template's key in the index: its two rarest whole words (in alphabetical
    order), or its one: a message it matches holds them too."""
    rarest = sorted(words, key=lambda w: (counts[w], w))[:2]
    return tuple(sorted(rarest))


def _safe_words(parts: Sequence[tuple[str | None, str | None]]) -> set[str]:
    """Lowercased whole words of a template's literal text that every message it matches
    holds as whole words: none that touches a placeholder (texts between placeholders
    are merged, so only a text's first and last words can)."""
    found: set[str] = set()
    last = len(parts) - 1
    for k, (text, _) in enumerate(parts):
        for match in _WORD.finditer(text or ""):
            if (match.start() == 0 and k > 0) or (match.end() == len(text or "") and k < last):
                continue
            found.add(match.group().lower())
    return found


_SCORED_CHARS = 2000  # characters of each side a similarity score reads


def _similarity(a: str, b: str) -> float:
    """difflib's ratio, after cheap bounds: lengths that rule out _CLOSE_FLOOR, then
    quick_ratio; both sides cut to _SCORED_CHARS, since the full ratio is quadratic (a
    185 KB message took 24 s)."""
    a, b = a[:_SCORED_CHARS], b[:_SCORED_CHARS]
    if not a or not b or 2 * min(len(a), len(b)) / (len(a) + len(b)) < _CLOSE_FLOOR:
        return 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.quick_ratio() < _CLOSE_FLOOR:
        return 0.0
    return matcher.ratio()


def _frame_depth(record: ErrorRecord, seen: Seen) -> int | None:
    """How far from the innermost frame a frame of the traceback is the site (0: the
    innermost); or, for a re-raise, which keeps the frames of where the error began, a
    frame in the site's function whose clause caught it. None where no frame is."""
    for depth, (path, line, function) in enumerate(reversed(seen.frames)):
        if not same_file(path, record.file):
            continue
        if record.line <= line <= record.end_line:
            return depth
        if record.kind == "reraise" and function == record.function.rsplit(".", 1)[-1]:
            caught = {name.rsplit(".", 1)[-1] for name in record.reraises}
            seen_name = (seen.exception or "").rsplit(".", 1)[-1]
            if not seen.exception or seen_name in caught or _builtin_subclass(seen_name, caught):
                return depth
    return None


def same_file(shown: str, file: str) -> bool:
    """Whether a traceback's file is the repository's `file`: the same path from some
    folder on, at least the package and module (`.../site-packages/sqlalchemy/orm/x.py`
    is `lib/sqlalchemy/orm/x.py`; an egg, a zipapp, a Windows path likewise)."""
    shown_parts = shown.replace("\\", "/").split("/")
    parts = file.split("/")
    common = 0
    while (
        common < min(len(shown_parts), len(parts))
        and shown_parts[-1 - common] == parts[-1 - common]
    ):
        common += 1
    return common >= min(len(parts), 2)


def _builtin_subclass(name: str, bases: Iterable[str]) -> bool:
    return any(is_builtin_subclass(name, base) for base in bases)


def class_names(record: ErrorRecord) -> frozenset[str]:
    """The simple names a record's class goes by: as written, and as resolved."""
    names = {(record.exception or "").rsplit(".", 1)[-1]}
    if record.exception_qualname:
        names.add(record.exception_qualname.rsplit(".", 1)[-1])
    return frozenset(names)


def _same_type(ancestors: frozenset[str] | None, names: frozenset[str], kind: str) -> bool:
    """The type a user saw (whose class names are `ancestors`) is the record's class (its
    `names`) or one of its subclasses; a re-raise, whose class is what was caught, takes
    any; no type, or one no record or builtin knows, filters nothing."""
    return ancestors is None or kind == "reraise" or bool(names & ancestors)


def templates_of(record: ErrorRecord) -> Sequence[Sequence[tuple[str | None, str | None]]]:
    """The message's parts, and each other candidate split back at its placeholders."""
    found: list[Sequence[tuple[str | None, str | None]]] = [
        [(p.text, p.expr) for p in record.message_parts]
    ]
    for candidate in record.message_candidates[1:]:
        parts: list[tuple[str | None, str | None]] = []
        position = 0
        for placeholder in PLACEHOLDER.finditer(candidate):
            parts.append((candidate[position : placeholder.start()], None))
            parts.append((None, placeholder.group()))
            position = placeholder.end()
        parts.append((candidate[position:], None))
        found.append(parts)
    return found


def literal_runs(parts: Sequence[tuple[str | None, str | None]]) -> list[str]:
    """The template's literal text between its placeholders (one run more than them)."""
    runs = [""]
    for text, _ in parts:
        if text is None:
            runs.append("")
        else:
            runs[-1] += text
    return runs


def literal_length(record: ErrorRecord) -> int:
    """How much literal text the record's template holds: full matches rank by it."""
    return sum(len((p.text or "").strip()) for p in record.message_parts)


def class_name(record: ErrorRecord) -> str:
    """The simple name of the record's class, as resolved where it was."""
    return (record.exception_qualname or record.exception or "").rsplit(".", 1)[-1]


def _matches(parts: Sequence[tuple[str | None, str | None]], message: str) -> bool:
    """Whether the template, its placeholders standing for any text, is the whole message.

    A greedy left-to-right search of its literal runs, linear in the message: a regular
    expression of adjacent `.*?`s backtracks without end (16 placeholders, or 30 against
    a 40-word message, once hung every lookup of a store).
    """
    runs = literal_runs(parts)
    if len(runs) == 1:
        return message == runs[0]
    first, *middle, last = runs
    end = len(message) - len(last)
    if end < len(first) or not message.startswith(first) or not message.endswith(last):
        return False
    position = len(first)
    for run in middle:
        found = message.find(run, position, end)
        if found < 0:
            return False
        position = found + len(run)
    return True


class CompiledIndexes:
    """Compiled TemplateIndex tables kept as files, one per scan key, so a lookup of a
    scan met before (`lookup --scan`, `--db`, `--from`) skips compiling. A file is a
    blake2b digest of its body, then the body; a damaged or foreign file is compiled
    again, and the least recently used go past `max_bytes`."""

    def __init__(self, cache_dir: Path, max_bytes: int = 128 << 20) -> None:
        self.root = cache_dir / "indexes"
        self.max_bytes = max_bytes

    def index(self, records: Sequence[ErrorRecord], key: str) -> TemplateIndex:
        path = self.root / f"{key}.bin"
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        digest, body = data[:_DIGEST], data[_DIGEST:]
        if digest and hashlib.blake2b(body, digest_size=_DIGEST).digest() == digest:
            found = TemplateIndex.load(records, body)
            if found is not None:
                with contextlib.suppress(OSError):
                    os.utime(path)  # recently used: pruned last
                return found
        built = TemplateIndex(records)
        self._put(path, built.compiled())
        return built

    def _put(self, path: Path, body: bytes) -> None:
        digest = hashlib.blake2b(body, digest_size=_DIGEST).digest()
        with contextlib.suppress(OSError):
            self.root.mkdir(parents=True, exist_ok=True)
            write_atomically(path, digest + body)
            self.prune(self.max_bytes)

    def usage(self) -> tuple[int, int]:
        """How many compiled indexes are kept, and their bytes."""
        files = self._files()
        return len(files), sum(size for _, _, size in files)

    def prune(self, max_bytes: int) -> int:
        """Drop the least recently used until at most `max_bytes` remain: how many."""
        files = sorted(self._files())
        total = sum(size for _, _, size in files)
        dropped = 0
        for _, path, size in files:
            if total <= max_bytes:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size
                dropped += 1
        return dropped

    def _files(self) -> list[tuple[float, Path, int]]:
        found = []
        try:
            for path in self.root.glob("*.bin"):
                with contextlib.suppress(OSError):
                    stat = path.stat()
                    found.append((stat.st_mtime, path, stat.st_size))
        except OSError:
            return []
        return found


_DIGEST = 32
