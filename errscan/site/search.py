"""The site's search index: static JSON shards a browser reads, with no server.

Each error is found by the words of its message template, its exception's name, its
file, its function, its repository and its id. Words are lowercased runs of letters
and digits (static/search.js splits a query the same way).

    search/words/XY.json    {word: [error ids]} for the words starting with XY
    search/meta.json        {"errors": N}

A hit shows what the error's JSON (api/errors/ID.json) says of it, read for the hits
shown only: some twenty records of 2 kB, against a shard of what every hit shows for
each hit (ids are spread evenly), and no shard to write again for each error changed.

A query is ranked by the summed rarity (log N/df) of the words it shares with an error,
so the words of a runtime message find its template whatever its runtime parts filled
in. The build's state (errscan/site/state.py) holds each error's words; a rebuild writes
only the shards whose words or errors changed: a commit that touches a few errors
rewrites a few shards, not the whole index, as a monolithic index (Pagefind's, whose
full rebuild of 5,000 pages took 8 s and 206 MB here) would.
"""

from __future__ import annotations

import bisect
import itertools
import json
import operator
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Protocol

from errscan.tempname import gathered

if TYPE_CHECKING:
    from errscan.site.state import State


class Writer(Protocol):
    def put(self, path: str, data: str | bytes, last: str | None = None) -> str: ...

    def stream(self, path: str, chunks: Iterable[str | bytes], last: str | None = None) -> str: ...

    def read(self, path: str, digest: str) -> str | None: ...


_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> set[str]:
    """The words of `text`, as the index and a query hold them."""
    return {word for word in _WORD.findall(text.lower()) if len(word) > 1 or word.isdigit()}


def shard(word: str) -> str:
    """The shard a word is in: its first two characters, as a safe file name."""
    head = word[:2]
    return head if head.isascii() and head.isalnum() else f"u{ord(word[0]):x}"


def write(
    state: State, shards: Iterable[str], writer: Writer, digests: dict[str, str] | None = None
) -> dict[str, str]:
    """Write these shards (`words/XY`) from the state, and meta.json; the
    digests of those that hold anything (an empty shard is not written). A words shard
    whose file is as the last build wrote it (its digest among `digests`) is that file
    patched with what changed of its words (State.patch()); any other is streamed from
    the state as read: memory holds no shard, nor a word's list of errors. A file whose
    bytes are not those of its digest is replaced without being read (FileWriter.stream())."""
    digests = digests or {}
    meta = _dumps({"errors": state.count_errors()})
    written = {
        "search/meta.json": writer.put("search/meta.json", meta, digests.get("search/meta.json"))
    }
    for name in shards:
        kind, _, head = name.partition("/")
        path = f"search/{name}.json"
        if kind != "words":
            continue
        parts = _patched(writer, path, digests.get(path), state.patch(head))
        if parts is None:
            parts = _posting_lists(state.shard_words(head))
        first = next(parts, None)
        if first is None:
            continue
        chunks = gathered(itertools.chain(["{", first], parts, ["}\n"]))
        written[path] = writer.stream(path, chunks, digests.get(path))
    return written


# a shard's entry as _posting_lists writes it: `"word":[`, its ids' JSON strings, `]`
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_HEAD = re.compile(r'"([^"\\]+)":\[')
_ENTRY = re.compile(rf'"([^"\\]+)":\[(?:{_STRING}(?:,(?="))?)*\]')
_ID = re.compile(_STRING)
_PLAIN_CHARACTERS = re.compile(r'[0-9A-Za-z",]*')


def _patched(
    writer: Writer, path: str, digest: str | None, patch: dict[str, dict[str, bool]] | None
) -> Iterator[str] | None:
    """The words shard at `path` with this patch applied, its entries as
    _posting_lists() writes them, where its file is the one of this digest (the
    entries of unchanged words copied as they are); None where it is not."""
    if patch is None or digest is None or (text := writer.read(path, digest)) is None:
        return None
    if not (text.startswith("{") and text.endswith("}\n")):
        return None
    spans: dict[str, tuple[int, int, bool]] = {}  # each word's ids: where, and plain
    at = 1
    while at < len(text) - 2:
        head = _HEAD.match(text, at)
        if head is None:
            return None
        start = head.end()
        end = text.find("]", start)
        plain = end != -1 and _plain(text, start, end)
        if not plain:
            found = _ENTRY.match(text, at)
            if found is None:
                return None
            end = found.end() - 1
        if text[end + 1] not in ",}":
            return None
        spans[head[1]] = (start, end, plain)
        at = end + 2
    if at != len(text) - 1 and text != "{}\n":
        return None
    return _entries(text, spans, patch)


