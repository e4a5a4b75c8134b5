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
in. Shards are small and written only where their bytes change: a commit that touches
a few errors rewrites the shards of their words and ids, not the whole index, as a
monolithic index (Pagefind's, whose full rebuild of 5,000 pages took 8 s and 206 MB
here) would.
"""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
from collections.abc import Callable, Iterable

_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> set[str]:
    """The words of `text`, as the index and a query hold them."""
    return {word for word in _WORD.findall(text.lower()) if len(word) > 1 or word.isdigit()}


def shard(word: str) -> str:
    """The shard a word is in: its first two characters, as a safe file name."""
    head = word[:2]
    return head if head.isascii() and head.isalnum() else f"u{ord(word[0]):x}"


class Index:
    """Collects the errors of a build in a scratch SQLite database (memory holds a page
    cache of it, whatever the number of errors), then writes the shards."""

    def __init__(self) -> None:
        self._db = sqlite3.connect("", isolation_level=None)
        self._db.execute("PRAGMA cache_size = -4096")
        self._db.execute("CREATE TABLE word (shard TEXT, word TEXT, id TEXT)")
        self._db.execute("CREATE TABLE doc (shard TEXT, id TEXT, shown TEXT)")
        self._db.execute("BEGIN")
        self.count = 0
        self._words_held: list[tuple[str, str, str]] = []
        self._docs_held: list[tuple[str, str, str]] = []

    def add(self, error_id: str, fields: Iterable[str], shown: list[str]) -> None:
        """An error, the texts it is found by, and what a hit shows of it."""
        self.count += 1
        found = set().union(*(words(text) for text in fields))
        self._words_held.extend((shard(w), w, error_id) for w in found)
        self._docs_held.append((error_id[:2], error_id, json.dumps(shown)))
        if len(self._docs_held) >= 1024:
            self._flush()

    def _flush(self) -> None:
        self._db.executemany("INSERT INTO word VALUES (?, ?, ?)", self._words_held)
        self._db.executemany("INSERT INTO doc VALUES (?, ?, ?)", self._docs_held)
        self._words_held.clear()
        self._docs_held.clear()

    def write(self, put: Callable[[str, str], None]) -> None:
        self._flush()
        self._db.execute("COMMIT")
        rows = self._db.execute("SELECT shard, word, id FROM word ORDER BY shard, word, id")
        for name, group in itertools.groupby(rows, key=lambda row: row[0]):
            body: dict[str, list[str]] = {}
            for _, word, error_id in group:
                body.setdefault(word, []).append(error_id)
            put(f"search/words/{name}.json", _dumps(body))
        rows = self._db.execute("SELECT shard, id, shown FROM doc ORDER BY shard, id")
        for name, group in itertools.groupby(rows, key=lambda row: row[0]):
            docs = {error_id: json.loads(shown) for _, error_id, shown in group}
            put(f"search/docs/{name}.json", _dumps(docs))
        put("search/meta.json", _dumps({"errors": self.count}))
        self._db.close()


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
