"""What the last build of a site made, kept beside it in `.errscan-site.db` (SQLite).

    meta     the build's key (errscan's code and version): another key, every page anew
    files    each file the site holds, the key of the inputs it was made from, and its
             repository ("" for the site's own files, SEARCH for the search index)
    repos    each repository built: the stored scan, a stamp of the scans before it and
             of its enrichments, its summary
    errors   each error as the lists and the paste box show it, by repository
    links    which error's page shows which other error (its related errors), by the
             error shown
    words    the search index's words, by shard and word
    parts    each file's part of its repository's lists and templates (its errors'
             lines joined): what the repository's page is joined from

A rebuild asks the store only what changed since the scan recorded here, and makes the
repository's lists, JSON and search shards from these tables: its work follows what
changed, not the size of the site, and memory holds a page cache, whatever the number
of errors. A state that cannot be read is started afresh (a full build, which writes
only the files whose bytes change). A build that changes nothing writes nothing here.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

NAME = ".errscan-site.db"
SEARCH = "*search"  # the `repo` of the search index's files
_FORMAT = "4"
_PATCH_LIMIT = 20_000  # words of errors changed past which shards are made whole (memory)
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE files (path TEXT PRIMARY KEY, key TEXT NOT NULL, repo TEXT NOT NULL)",
    "CREATE INDEX files_repo ON files (repo, path)",
    "CREATE TABLE repos (name TEXT PRIMARY KEY, scan INTEGER NOT NULL, stamp TEXT NOT NULL, "
    "summary TEXT NOT NULL)",
    # related: the JSON of its related errors' ids; words: of its (shard, word) pairs
    "CREATE TABLE errors (id TEXT PRIMARY KEY, repo TEXT NOT NULL, file TEXT NOT NULL, "
    "line INTEGER NOT NULL, exception TEXT NOT NULL, kind TEXT NOT NULL, resolved INTEGER "
    "NOT NULL, brief TEXT NOT NULL, item TEXT NOT NULL, template TEXT NOT NULL, related TEXT "
    "NOT NULL, words TEXT NOT NULL)",
    "CREATE INDEX errors_file ON errors (repo, file, line, id)",
    "CREATE INDEX errors_kind ON errors (repo, kind)",
    "CREATE INDEX errors_exception ON errors (repo, exception, file, line, id)",
    # one b-tree each, no rowid table beside it: a third of the writes and of the size
    "CREATE TABLE links (target TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (target, id)) "
    "WITHOUT ROWID",
    "CREATE TABLE words (shard TEXT NOT NULL, word TEXT NOT NULL, id TEXT NOT NULL, "
    "PRIMARY KEY (shard, word, id)) WITHOUT ROWID",
    # section: file (name: the file), unresolved or templates (name: "")
    "CREATE TABLE parts (repo TEXT NOT NULL, section TEXT NOT NULL, name TEXT NOT NULL, "
    "file TEXT NOT NULL, count INTEGER NOT NULL, body TEXT NOT NULL, "
    "PRIMARY KEY (repo, section, name, file))",
    "CREATE INDEX parts_file ON parts (repo, file)",
)
_DIRTY_LIMIT = 5_000  # files of a repository changed past which all its parts are made


class Error(NamedTuple):
    """An error as the state keeps it (what `errors`, `links` and `words` hold of it)."""

    id: str
    repo: str
    file: str
    line: int
    exception: str  # its simple name
    kind: str  # as a reader says it
    resolved: bool
    brief: str  # JSON of what a related error's page shows of it
    item: str  # its line in the repository's lists (HTML)
    template: str  # its row of the paste box's JSON
    related: tuple[str, ...]
    words: tuple[tuple[str, str], ...]  # (shard, word)


def _fields(error: Error) -> tuple[Any, ...]:
    """An error's row of `errors`, its id aside."""
    return (
        error.repo, error.file, error.line, error.exception, error.kind, int(error.resolved),
        error.brief, error.item, error.template,
        json.dumps(list(error.related), ensure_ascii=False),
        json.dumps([list(w) for w in error.words], ensure_ascii=False),
    )  # fmt: skip


class RepoState(NamedTuple):
    scan: int
    stamp: str
    summary: dict[str, Any]