def _plain(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` is JSON strings of letters and digits, comma-separated
    (told by counting, not by a match of each)."""
    if start == end:
        return True
    commas = text.count(",", start, end)
    return (text[start] == '"' == text[end - 1]
            and _PLAIN_CHARACTERS.fullmatch(text, start, end) is not None
            and text.count('","', start, end) == commas
            and text.count('"', start, end) == 2 * commas + 2)  # fmt: skip


def _entries(
    text: str, spans: dict[str, tuple[int, int, bool]], patch: dict[str, dict[str, bool]]
) -> Iterator[str]:
    comma = ""
    for word in sorted(spans.keys() | patch.keys()):
        start, end, plain = spans.get(word, (0, 0, True))
        if word not in patch:
            yield comma + text[start - len(word) - 4 : end + 1]
            comma = ","
            continue
        if plain:
            ids = _spliced(text, start, end, patch[word])
        else:
            ids = _merged(_ID.finditer(text, start, end), patch[word])
        first = next(ids, None)
        if first is None:  # a word no error has now
            continue
        yield f'{comma}"{word}":[{first}'
        yield from gathered("," + token for token in ids)
        yield "]"
        comma = ","


def _spliced(text: str, start: int, end: int, changes: dict[str, bool]) -> Iterator[str]:
    """_merged() of a list of plain ids, `text[start:end]`: each change found by
    bisection, the runs of ids between changes copied as they are (comma-separated)."""
    ids = _Ids(text, start, end)
    at = low = start
    for error_id in sorted(changes):
        low = place = ids.first(error_id, low)
        if place > at:
            yield text[at : place - 1] if place < end else text[at:place]
        at = place
        token = f'"{error_id}"'
        if place < end and text.startswith(token, place, end):  # held: kept or dropped
            at = min(place + len(token) + 1, end)
            if changes[error_id]:
                yield token
        elif changes[error_id]:
            yield json_string(error_id)
    if at < end:
        yield text[at:end]


class _Ids:
    """A list of plain ids in order, `text[start:end]`, searched where it is."""

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text, self.start, self.end = text, start, end
        # ids of one length (record ids are): the k-th found by arithmetic
        self.width = text.find('"', start + 1) + 2 - start if start < end else 0
        count = (end - start + 1) // self.width if self.width else 0
        commas = text[start + self.width - 1 : end : self.width] if self.width else ""
        # every comma where one id ends (a plain list's only commas are between ids)
        if (count * self.width != end - start + 1 or commas != "," * (count - 1)
                or text.count(",", start, end) != count - 1):  # fmt: skip
            self.width = 0
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> str:
        at = self.start + index * self.width
        return self.text[at + 1 : at + self.width - 2]

    def first(self, error_id: str, low: int) -> int:
        """Where the first id not before `error_id` begins, from `low` on; `end`
        where there is none."""
        if self.width:
            index = bisect.bisect_left(self, error_id, (low - self.start) // self.width, self.count)
            return self.start + index * self.width if index < self.count else self.end
        high = self.end
        while low < high:
            middle = (low + high) // 2
            place = self._next(middle)
            if place < self.end and self._at(place) < error_id:
                low = middle + 1
            else:
                high = middle
        return self._next(low)

    def _at(self, place: int) -> str:
        return self.text[place + 1 : self.text.index('"', place + 1)]

    def _next(self, at: int) -> int:
        """Where the first id that begins at `at` or after does."""
        text, end = self.text, self.end
        quote = text.find('"', at, end)
        while quote != -1 and (quote + 1 == end or text[quote + 1] == ","):  # one that ends
            quote = text.find('"', quote + 1, end)
        return end if quote == -1 else quote


def _merged(old: Iterator[re.Match[str]], changes: dict[str, bool]) -> Iterator[str]:
    """The JSON strings of a word's errors: those of the old list (in order) with
    these changes (an error it has now, True, or no longer, False)."""
    added = iter(sorted(error_id for error_id, has in changes.items() if has))
    new = next(added, None)
    for token in old:
        text = token[0]
        error_id = text[1:-1] if "\\" not in text else json.loads(text)
        while new is not None and new < error_id:
            yield json_string(new)
            new = next(added, None)
        if new == error_id:
            new = next(added, None)
        if changes.get(error_id, True):
            yield text
    while new is not None:
        yield json_string(new)
        new = next(added, None)


def _posting_lists(rows: Iterable[tuple[str, str]]) -> Iterator[str]:
    """`"word":["id",...]` of each word of these (word, id) rows, comma-separated, in
    parts: a word of many errors in several."""
    for i, (word, group) in enumerate(itertools.groupby(rows, key=operator.itemgetter(0))):
        # a word is letters and digits: nothing of it to escape in JSON
        yield f'{"," if i else ""}"{word}":['
        comma = ""
        while ids := [row[1] for row in itertools.islice(group, 1024)]:
            yield comma + json_strings(ids)
            comma = ","
        yield "]"


def json_strings(texts: list[str]) -> str:
    """These strings in JSON, comma-separated (ids, letters and digits, as they are)."""
    plain = "".join(texts)
    if not (plain.isascii() and plain.isalnum()):
        return ",".join(_dumps(text)[:-1] for text in texts)
    return '"' + '","'.join(texts) + '"'


def json_string(text: str) -> str:
    """A JSON string as _dumps writes it; an id (letters and digits) as it is."""
    return f'"{text}"' if text.isascii() and text.isalnum() else _dumps(text)[:-1]


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
