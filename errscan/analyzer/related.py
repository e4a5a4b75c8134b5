"""Related errors: for each record, up to five others of the scan, best first.

The ranking, deterministic and documented here, looks across the repository by meaning
as much as by place. It scores a pair of records by
    1  for the same file, 2 more for the same class, 3 more for the same function,
    3  for each environment variable both depend on (two at most),
    1  for each name both guards test (three at most; not within one function, where
       guard clauses make every later site test what the earlier ones did),
   10  times the cosine similarity of their messages' words (stemmed: "supported" and
       "supports" are one), a word weighing log(1 + 4096 / d), d the number of records
       using it rounded down to a power of 2,
and 3 more where the candidate has a message (an error with one says more on a page);
ties broken by nearness in the same file, then by id (records of other files after
those of the same file). Only likely pairs are scored: the 5 records before and after
in the same file, and records sharing an environment variable, a guard name, or one of
the three rarest words of their message that other records use too (by rounded count,
then alphabetically); names and words in more than 32 records are passed over. So the
work grows with the number of records, not with its square.

A record's list depends only on its own features, its candidates' and the rounded
counts of their words. The features live in SQLite (the scan's state, state.py), never
all in memory; after a change of files, `Ranking.settle` marks each record whose list
the change may reach, and `rank` ranks those again, giving what a ranking from scratch
would. It goes about a hundred records at a time, in path order: what a group needs is
read from the tables (Group, read_group), and ranking it is a pure function
(rank_group), which a scan runs in its process pool while it links the files of the
groups done. Where most records are to rank (a first scan), the workers read the groups
themselves, from a copy of the tables: the scan's own are in its uncommitted
transaction, which no other connection sees. A first ranking of up to _HELD records
(a state's first scan) is one group, read from memory rather than the tables
(held_ranker) and ranked in this process, or, where a scan spreads its linking over the
pool (fanout.py), in a process of its own forked as the first pass ends
(fanout.RankApart). Its records and lists go in the tables; their keys (word, df,
post), which only a later ranking reads, are made by the first scan after it that
changes a record (on Django's sdist, 2,091 records, this took some 90 ms of CPU off the
first scan's main process), and never by one that changes none.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import pickle
import re
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from errscan.frozen import frozen
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
_COMMON = 32
_RARE_WORDS = 3
# the score's parts (see _score): place, meaning, and a candidate's having a message
_FILE = 1.0
_CLASS = 2.0
_FUNCTION = 3.0
_MEANING = 10.0
_MESSAGE = 3.0
_LIMIT = 5
_SCALE = 4096
_BATCH = 500  # records whose keys are indexed at once
IN_LIST = "(SELECT value FROM json_each(?))"  # a list as one JSON parameter: any size
# records ranked at once (a file's at least): a group reads its candidates and scores their
# pairs anew, so 128 ranked the 22,866 records of a first scan past _HELD (jax,
# homeassistant, sympy, salt and kubernetes in one repository) in 7.0 s of the workers'
# CPU, 1,024 in 3.5 s; on the benchmark's 10,000 copies, whose records share their words,
# the ranking workers' peak RSS 90.4 MB against 61.7 MB (128 took some 0.5 MB a group)
_GROUP = 1024
_PENDING = 4000  # records added before they are written
# records a first ranking holds in memory (a cold scan's peak RSS 132 MB at 18,633, 88 MB
# through the tables); past that, the tables alone, whose memory stays flat. At 5,000,
# jax's 7,898 records went through the tables: its main process linked every file alone
# (1.2 s of CPU), and its cold scan took 1.30x the bare parse's time (0.89x held)
_HELD = 20_000

# the indexes of the keys' tables, which a first ranking builds once its rows are in
# rather than row by row, which costs more
_KEY_INDEXES = {
    "word_word": "word (word)",
    "word_id": "word (id)",
    "post_key": "post (key)",
    "post_id": "post (id)",
}
SCHEMA = """
CREATE TABLE IF NOT EXISTS rec (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    seq INTEGER NOT NULL,
    feature TEXT NOT NULL,
    related TEXT NOT NULL DEFAULT '[]',
    dirty INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS rec_path ON rec (path, seq);
CREATE INDEX IF NOT EXISTS rec_dirty ON rec (dirty) WHERE dirty != 0;
CREATE TABLE IF NOT EXISTS word (word TEXT NOT NULL, id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS df (word TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS post (key TEXT NOT NULL, id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS unkeyed (deferred INTEGER PRIMARY KEY);
""" + "".join(f"CREATE INDEX IF NOT EXISTS {name} ON {on};\n" for name, on in _KEY_INDEXES.items())
_COPIED = """
CREATE TABLE rec (id TEXT PRIMARY KEY, path TEXT, seq INTEGER, feature TEXT, related TEXT,
                  dirty INTEGER);
CREATE TABLE word (word TEXT, id TEXT);
CREATE TABLE df (word TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
CREATE TABLE post (key TEXT, id TEXT)
"""
_COPIED_COLUMNS = [
    ("rec", "id, path, seq, feature, related, dirty"),
    ("word", "word, id"),
    ("df", "word, n"),
    ("post", "key, id"),
]
_COPIED_INDEXES = """
CREATE INDEX rec_path ON rec (path, seq);
CREATE INDEX word_id ON word (id);
CREATE INDEX post_key ON post (key);
CREATE INDEX post_id ON post (id)
"""  # those read_group's queries use
# unkeyed: one row where a first ranking held in memory left word, df and post empty
_DEFERRED_NOW = "SELECT 1 FROM unkeyed"
_DEFERRED_MARK = "INSERT OR IGNORE INTO unkeyed VALUES (1)"
_DEFERRED_DONE = "DELETE FROM unkeyed"
# rec.dirty: 0 ranked, 1 new (its keys to index), 2 its words' weights changed (its keys,
# rarest words among them, to index again), 3 to rank again. post: the keys that pick a
# record's candidates.


def features(site: Site) -> list[object]:
    """What ranking needs of a site: function, environment variables, guard names, words
    (stemmed, so that "supported" and "supports" are one)."""
    message = "".join(p.text or " " for p in site.message_parts)
    words = sorted({stem(w.lower()) for w in _WORD.findall(message)})
    names = sorted({n for g in site.guards for n in _NAME.findall(g) if n not in _NOT_NAMES})
    return [site.function, list(site.env_vars), names, words]


_SUFFIXES = ("ies", "es", "ed", "ing", "ly", "s", "e")


@functools.lru_cache(maxsize=8192)  # a scan's messages use a few thousand words, often
def stem(word: str) -> str:
    """A word without its commonest English endings, one suffix and a final e: "supported",
    "supports" and "support" -> "support"; "required", "requires" -> "requir". Crude, but
    the same for every record, which is all a shared word needs."""
    for suffix in _SUFFIXES:
        if suffix == "s" and word.endswith(("ss", "is", "us")):
            continue  # class, this, status
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


@dataclass
class _Entry:
    id: str
    path: str
    seq: int
    function: str
    cls: str
    env: frozenset[str]
    names: frozenset[str]
    words: list[str]
    weights: dict[str, float] = field(default_factory=dict)


def _entry(record_id: str, path: str, seq: int, feature: str) -> _Entry:
    return _entry_of(record_id, path, seq, json.loads(feature))


def _entry_of(record_id: str, path: str, seq: int, feature: Sequence[Any]) -> _Entry:
    function, env, names, words = feature
    owner = [n for n in str(function).split(".") if n != "<locals>"]
    cls = ".".join(owner[:-1]) if len(owner) > 1 else ""
    return _Entry(record_id, path, seq, str(function), cls, frozenset(env), frozenset(names),
                  list(words))  # fmt: skip


def _level(count: int) -> int:
    """A word's count rounded to its power of two, as an exponent: 1 -> 1, 2..3 -> 2, ..."""
    return max(0, int(count)).bit_length()


def _weight(count: int) -> float:
    return math.log(1 + _SCALE / (1 << max(0, _level(count) - 1)))


class Ranking:
    """The related-errors tables of one scan state: records in, lists out."""

    def __init__(self, db: sqlite3.Connection, fresh: bool) -> None:
        """`fresh`: the state holds no records yet, so every record is new."""
        self._db = db
        self._fresh = fresh
        db.create_function("level", 1, _level, deterministic=True)
        db.execute("CREATE TEMP TABLE IF NOT EXISTS touched (key TEXT NOT NULL, delta INTEGER)")
        db.execute("CREATE TEMP TABLE IF NOT EXISTS old_df (word TEXT PRIMARY KEY, n INTEGER)")
        db.execute("DELETE FROM touched")
        db.execute("DELETE FROM old_df")
        # records to write: id, path, seq and features, as their JSON text where it was
        # made already (to compare with a kept record's), else as they are (dumped as
        # they are written: a first scan's, after the ranking process has forked)
        self._recs: list[tuple[str, str, int, str | Sequence[Any]]] = []
        self._words: list[tuple[str, str]] = []
        # a first ranking's records, as written to the tables (and their features), the
        # keys of each, and how many records use each word
        self._held: list[tuple[str, str, int, Sequence[Any]]] | None = [] if fresh else None
        self._held_keys: list[tuple[str, str]] | None = None  # made once, when first asked
        self._held_counts: Counter[str] = Counter()
        self._unindexed = fresh
        if fresh:
            for name in _KEY_INDEXES:
                db.execute(f"DROP INDEX IF EXISTS {name}")
        # a first ranking held in memory leaves its keys' tables (word, df, post) empty
        # and says so (a row of `unkeyed`): the scan after it that changes a record makes them
        # (_make_deferred), one that changes nothing never needs them
        self._deferred = not fresh and db.execute(_DEFERRED_NOW).fetchone() is not None
        if fresh:
            db.execute(_DEFERRED_DONE)

    def build_indexes(self) -> None:
        """The indexes a first ranking left out while its rows went in (settle builds
        them; the state's commit makes sure of them)."""
        if self._unindexed:
            for name, on in _KEY_INDEXES.items():
                self._db.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {on}")
            self._unindexed = False

    def remove(self, paths: Sequence[str]) -> None:
        """Forget the records of these files (changed or gone)."""
        ids = [i for (i,) in _fetch(self._db, "SELECT id FROM rec WHERE path IN {}", paths)]
        if ids:
            self._let_go_of_held()  # no longer a first ranking
            self._make_deferred()
            self._forget(ids)

    def _forget(self, ids: list[str]) -> None:
        self._drop_keys(ids)
        words = Counter(w for (w,) in _fetch(self._db, "SELECT word FROM word WHERE id IN {}", ids))
        self._count(words, -1)
        for table in ("word", "rec"):
            self._db.execute(f"DELETE FROM {table} WHERE id IN {IN_LIST}", (json.dumps(ids),))

    def _drop_keys(self, ids: list[str]) -> None:
        """Take these records out of the postings, noting each key they leave as touched."""
        chosen = (json.dumps(ids),)
        self._db.execute(
            f"INSERT INTO touched SELECT key, -1 FROM post WHERE id IN {IN_LIST}", chosen
        )
        self._db.execute(f"DELETE FROM post WHERE id IN {IN_LIST}", chosen)

    def add(self, path: str, records: Sequence[tuple[str, Sequence[object]]]) -> None:
        """One file's records, (id, features) in (line, col) order, in place of those the
        file had: a record it had already, with the same features, keeps its keys."""
        query = "SELECT id, feature FROM rec WHERE path = ?"
        had = {} if self._fresh else dict(self._db.execute(query, (path,)))  # a first scan's: none
        self._make_deferred()
        moved = []
        for seq, (rid, feature) in enumerate(records):
            written: str | Sequence[Any] = feature
            if had:
                written = feature_text(feature)
                if had.get(rid) == written:
                    del had[rid]
                    moved.append((seq, rid))
                    continue
            self._recs.append((rid, path, seq, written))
            if self._held is not None:  # its words written only if it stops being held
                self._held.append((rid, path, seq, feature))
            else:
                for word in feature[3]:  # type: ignore[attr-defined]
                    self._words.append((str(word), rid))
        if self._held is not None and (had or moved or len(self._held) > _HELD):
            self._let_go_of_held()
        if had:  # gone, or the same id with other features (a guard changed, say)
            self._forget(sorted(had))
        if moved:
            self._db.executemany("UPDATE rec SET seq = ?, dirty = 3 WHERE id = ?", moved)
        if len(self._recs) >= _PENDING:
            self._flush()

    def _let_go_of_held(self) -> None:
        """No longer a first ranking held in memory: the words of the records held go to
        the tables with the others', and those written already are marked to rank (every
        record of a first ranking is new)."""
        if self._held is not None:
            self._words.extend(_word_rows((rid, feature) for rid, *_, feature in self._held))
            self._held = None
            self._db.execute("UPDATE rec SET dirty = 1 WHERE dirty = 0")

    def _make_deferred(self) -> None:
        """Make the keys' tables a first ranking held in memory left empty (word, df,
        post, as `settle` would have written them then), before this scan changes them."""
        if not self._deferred:
            return
        self._deferred = False
        db = self._db
        rows = db.execute("SELECT id, feature FROM rec")
        features = [(rid, json.loads(text)) for rid, text in rows]
        counts, postings = _key_rows(features)
        # into empty tables: their indexes built once the rows are in, not row by row
        for name in _KEY_INDEXES:
            db.execute(f"DROP INDEX IF EXISTS {name}")
        db.executemany("INSERT INTO word VALUES (?, ?)", _word_rows(features))
        db.executemany("INSERT INTO df VALUES (?, ?)", sorted(counts.items()))
        db.executemany("INSERT INTO post VALUES (?, ?)", postings)
        for name, on in _KEY_INDEXES.items():
            db.execute(f"CREATE INDEX {name} ON {on}")
        db.execute(_DEFERRED_DONE)

    def _flush(self) -> None:
        """Write the added records a few thousand at a time: one statement per table. A
        first ranking held in memory writes them ranked (its lists come by write_lists;
        finish_held had to mark every one so after), and marks them to rank if it lets
        go of them."""
        dirty = 0 if self._held is not None else 1
        self._db.executemany(
            "INSERT OR REPLACE INTO rec (id, path, seq, feature, dirty) VALUES (?, ?, ?, ?, ?)",
            [
                (rid, path, seq, text if isinstance(text, str) else feature_text(text), dirty)
                for rid, path, seq, text in self._recs
            ],
        )
        self._db.executemany("INSERT INTO word VALUES (?, ?)", self._words)
        self._count(Counter(w for w, _ in self._words), +1)
        self._recs.clear()
        self._words.clear()

    def _count(self, words: Counter[str], sign: int) -> None:
        if not self._fresh:
            self._db.executemany(
                "INSERT OR IGNORE INTO old_df "
                "SELECT :w, COALESCE((SELECT n FROM df WHERE word = :w), 0)",
                [{"w": w} for w in words],
            )
        self._db.executemany(
            "INSERT INTO df VALUES (?, ?) ON CONFLICT (word) DO UPDATE SET n = n + excluded.n",
            [(w, sign * n) for w, n in words.items()],
        )

    def settle(self) -> None:
        """After remove and add: index the keys of new records, and mark every record
        whose list the changes may reach."""
        self._flush()
        db = self._db
        if not self._fresh:
            # a word's rounded count changed: the weights of records using it did too
            db.execute(
                "UPDATE rec SET dirty = 2 WHERE dirty IN (0, 3) AND id IN (SELECT w.id FROM word w "
                "JOIN old_df o USING (word) LEFT JOIN df d USING (word) "
                "WHERE level(o.n) != level(COALESCE(d.n, 0)))"
            )
        db.execute("DELETE FROM df WHERE n <= 0")
        if self._held is not None:
            db.execute(_DEFERRED_MARK)  # its keys made by the next scan that needs them
        else:
            self._index_keys()
        self.build_indexes()
        if self._fresh:
            return
        # sharing a key with a record gone, new or reweighted, where that key picks
        # candidates (_COMMON records or fewer) before or after the change
        db.execute(
            "UPDATE rec SET dirty = 3 WHERE dirty = 0 AND id IN (SELECT p.id FROM post p JOIN "
            "(SELECT key, SUM(delta) AS delta, (SELECT COUNT(*) FROM post q WHERE q.key = t.key)"
            " AS now FROM touched t GROUP BY key) c USING (key) "
            f"WHERE c.now <= {_COMMON} OR c.now - c.delta <= {_COMMON})"
        )
        # in the window of a reweighted record (a new one's window is its own new file)
        db.execute(
            "UPDATE rec SET dirty = 3 WHERE dirty = 0 AND EXISTS (SELECT 1 FROM rec x "
            "WHERE x.dirty = 2 AND x.path = rec.path "
            f"AND x.seq BETWEEN rec.seq - {_WINDOW} AND rec.seq + {_WINDOW})"
        )

    def _postings(self) -> list[tuple[str, str]]:
        """The (key, id) rows of the records held, with their words' counts: made once."""
        if self._held_keys is None:
            held = self._held or []
            self._held_counts, self._held_keys = _key_rows(
                [(rid, feature) for rid, *_, feature in held]
            )
        return self._held_keys

    def held_ranker(self) -> Ranker:
        """A first ranking's records as one group, ranked from memory: made from the
        records held as they were added (their features as objects, not read back from
        text), with what read_group would read of the tables for them (nothing is read
        of the tables)."""
        keys: dict[str, list[str]] = {}
        members: dict[str, list[str]] = {}
        for key, rid in self._postings():  # one pass: the keys by record, the records by key
            keys.setdefault(rid, []).append(key)
            members.setdefault(key, []).append(rid)
        return Ranker(
            (
                [
                    (_entry_of(rid, path, seq, feature), "[]", 1)
                    for rid, path, seq, feature in self._held or []
                ],
                keys,
                {key: rids for key, rids in members.items() if len(rids) <= _COMMON},
                [],
                list(self._held_counts.items()),
            )
        )

    def held_ids(self) -> dict[str, list[str]]:
        """A first ranking's record ids by path, in each file's order (link.ids'), where
        the ranking holds them: linking workers take them rather than hash them again."""
        found: dict[str, list[str]] = {}
        for rid, path, _, _ in self._held or ():
            found.setdefault(path, []).append(rid)
        return found

    def write_lists(self, updates: Updates) -> None:
        """Lists ranked elsewhere (held_ranker's), written to the tables."""
        self._db.executemany("UPDATE rec SET related = ? WHERE id = ?", [u[:2] for u in updates])

    def finish_held(self) -> None:
        """A first ranking done: every list written (write_lists), none marked."""
        self._db.execute("UPDATE rec SET dirty = 0 WHERE dirty != 0")
        self._held, self._held_keys, self._held_counts = None, None, Counter()

    def _index_keys(self) -> None:
        """The keys (environment variables, guard names, rarest words) of marked records."""
        db = self._db
        last = -1
        while True:  # a batch at a time: memory holds a batch, whatever the scan's size
            batch = db.execute(
                "SELECT rowid, id, feature, dirty FROM rec WHERE dirty IN (1, 2) AND rowid > ? "
                f"ORDER BY rowid LIMIT {_BATCH}",
                (last,),
            ).fetchall()
            if not batch:
                return
            last = batch[-1][0]
            entries = [(rid, json.loads(feature), dirty) for _, rid, feature, dirty in batch]
            shared = _shared(self._counts({w for _, f, _ in entries for w in f[3]}))
            reweighted = [rid for rid, _, dirty in entries if dirty == 2]
            if reweighted:
                self._drop_keys(reweighted)
            rows = [
                (key, rid)
                for rid, (_function, env, names, words), _dirty in entries
                for key in _keys(env, names, words, shared)
            ]
            db.executemany("INSERT INTO post VALUES (?, ?)", rows)
            if not self._fresh:
                db.executemany("INSERT INTO touched VALUES (?, 1)", [(k,) for k, _ in rows])

    def _counts(self, words: set[str]) -> dict[str, int]:
        return dict(_fetch(self._db, "SELECT word, n FROM df WHERE word IN {}", sorted(words)))

    def rank(self) -> None:
        """Rank the marked records again, all at once."""
        for _ in self.ranked():
            pass

    def ranked(
        self, run: Run = map, scratch: Path | None = None, sent: bool = False
    ) -> Iterator[tuple[list[str], list[str]]]:
        """Rank the marked records again, a few files at a time in path order: for each
        group, once its lists are written, its files and those of them where some
        record's list changed. `run` maps the ranking over the groups, in order (a
        process pool's map): the tables are written here alone. With `scratch`, a
        folder, and most records to rank, the tables are copied there first and `run`'s
        workers read each group from the copy themselves; else this process reads
        the groups and sends them, packed where `sent` (`run` hands them to other
        processes), else as they are (an incremental scan's few groups, ranked here:
        packing and unpacking them was some 10 ms of the benchmark's)."""
        db = self._db
        if self._held is not None:
            yield from self._ranked_held()
            return
        with contextlib.ExitStack() as stack:
            copy = None
            if scratch is not None and self._mostly_marked():
                try:
                    folder = stack.enter_context(tempfile.TemporaryDirectory(dir=scratch))
                    copy = str(Path(folder, "ranking.sqlite"))
                    self._export(copy)
                except (OSError, sqlite3.Error):
                    copy = None  # no room for a copy: the groups are read here
            groups, read = itertools.tee(self._groups())
            pack = _pack if sent else _as_it_is
            jobs: Iterator[Job] = (
                (copy, paths) if copy is not None else pack(read_group(db, paths)) for paths in read
            )
            for group, updates in zip(groups, run(rank_job, jobs), strict=True):
                db.executemany("UPDATE rec SET related = ? WHERE id = ?", [u[:2] for u in updates])
                done = f"UPDATE rec SET dirty = 0 WHERE dirty != 0 AND path IN {IN_LIST}"
                db.execute(done, (json.dumps(group),))
                yield group, sorted({path for _, _, path in updates})

    def _ranked_held(self) -> Iterator[tuple[list[str], list[str]]]:
        """A first ranking: its records, held since they were added, as one group, with
        what read_group would read of the tables for it."""
        held = self._held or []
        if not held:
            self.finish_held()
            return
        updates = self.held_ranker().rank()
        self.write_lists(updates)
        self.finish_held()
        yield sorted({path for _, path, *_ in held}), sorted({path for _, _, path in updates})

    def _mostly_marked(self) -> bool:
        """Whether a quarter or more of the records are to rank: copying every table
        then costs less than reading each group here."""
        marked = self._db.execute("SELECT COUNT(*) FROM rec WHERE dirty != 0").fetchone()[0]
        total = self._db.execute("SELECT COUNT(*) FROM rec").fetchone()[0]
        return bool(marked and 4 * marked >= total)

    def _export(self, path: str) -> None:
        """Copy what ranking reads (records, keys, words, word counts) to a database at
        `path`, whole before any worker opens it."""
        copy = sqlite3.connect(path, isolation_level=None)
        try:
            copy.execute("PRAGMA journal_mode = OFF")
            copy.execute("PRAGMA synchronous = OFF")
            copy.execute("BEGIN")
            for statement in _COPIED.split(";"):
                if statement.strip():
                    copy.execute(statement)
            for table, columns in _COPIED_COLUMNS:
                marks = ", ".join("?" * len(columns.split(",")))
                copy.executemany(
                    f"INSERT INTO {table} ({columns}) VALUES ({marks})",
                    self._db.execute(f"SELECT {columns} FROM {table}"),
                )
            for statement in _COPIED_INDEXES.split(";"):
                if statement.strip():
                    copy.execute(statement)
            copy.execute("COMMIT")
        finally:
            copy.close()

    def _groups(self) -> Iterator[list[str]]:
        """The files with marked records, by path, in groups of about _GROUP records; the
        first groups smaller, so that linking, which waits for the first, starts soon."""
        group: list[str] = []
        size = 0
        target = max(1, _GROUP // 8)
        # a page at a time, each read whole: groups read ahead of those written
        query = (
            "SELECT path, COUNT(*) FROM rec WHERE dirty != 0 AND path > ? "
            f"GROUP BY path ORDER BY path LIMIT {_BATCH}"
        )
        last = ""
        while page := self._db.execute(query, (last,)).fetchall():
            for path, count in page:
                group.append(path)
                size += count
                if size >= target:
                    yield group
                    group, size = [], 0
                    target = min(_GROUP, 2 * target)
            last = page[-1][0]
        if group:
            yield group

    @property
    def held(self) -> bool:
        """Whether this is a first ranking, held in memory (see ranked)."""
        return self._held is not None

    def lists(self, path: str) -> dict[str, tuple[str, ...]]:
        """The related lists of one file's records, by id."""
        rows = self._db.execute("SELECT id, related FROM rec WHERE path = ?", (path,))
        return {rid: tuple(json.loads(related)) for rid, related in rows}


@frozen
class Group:
    """What ranking the marked records of a few files needs, as read from the tables."""

    rows: list[tuple[str, str, int, str, str, int]]  # the files' records, marked or not
    keys: list[tuple[str, str]]  # (id, key) of the marked records
    members: list[tuple[str, str]]  # (key, id) of those keys that pick candidates
    others: list[tuple[str, str, int, str]]  # candidates of other files
    counts: list[tuple[str, int]]  # how many records use each word of these records


Updates = list[tuple[str, str, str]]  # (list, id, path) of each record whose list changed
# a copy's path and a group's files, a packed Group (for another process), or a Group
Job = tuple[str, list[str]] | bytes | Group
Run = Callable[[Callable[[Job], Updates], Iterable[Job]], Iterable[Updates]]
_copy_open: tuple[str, sqlite3.Connection] | None = None  # in a worker: the copy it reads


def rank_job(job: Job) -> Updates:
    """rank_group over a group as `ranked` sends it: pickled (a group on its way to a
    worker is held as bytes, a few times smaller than its objects), or named by its
    files, for the worker to read from the tables' copy; as it is, ranked here."""
    global _copy_open
    if isinstance(job, Group):
        return rank_group(job)
    if isinstance(job, bytes):
        group = pickle.loads(job)
        assert isinstance(group, Group)
        return rank_group(group)
    path, paths = job
    if _copy_open is None or _copy_open[0] != path:
        if _copy_open is not None:
            _copy_open[1].close()
        # read-only, and never changed while open: no locks, no journal
        copy = sqlite3.connect(f"file:{quote(path)}?mode=ro&immutable=1", uri=True)
        _copy_open = (path, copy)
    return rank_group(read_group(_copy_open[1], paths))


def _pack(group: Group) -> bytes:
    return pickle.dumps(group, pickle.HIGHEST_PROTOCOL)


def _as_it_is(group: Group) -> Group:
    return group


def rank_group(group: Group) -> Updates:
    """New lists of the marked records of a few files, where changed: pure, so it can
    run in another process."""
    return Ranker(_parts_of(group)).rank()


# a group's records as entries with their lists and marks, its records' keys (by id),
# the members of those that pick candidates (ids by key), the candidates of other
# files, and its words' counts
_Parts = tuple[
    list[tuple[_Entry, str, int]],
    dict[str, list[str]],
    dict[str, list[str]],
    list[_Entry],
    list[tuple[str, int]],
]


def _parts_of(group: Group) -> _Parts:
    """A group read from the tables as a Ranker's parts: its rows made entries."""
    return (
        [(_entry(rid, path, seq, feature), related, dirty)
         for rid, path, seq, feature, related, dirty in group.rows],
        _grouped(group.keys),
        _grouped(group.members),
        [_entry(rid, path, seq, feature) for rid, path, seq, feature in group.others],
        group.counts,
    )  # fmt: skip


def _grouped(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """The second of each pair by the first, in order."""
    found: dict[str, list[str]] = {}
    for first, second in pairs:
        found.setdefault(first, []).append(second)
    return found


class Ranker:
    """A group's records read once (entries, weights, keys), to rank all its marked
    records, or those of a few of its files at a time."""

    def __init__(self, parts: _Parts) -> None:
        """`parts`: a group's records as entries, with their lists and marks (_Parts):
        from the tables (_parts_of) or from memory (Ranking.held_ranker)."""
        rows, keys, members, others, counts = parts
        self._files: dict[str, list[_Entry]] = {}
        self._by_id: dict[str, _Entry] = {}
        self._marked: dict[str, list[tuple[_Entry, str]]] = {}  # by path
        for entry, related, dirty in rows:
            self._by_id[entry.id] = entry
            self._files.setdefault(entry.path, []).append(entry)
            if dirty:
                self._marked.setdefault(entry.path, []).append((entry, related))
        for entries in self._files.values():
            entries.sort(key=lambda e: e.seq)  # seq is the place in the file: 0, 1, 2, ...
        self._keys = keys
        self._members = members
        for entry in others:
            self._by_id[entry.id] = entry
        weight = {w: _weight(n) for w, n in counts}
        for entry in self._by_id.values():
            entry.weights = _weights(entry.words, weight)
        # each pair's score, the same both ways, by either id then the other (found
        # without making a tuple of the two, a third of ranking's time when it did)
        self._scores: dict[str, dict[str, float]] = {}

    def rank(self, paths: Iterable[str] | None = None) -> Updates:
        """New lists of the marked records of `paths` (default: every file's), where
        changed."""
        files, by_id, keys, members = self._files, self._by_id, self._keys, self._members
        scores = self._scores
        chosen = self._marked if paths is None else paths
        updates = []
        for entry, old in (item for path in chosen for item in self._marked.get(path, ())):
            this_id, seq, path = entry.id, entry.seq, entry.path
            window = files[path][max(0, seq - _WINDOW) : seq + _WINDOW + 1]
            candidates = {e.id for e in window}
            for key in keys.get(this_id, ()):
                candidates.update(members.get(key, ()))
            candidates.discard(this_id)
            mine = scores.setdefault(this_id, {})
            scored = []
            for rid in candidates:
                score = mine.get(rid)
                other = by_id[rid]
                if score is None:
                    score = mine[rid] = scores.setdefault(rid, {})[this_id] = _score(entry, other)
                if other.words:  # an error with a message says more on a page than one without
                    score += _MESSAGE
                if other.path == path:
                    near = abs(other.seq - seq)
                    scored.append((-score, False, near, rid))
                else:
                    scored.append((-score, True, -1, rid))
            scored.sort()  # what heapq.nsmallest gives, faster for a few dozen
            text = _json_list([rid for score, _, _, rid in scored[:_LIMIT] if score < 0])
            if text != old:
                updates.append((text, this_id, path))
        return updates


_quoted = json.encoder.encode_basestring_ascii  # what json.dumps writes of a str (C)


def feature_text(feature: Sequence[Any]) -> str:
    """json.dumps(list(feature)), as the tables keep a record's features: written
    directly for features as `features` makes them (a function's name, then lists of
    strings), at a quarter of json.dumps' cost (a first scan writes one a record)."""
    try:
        function, env, names, words = feature
        if type(env) is list and type(names) is list and type(words) is list:
            return (
                f"[{_quoted(function)}, [{', '.join(map(_quoted, env))}], "
                f"[{', '.join(map(_quoted, names))}], [{', '.join(map(_quoted, words))}]]"
            )
    except (TypeError, ValueError):  # not strings, or not four of them
        pass
    return json.dumps(list(feature))  # another shape: as json.dumps writes it


def _json_list(ids: list[str]) -> str:
    """json.dumps(ids), written directly for ids that need no escaping (link.record_id's
    hex digits)."""
    plain = "".join(ids)
    if plain.isascii() and plain.isprintable() and '"' not in plain and "\\" not in plain:
        return '["' + '", "'.join(ids) + '"]' if ids else "[]"
    return json.dumps(ids)


def _word_rows(records: Iterable[tuple[str, Sequence[Any]]]) -> list[tuple[str, str]]:
    """The (word, id) rows of records given as (id, features)."""
    return [(str(w), rid) for rid, feature in records for w in feature[3]]


def _key_rows(
    records: Sequence[tuple[str, Sequence[Any]]],
) -> tuple[Counter[str], list[tuple[str, str]]]:
    """How many of the records (id, features) use each word, and their (key, id) rows."""
    counts = Counter(str(w) for _, feature in records for w in feature[3])
    shared = _shared(counts)
    rows = [
        (key, rid)
        for rid, (_function, env, names, words) in records
        for key in _keys(env, names, [str(w) for w in words], shared)
    ]
    return counts, rows


def _keys(
    env: Iterable[str],
    names: Iterable[str],
    words: Iterable[str],
    shared: dict[str, tuple[int, str]],
) -> list[str]:
    """The keys that pick a record's candidates: its environment variables, its guard
    names, and the rarest of its words that other records use too (a word of this
    record alone picks no one). `shared`: _shared of the words' counts."""
    rare = sorted([shared[w] for w in words if w in shared])[:_RARE_WORDS]
    return [f"e:{n}" for n in env] + [f"n:{n}" for n in names] + [f"w:{w}" for _, w in rare]


def _shared(counts: Mapping[str, int]) -> dict[str, tuple[int, str]]:
    """The words other records use too (counted more than once), each with what orders
    them rarest first: its rounded count, then itself."""
    return {w: (_level(n), w) for w, n in counts.items() if n > 1}


def _weights(words: list[str], weight: dict[str, float]) -> dict[str, float]:
    """A record's words' weights, scaled to a unit vector."""
    raw = {w: weight.get(w) or _weight(1) for w in words}
    # fsum: exactly rounded, so the same on every Python (3.12's sum() compensates, and
    # a last bit of difference reorders lists whose candidates score alike)
    norm = math.sqrt(math.fsum(v * v for v in raw.values())) or 1.0
    return {w: v / norm for w, v in raw.items()}


def _score(a: _Entry, b: _Entry) -> float:
    """What a pair shares, the same both ways: place (at most _FUNCTION + _CLASS +
    _FILE), environment variables, guard names, and meaning (_MEANING times the cosine
    of their messages' words), which can outweigh place."""
    score = 0.0
    wa, wb = a.weights, b.weights
    same_file = a.path == b.path
    if same_file:
        score += _FILE
        if a.function == b.function:
            score += _FUNCTION
        if a.cls and a.cls == b.cls:
            score += _CLASS
    if a.env and b.env:
        score += 3 * min(2, len(a.env & b.env))
    if a.names and b.names and (not same_file or a.function != b.function):
        # (in one function, guard clauses make later sites test what earlier ones did)
        score += min(3, len(a.names & b.names))
    if wa and wb:
        small, large = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
        dot = 0.0
        for word, weight in small.items():
            other = large.get(word)
            if other is not None:
                dot += weight * other
        score += _MEANING * dot
    return score


def read_group(db: sqlite3.Connection, paths: list[str]) -> Group:
    """What ranking the marked records of a few files reads of the tables."""
    query = "SELECT id, path, seq, feature, related, dirty FROM rec WHERE path IN {}"
    rows = _fetch(db, query, paths)
    keys = _fetch(db, "SELECT id, key FROM post WHERE id IN {}", [r[0] for r in rows if r[5]])
    # a key's postings counted only up to one past _COMMON: a common word's are many
    query = (
        "SELECT key, id FROM post WHERE key IN (SELECT k.value FROM json_each(?) k WHERE "
        "(SELECT COUNT(*) FROM (SELECT 1 FROM post q WHERE q.key = k.value "
        f"LIMIT {_COMMON + 1})) <= {_COMMON})"
    )
    members = db.execute(query, (json.dumps(sorted({key for _, key in keys})),)).fetchall()
    outside = sorted({rid for _, rid in members} - {r[0] for r in rows})
    query = "SELECT id, path, seq, feature FROM rec WHERE id IN {}"
    others = _fetch(db, query, outside)
    query = "SELECT word, n FROM df WHERE word IN (SELECT word FROM word WHERE id IN {})"
    counts = _fetch(db, query, [r[0] for r in rows] + outside)
    return Group(rows, keys, members, others, counts)


def _fetch(db: sqlite3.Connection, query: str, values: Sequence[str]) -> list[Any]:
    """The rows of `query`, its `{}` standing for the list `values`."""
    return db.execute(query.format(IN_LIST), (json.dumps(list(values)),)).fetchall()
