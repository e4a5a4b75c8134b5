"""Related errors: for each record, up to five others of the scan, best first.

The ranking, deterministic and documented here, scores a pair of records by
    8  for the same function,
    4  for the same class (methods of one class),
    2  for the same file,
    3  for each environment variable both depend on (two at most),
    1  for each name both guards test (three at most),
    6  times the cosine similarity of their messages' words, weighted by TF-IDF,
ties broken by nearness in the scan's (file, line) order, then by id. Only likely
pairs are scored: the 5 records before and after in the same file, and records
sharing an environment variable, a guard name, or one of the two rarest words of their
message (names and words in more than 20 records are passed over), so the work grows
with the number of records, not with its square.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from errscan.models import Site

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_NOT_NAMES = frozenset(
    {
        "not", "and", "or", "is", "in", "None", "True", "False", "for", "if", "case",
        "match", "except", "self", "cls", "len", "isinstance",
    }
)  # fmt: skip
_WINDOW = 5
_COMMON = 20
_RARE_WORDS = 2
_LIMIT = 5


def features(site: Site) -> list[object]:
    """What ranking needs of a site, small enough to hold for every site of a scan."""
    message = "".join(p.text or " " for p in site.message_parts)
    words = sorted({w.lower() for w in _WORD.findall(message)})
    names = sorted({n for g in site.guards for n in _NAME.findall(g) if n not in _NOT_NAMES})
    return [site.function, list(site.env_vars), names, words]


Feature = tuple[str, list[str], list[str], list[str]]


@dataclass
class _Entry:
    id: str
    file: str
    function: str
    cls: str
    env: frozenset[str]
    names: frozenset[str]
    words: list[str]
    weights: dict[str, float] = field(default_factory=dict)
    rare: list[str] = field(default_factory=list)


class Related:
    """Collects every record's features, then answers `of(id)`."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._by_id: dict[str, int] = {}
        self._done = False

    def add(self, record_id: str, file: str, feature: Sequence[object]) -> None:
        function, env, names, words = feature
        owner = [n for n in str(function).split(".") if n != "<locals>"]
        cls = f"{file}:{'.'.join(owner[:-1])}" if len(owner) > 1 else ""
        entry = _Entry(
            record_id,
            file,
            f"{file}:{function}",
            cls,
            frozenset(str(x) for x in env),  # type: ignore[attr-defined]
            frozenset(str(x) for x in names),  # type: ignore[attr-defined]
            [str(x) for x in words],  # type: ignore[attr-defined]
        )
        self._by_id[record_id] = len(self._entries)
        self._entries.append(entry)

    def _finish(self) -> None:
        self._done = True
        df: dict[str, int] = defaultdict(int)
        for entry in self._entries:
            for word in entry.words:
                df[word] += 1
        total = max(1, len(self._entries))
        self._postings: dict[tuple[str, str], list[int]] = defaultdict(list)
        for index, entry in enumerate(self._entries):
            weights = {w: math.log(1 + total / df[w]) for w in entry.words}
            norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
            entry.weights = {w: v / norm for w, v in weights.items()}
            entry.rare = sorted(entry.words, key=lambda w: (df[w], w))[:_RARE_WORDS]
            for key in _keys(entry):
                self._postings[key].append(index)

    def of(self, record_id: str) -> tuple[str, ...]:
        if not self._done:
            self._finish()
        index = self._by_id.get(record_id)
        if index is None:
            return ()
        entry = self._entries[index]
        candidates: set[int] = set()
        for near in range(index - _WINDOW, index + _WINDOW + 1):
            if 0 <= near < len(self._entries) and self._entries[near].file == entry.file:
                candidates.add(near)
        for key in _keys(entry):
            posting = self._postings.get(key, [])
            if len(posting) <= _COMMON:
                candidates.update(posting)
        candidates.discard(index)
        scored = []
        for c in candidates:
            other = self._entries[c]
            scored.append((-_score(entry, other), abs(c - index), other.id))
        best = heapq.nsmallest(_LIMIT, scored)
        return tuple(record_id for score, _, record_id in best if score < 0)


def _keys(entry: _Entry) -> Iterable[tuple[str, str]]:
    for name in entry.env:
        yield ("env", name)
    for name in entry.names:
        yield ("name", name)
    for word in entry.rare:
        yield ("word", word)


def _score(a: _Entry, b: _Entry) -> float:
    score = 0.0
    if a.function == b.function:
        score += 8
    if a.cls and a.cls == b.cls:
        score += 4
    if a.file == b.file:
        score += 2
    if a.env and b.env:
        score += 3 * min(2, len(a.env & b.env))
    if a.names and b.names:
        score += min(3, len(a.names & b.names))
    if a.weights and b.weights:
        small, large = (a.weights, b.weights) if len(a.weights) <= len(b.weights) else (
            b.weights, a.weights)  # fmt: skip
        dot = 0.0
        for word, weight in small.items():
            other = large.get(word)
            if other is not None:
                dot += weight * other
        score += 6 * dot
    return score