def _connect(path: Path) -> sqlite3.Connection:
    """The state's database at `path`, made where there is none, in a transaction;
    DatabaseError where it is damaged or of another format."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = DELETE")
        db.execute("PRAGMA temp_store = FILE")
        db.execute("PRAGMA cache_size = -2048")
        if not db.execute("SELECT name FROM sqlite_master").fetchall():
            db.execute("BEGIN")
            for statement in _SCHEMA:
                db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('format', ?)", (_FORMAT,))
            db.execute("COMMIT")
        found = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        if found != (_FORMAT,):
            raise sqlite3.DatabaseError("another format")
        db.execute("BEGIN")
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


def _old_files(path: Path) -> list[tuple[str, str, str]]:
    """The files a state's database at `path` knows, where it can tell (a state of
    another format); none where it cannot (damaged)."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        rows = db.execute("SELECT path, key, repo FROM files").fetchall()
    except sqlite3.Error:
        return []
    finally:
        db.close()
    return [row for row in rows if all(isinstance(value, str) for value in row)]


class State:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        # what changed in each words shard since the last build, word by word: which
        # errors it now has (True) or no longer has (False); None past _PATCH_LIMIT
        self.patches: dict[str, dict[str, dict[str, bool]]] | None = {}
        self._patched = 0
        self.anew: set[str] = set()  # words shards to make whole (a repository added)
        # the files whose parts changed, by repository; None: all its files
        self.dirty: dict[str, set[str] | None] = {}

    @classmethod
    def open(cls, out: Path) -> State:
        """The state of the site at `out`, or a new one where there is none or it is
        damaged (then every file is made again and compared with what is there). The
        files a state of another format knew stay known, so that those of errors no
        more are removed."""
        path = out / NAME
        try:
            return cls(_connect(path))
        except sqlite3.DatabaseError:
            files = _old_files(path)
            path.unlink(missing_ok=True)
            state = cls(_connect(path))
            state.db.executemany("INSERT OR IGNORE INTO files VALUES (?, ?, ?)", files)
            return state

    def commit(self) -> None:
        self.db.execute("COMMIT")
        self.db.close()

    def close(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        self.db.close()

    # the build's key
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        if self.meta(key) != value:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def forget_pages(self) -> None:
        """Every repository as never built (the files stay known, to compare and remove)."""
        for table in ("repos", "errors", "links", "words", "parts"):
            self.db.execute(f"DELETE FROM {table}")
        self.patches = None

    # files
    def _in(self, query: str, values: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """The rows of `query`, its `{marks}` the placeholders of these values, 500 of
        them a query (SQLite's limit on variables)."""
        for start in range(0, len(values), 500):
            part = values[start : start + 500]
            yield from self.db.execute(query.format(marks=",".join("?" * len(part))), part)

    def keys(self, paths: Sequence[str]) -> dict[str, str]:
        return dict(self._in("SELECT path, key FROM files WHERE path IN ({marks})", paths))

    def made(self, files: Iterable[tuple[str, str, str]]) -> None:
        """(path, key, repository) of files made: what changed of them is kept."""
        self.db.executemany(
            "INSERT INTO files VALUES (?, ?, ?) ON CONFLICT (path) DO UPDATE SET key = "
            "excluded.key, repo = excluded.repo WHERE key IS NOT excluded.key OR repo IS NOT "
            "excluded.repo",
            files,
        )

    def files_of(self, repo: str) -> list[str]:
        return [row[0] for row in self.db.execute(
            "SELECT path FROM files WHERE repo = ? ORDER BY path", (repo,))]  # fmt: skip

    def forget_files(self, paths: Sequence[str]) -> None:
        self.db.executemany("DELETE FROM files WHERE path = ?", ((p,) for p in paths))

    def begin_made(self) -> None:
        """Start noting the files a repository's build makes (not_made())."""
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS made (path TEXT PRIMARY KEY)")
        self.db.execute("DELETE FROM temp.made")

    def note_made(self, paths: Iterable[str]) -> None:
        self.db.executemany("INSERT OR IGNORE INTO temp.made VALUES (?)", ((p,) for p in paths))

    def not_made(self, repo: str, also: Sequence[str]) -> list[str]:
        """The repository's files that the state holds and the build did not note, nor
        are among `also`."""
        return [row[0] for row in self.db.execute(
            "SELECT path FROM files WHERE repo = ? AND path NOT IN (SELECT path FROM "
            "temp.made) ORDER BY path", (repo,)) if row[0] not in also]  # fmt: skip

    def count_files(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM files").fetchone()[0])

    def missing(self, out: Path, folders: Sequence[str]) -> list[str]:
        """The files under these folders that the state holds and the site has not."""
        missing: list[str] = []
        for folder in folders:
            bounds = (f"{folder}/", f"{folder}0")  # the paths under folder/, in order
            held = self.db.execute(
                "SELECT count(*) FROM files WHERE path > ? AND path < ?", bounds
            ).fetchone()[0]
            try:
                names = os.listdir(out / folder)
            except OSError:
                names = []
            if len(names) == held:
                # the usual case, the folder as the state has it, taken on its count (a
                # page deleted and another file added since is not seen)
                continue
            self.db.execute("CREATE TEMP TABLE IF NOT EXISTS present (path TEXT PRIMARY KEY)")
            self.db.execute("DELETE FROM temp.present")
            self.db.executemany("INSERT OR IGNORE INTO temp.present VALUES (?)",
                                ((f"{folder}/{name}",) for name in names))  # fmt: skip
            missing += [row[0] for row in self.db.execute(
                "SELECT path FROM files WHERE path > ? AND path < ? AND path NOT IN "
                "(SELECT path FROM temp.present)", bounds)]  # fmt: skip
            del names
        return missing

    # repositories
    def repos(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT name FROM repos ORDER BY name")]

    def repo(self, name: str) -> RepoState | None:
        row = self.db.execute(
            "SELECT scan, stamp, summary FROM repos WHERE name = ?", (name,)
        ).fetchone()
        return None if row is None else RepoState(int(row[0]), row[1], json.loads(row[2]))

    def set_repo(self, name: str, scan: int, stamp: str, summary: dict[str, Any]) -> None:
        text = json.dumps(summary, sort_keys=True, ensure_ascii=False)
        if self.db.execute("SELECT 1 FROM repos WHERE name = ? AND scan = ? AND stamp = ? "
                           "AND summary = ?", (name, scan, stamp, text)).fetchone():  # fmt: skip
            return
        self.db.execute("INSERT OR REPLACE INTO repos VALUES (?, ?, ?, ?)",
                        (name, scan, stamp, text))  # fmt: skip

    def forget_repo(self, name: str) -> set[str]:
        """Forget a repository and its errors; the search shards they were in."""
        self.db.execute("DELETE FROM repos WHERE name = ?", (name,))
        self.db.execute("DELETE FROM parts WHERE repo = ?", (name,))
        self.dirty.pop(name, None)
        return self.drop(list(self.ids(name)))

    # errors
    def ids(self, repo: str) -> Iterator[str]:
        """The repository's errors' ids, in order, as read."""
        rows = self.db.execute("SELECT id FROM errors WHERE repo = ? ORDER BY id", (repo,))
        return (row[0] for row in rows)

    def linking(self, targets: Iterable[str]) -> set[str]:
        """The errors whose pages show one of these errors."""
        found: set[str] = set()
        for target in targets:
            found.update(row[0] for row in self.db.execute(
                "SELECT id FROM links WHERE target = ?", (target,)))  # fmt: skip
        return found

    def add(self, errors: Sequence[Error]) -> set[str]:
        """Keep errors the state has not (a repository built afresh, none of its errors
        held): inserted at once. The search shards whose contents changed."""
        self.db.executemany(
            "INSERT OR REPLACE INTO errors VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((e.id, *_fields(e)) for e in errors),
        )
        self.db.executemany("INSERT OR IGNORE INTO links VALUES (?, ?)",
                            ((t, e.id) for e in errors for t in e.related))  # fmt: skip
        self.db.executemany("INSERT OR IGNORE INTO words VALUES (?, ?, ?)",
                            ((*w, e.id) for e in errors for w in e.words))  # fmt: skip
        words = {shard for e in errors for shard, _ in e.words}
        self.anew |= words
        self.dirty.update((e.repo, None) for e in errors)
        return {f"words/{shard}" for shard in words}

    def briefed(self, briefs: dict[str, str]) -> set[str]:
        """The errors of these (id: brief) whose brief the state has otherwise, or none:
        those whose related errors' pages change."""
        held = dict(self._in("SELECT id, brief FROM errors WHERE id IN ({marks})", list(briefs)))
        return {error_id for error_id, brief in briefs.items() if held.get(error_id) != brief}

    def put(self, errors: Sequence[Error]) -> set[str]:
        """Keep these errors as they are now (their rows read, and written, at once);
        the search shards whose contents changed."""
        query = (
            "SELECT id, repo, file, line, exception, kind, resolved, brief, item, "
            "template, related, words FROM errors WHERE id IN ({marks})"
        )
        held = {row[0]: tuple(row[1:]) for row in self._in(query, [e.id for e in errors])}
        shards: set[str] = set()
        rows: list[tuple[Any, ...]] = []
        links_gone: list[tuple[str, str]] = []
        links_new: list[tuple[str, str]] = []
        words_gone: list[tuple[str, str, str]] = []
        words_new: list[tuple[str, str, str]] = []
        for error in errors:
            row = held.get(error.id)
            fields = _fields(error)
            if row == fields:
                continue
            rows.append((error.id, *fields))
            self._dirty(error.repo, error.file)
            old_links: set[str] = set()
            old_words: set[tuple[str, str]] = set()
            if row is not None:
                self._dirty(row[0], row[1])
                old_links = set(json.loads(row[9]))
                old_words = {(shard, word) for shard, word in json.loads(row[10])}
            new_links = set(error.related)
            links_gone += [(t, error.id) for t in old_links - new_links]
            links_new += [(t, error.id) for t in new_links - old_links]
            new_words = set(error.words)
            if old_words != new_words:
                shards.update(f"words/{shard}" for shard, _ in old_words ^ new_words)
                self._patch(error.id, old_words - new_words, False)
                self._patch(error.id, new_words - old_words, True)
                words_gone += [(*w, error.id) for w in old_words - new_words]
                words_new += [(*w, error.id) for w in new_words - old_words]
        self.db.executemany("INSERT OR REPLACE INTO errors VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                            "?, ?)", rows)  # fmt: skip
        self.db.executemany("DELETE FROM links WHERE target = ? AND id = ?", links_gone)
        self.db.executemany("INSERT OR IGNORE INTO links VALUES (?, ?)", links_new)
        self.db.executemany("DELETE FROM words WHERE shard = ? AND word = ? AND id = ?",
                            words_gone)  # fmt: skip
        self.db.executemany("INSERT INTO words VALUES (?, ?, ?)", sorted(words_new))
        return shards

    def drop(self, ids: Sequence[str]) -> set[str]:
        """Forget these errors; the search shards they were in."""
        shards: set[str] = set()
        for error_id in ids:
            row = self.db.execute("SELECT repo, file, related, words FROM errors WHERE id = ?",
                                  (error_id,)).fetchone()  # fmt: skip
            if row is None:
                continue
            self._dirty(row[0], row[1])
            held = {(shard, word) for shard, word in json.loads(row[3])}
            shards.update(f"words/{shard}" for shard, _ in held)
            self._patch(error_id, held, False)
            self.db.executemany("DELETE FROM links WHERE target = ? AND id = ?",
                                ((t, error_id) for t in json.loads(row[2])))  # fmt: skip
            self.db.executemany("DELETE FROM words WHERE shard = ? AND word = ? AND id = ?",
                                ((*w, error_id) for w in held))  # fmt: skip
            self.db.execute("DELETE FROM errors WHERE id = ?", (error_id,))
        return shards

    def _patch(self, error_id: str, words: Iterable[tuple[str, str]], has: bool) -> None:
        if self.patches is None:
            return
        for shard, word in words:
            self.patches.setdefault(shard, {}).setdefault(word, {})[error_id] = has
            self._patched += 1
        if self._patched > _PATCH_LIMIT:  # as many as a whole build's: no patches
            self.patches = None

    def patch(self, shard: str) -> dict[str, dict[str, bool]] | None:
        """What changed in a words shard since the last build, by word: which errors
        it has now (True) and which no longer (False); None where it is to be made whole."""
        if self.patches is None or shard in self.anew:
            return None
        return self.patches.get(shard, {})

    def _dirty(self, repo: str, file: str) -> None:
        files = self.dirty.setdefault(repo, set())
        if files is not None:
            files.add(file)
            if len(files) > _DIRTY_LIMIT:
                self.dirty[repo] = None

    # what the repository's lists and JSON are made of
    def make_parts(self, repo: str) -> None:
        """Make again the parts of the repository's files whose errors changed: each
        file's lines of its lists, by file and without a message, and its
        templates, in the order of the page (by line and id)."""
        if repo not in self.dirty:
            return
        files = self.dirty.pop(repo)
        if files is None:
            self.db.execute("DELETE FROM parts WHERE repo = ?", (repo,))
            rows = self.db.execute(
                "SELECT file, exception, resolved, item, template FROM errors WHERE repo = ? "
                "ORDER BY file, line, id", (repo,))  # fmt: skip
            for file, group in itertools.groupby(rows, key=lambda row: row[0]):
                self._parts(repo, file, list(group))
            return
        for file in sorted(files):
            self.db.execute("DELETE FROM parts WHERE repo = ? AND file = ?", (repo, file))
            self._parts(repo, file, self.db.execute(
                "SELECT file, exception, resolved, item, template FROM errors WHERE repo = ? "
                "AND file = ? ORDER BY line, id", (repo, file)).fetchall())  # fmt: skip

    def _parts(self, repo: str, file: str, rows: list[tuple[str, str, int, str, str]]) -> None:
        """Keep a file's parts, from its errors' rows by line and id."""
        made: list[tuple[str, str, list[str]]] = [
            ("file", file, [row[3] for row in rows if row[2]]),
            ("unresolved", "", [row[3] for row in rows if not row[2]]),
            ("templates", "", [row[4] for row in rows]),
        ]
        self.db.executemany(
            "INSERT INTO parts VALUES (?, ?, ?, ?, ?, ?)",
            ((repo, section, name, file, len(lines),
              ",".join(lines) if section == "templates" else "".join(f"{line}\n" for line in lines))
             for section, name, lines in made if lines),
        )  # fmt: skip

    def grouped(self, repo: str) -> Iterator[tuple[str, int, Iterator[str]]]:
        """(file, count, items) of the repository's errors with a message, by file, each
        file's items by line and id (their lines of HTML). Read in the order of the key:
        no sort held in memory."""
        counts = self.db.execute(
            "SELECT name, sum(count) FROM parts WHERE repo = ? AND section = 'file' GROUP BY "
            "name ORDER BY name", (repo,)).fetchall()  # fmt: skip
        rows = self.db.execute(
            "SELECT name, body FROM parts WHERE repo = ? AND section = 'file' ORDER BY name, file",
            (repo,),
        )
        groups = itertools.groupby(rows, key=lambda row: row[0])
        for (name, count), (_, group) in zip(counts, groups, strict=True):
            yield name, count, (row[1] for row in group)

    def unresolved(self, repo: str) -> Iterator[str]:
        """The lines of the repository's errors without a message, by file and line."""
        rows = self.db.execute("SELECT body FROM parts WHERE repo = ? AND section = "
                               "'unresolved' ORDER BY file", (repo,))  # fmt: skip
        return (row[0] for row in rows)

    def count_unresolved(self, repo: str) -> int:
        query = "SELECT sum(count) FROM parts WHERE repo = ? AND section = 'unresolved'"
        return int(self.db.execute(query, (repo,)).fetchone()[0] or 0)

    def counts(self, repo: str, column: str) -> list[tuple[str, int]]:
        """(value, errors) of `kind` or `exception`, by value."""
        column = {"kind": "kind", "exception": "exception"}[column]
        return [(row[0], row[1]) for row in self.db.execute(
            f"SELECT {column}, count(*) FROM errors WHERE repo = ? GROUP BY {column} "
            f"ORDER BY {column}", (repo,))]  # fmt: skip

    def templates(self, repo: str) -> Iterator[str]:
        """The repository's templates' rows, by file and line: comma-separated, a
        file's part at a time."""
        rows = self.db.execute("SELECT body FROM parts WHERE repo = ? AND section = "
                               "'templates' ORDER BY file", (repo,))  # fmt: skip
        return (row[0] for row in rows)

    def all_ids(self) -> Iterator[str]:
        return (row[0] for row in self.db.execute("SELECT id FROM errors ORDER BY id"))

    def count_errors(self, repo: str | None = None) -> int:
        if repo is None:
            return int(self.db.execute("SELECT count(*) FROM errors").fetchone()[0])
        return int(self.db.execute(
            "SELECT count(*) FROM errors WHERE repo = ?", (repo,)).fetchone()[0])  # fmt: skip

    # the search index
    def shard_words(self, shard: str) -> Iterator[tuple[str, str]]:
        """(word, id) of the shard's words and their errors, by word and id: read in
        the index's order."""
        return iter(self.db.execute(
            "SELECT word, id FROM words WHERE shard = ? ORDER BY word, id", (shard,)))  # fmt: skip

    def all_shards(self) -> set[str]:
        return {f"words/{row[0]}" for row in self.db.execute("SELECT DISTINCT shard FROM words")}
