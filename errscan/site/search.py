"""The site's search index: static JSON shards a browser reads, with no server.

Each error is found by the words of its message template, its exception's name, its
file, its function, its repository and its id. Words are lowercased runs of letters
and digits (static/search.js splits a query the same way).

    search/words/XY.json    {word: [error ids]} for the words starting with XY
    search/docs/AB.json     {error id: [repository, exception, message cut, address]}
                            for the ids starting with AB
    search/meta.json        {"errors": N}

A query is ranked by the summed rarity (log N/df) of the words it shares with an error,
so the words of a runtime message find its template whatever its runtime parts filled
in. The build's state (errscan/site/state.py) holds each error's words; a rebuild writes
only the shards whose words or errors changed: a commit that touches a few errors
rewrites a few shards, not the whole index, as a monolithic index (Pagefind's, whose
full rebuild of 5,000 pages took 8 s and 206 MB here) would.
"""

from __future__ import annotations

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
    def put(self, path: str, data: str | bytes) -> None: ...

    def stream(self, path: str, chunks: Iterable[str | bytes]) -> None: ...


_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> set[str]:
    """The words of `text`, as the index and a query hold them."""
    return {word for word in _WORD.findall(text.lower()) if len(word) > 1 or word.isdigit()}


def shard(word: str) -> str:
    """The shard a word is in: its first two characters, as a safe file name."""
    head = word[:2]
    return head if head.isascii() and head.isalnum() else f"u{ord(word[0]):x}"


def write(state: State, shards: Iterable[str], writer: Writer) -> list[str]:
    """Write these shards (`words/XY`, `docs/AB`) from the state, and meta.json; the
    paths of those that hold anything (an empty shard is not written). Each is streamed
    from the state as read: memory holds no shard, nor a word's list of errors."""
    writer.put("search/meta.json", _dumps({"errors": state.count_errors()}))
    written = ["search/meta.json"]
    for name in shards:
        kind, _, head = name.partition("/")
        if kind == "words":
            parts = _posting_lists(state.shard_words(head))
        elif kind == "docs":
            parts = (f"{',' if i else ''}{json_string(error_id)}:{shown}"
                     for i, (error_id, shown) in enumerate(state.shard_docs(head)))  # fmt: skip
        else:
            continue
        first = next(parts, None)
        if first is None:
            continue
        path = f"search/{name}.json"
        writer.stream(path, gathered(itertools.chain(["{", first], parts, ["}\n"])))
        written.append(path)
    return written


def _posting_lists(rows: Iterable[tuple[str, str]]) -> Iterator[str]:
    """`"word":["id",...]` of each word of these (word, id) rows, comma-separated, in
    parts: a word of many errors in several."""
    for i, (word, group) in enumerate(itertools.groupby(rows, key=operator.itemgetter(0))):
        # a word is letters and digits: nothing of it to escape in JSON
        yield f'{"," if i else ""}"{word}":['
        comma = ""
        while ids := [row[1] for row in itertools.islice(group, 1024)]:
            yield comma + _strings(ids)
            comma = ","
        yield "]"


def _strings(texts: list[str]) -> str:
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
