"""The last scan of a repository, kept so that the next scan redoes only what changed.

One SQLite file per lineage (repository, link base, options and errscan build) under
<cache>/state/: each file's blob sha, the classes and factories it defines, its
records rendered as jsonl (the commit left out), what its records' exceptions were
resolved through, and the related-errors tables (related.py). A scan
holds its lineage's write lock from planning to its last record and commits at the
end: another errscan scanning the same lineage meanwhile works in a private state, and
a scan cut short leaves the last one as it was.

A state is written without waiting on the disk (SQLite's synchronous=OFF) where the
machine says which boot it runs (Linux's boot id): what one process writes, every
later one reads back until the operating system stops, whether errscan itself crashed
or not, and a state made in another boot, whose last writes may never have reached
the disk, is not trusted but made anew. Elsewhere a commit waits for the disk as
before (synchronous=NORMAL).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from errscan import background
from errscan.analyzer import related
from errscan.analyzer.files import BlobEntry
from errscan.frozen import frozen
from errscan.models import FileError

_SCHEMA_VERSION = 5  # 3: the boot it was made in (meta `boot`); 4: related.py's `unkeyed`;
# 5: file.deps, and `dep` made from it when first asked
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS file (
    path TEXT PRIMARY KEY,
    sha TEXT NOT NULL,
    names TEXT NOT NULL,
    block TEXT NOT NULL,
    count INTEGER NOT NULL,
    error TEXT,
    deps TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS dep (path TEXT NOT NULL, used TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS defn (key TEXT NOT NULL, path TEXT NOT NULL);
"""
_DEFN_KEY = "CREATE INDEX IF NOT EXISTS defn_key ON defn (key)"
_DEFN_PATH = "CREATE INDEX IF NOT EXISTS defn_path ON defn (path)"
# What each file's records depended on is kept as its row's JSON array (file.deps),
# written with the row. Which files used a name, the rows of `dep` and their indexes,
# is made from those arrays by the first scan that asks (redo_dependents), and kept up
# to date from then on: a first scan, and every scan that relinks all files, never
# asks, and networkx's first scan (38,000 names used, through its star imports) spent
# 41-45 ms making the rows and 12-17 ms more indexing them; its first incremental scan
# makes them in 38 ms, once.
_DEP_PATH = "CREATE INDEX IF NOT EXISTS dep_path ON dep (path)"
_DEP_USED = "CREATE INDEX IF NOT EXISTS dep_used ON dep (used)"
_SCHEMA += f"{_DEFN_KEY};\n{_DEFN_PATH};\n"
# defn: where each class (`c:NAME`) and factory (`f:NAME`) of the scan is defined, so
# exception resolution asks SQLite rather than holding every name of the repository.
_JSON_NUL = "\\u0000"  # a NUL in a JSON string (json.dumps escapes every control character)
COMMIT_MARK = "\x00"  # stands for the commit sha in a kept block (never in JSON text)
DEFAULT_MAX_STATES = 64
_LOCK_WAIT = 2.0  # seconds to wait for another scan of the lineage before going private
_STAGED = 2000  # files' names staged before they are written
# A new state file's pages: a first scan writes every file's rendered records (Django's:
# 5 MB, mostly blocks of a few KB), in a quarter as many pages as SQLite's default 4 KB
# would take, each block in fewer overflow pages (Django's keep: 13.7 ms in 4 KB pages,
# 6.4 ms in 16 KB, the rows alone). A later scan's few changed pages weigh 16 KB each in
# the write-ahead log.
_PAGE_BYTES = 16384


def mark_commit(block: str, commit: str, web: str | None) -> str:
    """A file's rendered records with COMMIT_MARK where they name the commit: the
    `commit` field and the pinned link's path, nowhere else (a repository path or name
    may hold the sha too)."""
    block = block.replace(f'"commit": "{commit}"', f'"commit": "{COMMIT_MARK}"')
    if web:
        block = block.replace(f'"url": "{web}/blob/{commit}/', f'"url": "{web}/blob/{COMMIT_MARK}/')
    return block


def unmark_commit(block: str, commit: str) -> str:
    return block.replace(COMMIT_MARK, commit)


def lineage(parts: Sequence[object]) -> str:
    return hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()[:24]


def names_text(classes: Sequence[str], factories: Sequence[str]) -> str:
    return json.dumps([list(classes), list(factories)])


def names_of(text: str) -> tuple[list[str], list[str]]:
    classes, factories = json.loads(text)
    return list(classes), list(factories)


@frozen
class Plan:
    """What a scan must redo against the kept state."""

    changed: int  # files new, or with another blob (marked to redo in the state)
    removed: list[str]  # paths gone
    relink_all: bool  # nothing kept, or the set of paths (so module names) changed
    renamed: set[str]  # class and factory names (`c:NAME`, `f:NAME`) defined or undefined


@frozen
class Kept:
    """One file's records as the last scan rendered them."""

    block: str
    count: int
    error: FileError | None


# a file to keep: its entry, what it depended on (deps_text), its rendered records and
# their count, and its error
ToKeep = tuple[BlobEntry, str, str, int, FileError | None]


def deps_text(deps: Iterable[str]) -> str:
    """What a file's records depended on (Index.reads), sorted, as the JSON array that
    keep_many keeps: SQLite makes the rows of `dep` of it (json_each), where they are
    asked for, in a third of the time that binding them one by one took (networkx's
    38,000, through its star imports: 110 -> 31 ms). Made where the file is linked, in
    a linking worker of the pool."""
    return json.dumps(sorted(deps), ensure_ascii=False)


class State:
    """One lineage's state, open in a write transaction until `close`, which commits it
    where `finish` was called."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.fresh = not db.execute("SELECT EXISTS (SELECT 1 FROM file)").fetchone()[0]
        self.ranking = related.Ranking(db, self.fresh)
        # whether `dep` holds the rows of every kept file's deps (_make_dep_rows)
        self._dep_rows = bool(
            db.execute(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' "
                "AND name = 'dep_used')"
            ).fetchone()[0]
        )
        # now: the files of this scan; redo: 1 new or another blob, 2 to relink all the
        # same (what its exceptions resolved through changed; a file whose related lists
        # changed is relinked as the ranking reaches it)
        db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS now "
            "(path TEXT PRIMARY KEY, sha TEXT, names TEXT, redo INTEGER NOT NULL DEFAULT 0)"
        )
        db.execute("DELETE FROM now")
        self._staged: list[tuple[str, str, str]] = []
        self._finished = False  # finish was called: close commits
        self._kept: set[str] = set()  # the files kept by this scan (keep)
        self._private = False  # a temporary database, gone at the close: never committed
        # where plan wrote every defined name anew and was asked to hold them, what
        # `definitions` answers
        self._definitions: dict[str, str] | None = None

    @classmethod
    def open(cls, cache_root: Path, key: str) -> State:
        """The lineage's kept state, or a private one where another scan holds it."""
        background.wait()  # a state closing behind the last scan: closed
        folder = cache_root / "state"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            db = _connect(folder / f"{key}.sqlite", _LOCK_WAIT)
        except (OSError, sqlite3.OperationalError):
            return cls.private()
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            db.close()
            return cls.private()
        with contextlib.suppress(OSError):
            os.utime(folder / f"{key}.sqlite")  # for pruning, least recently used first
        return cls(db)

    @classmethod
    def private(cls) -> State:
        """A state for this scan alone: SQLite's own temporary database, which it keeps
        on disk past a few MB (memory stays flat) and deletes when closed."""
        db = _connect(None, _LOCK_WAIT)
        db.execute("BEGIN IMMEDIATE")
        kept = cls(db)
        kept._private = True
        return kept

    def stage(self, path: str, sha: str, names: str) -> None:
        """A file of this scan, with its class and factory names (names_text)."""
        self._staged.append((path, sha, names))
        if len(self._staged) >= _STAGED:
            self._write_staged()

    def _write_staged(self) -> None:
        self.db.executemany("INSERT OR REPLACE INTO now VALUES (?, ?, ?, 0)", self._staged)
        self._staged.clear()

    def plan(
        self, defines: Callable[[str, str], set[str]], anew: bool = False, hold: bool = False
    ) -> Plan:
        """The files staged (every file of this scan) against the kept scan; `defines`:
        the names such a text defines for a path. Brings the table of defined names
        (`defined`) up to date. `anew`: module names may have changed even where no
        path did (namespace packages, read from the code): every file is linked anew.
        `hold`: where every name is written anew, keep them in memory too, for
        `definitions` (the pool's linking workers take them all at once): some 125 bytes
        a name, which `defined` never reads (the benchmark's 20,000 copies define
        220,793: 27.6 MB the main process held to no end when it linked them itself)."""
        self._write_staged()
        db = self.db
        changed = db.execute(
            "UPDATE now SET redo = 1 WHERE sha IS NOT (SELECT sha FROM file WHERE path = now.path)"
        ).rowcount
        added = "SELECT EXISTS (SELECT 1 FROM now WHERE path NOT IN (SELECT path FROM file))"
        gone = "SELECT path FROM file WHERE path NOT IN (SELECT path FROM now) ORDER BY path"
        removed = [p for (p,) in db.execute(gone)]
        renamed: set[str] = set()
        for path, old, new in db.execute(
            "SELECT n.path, f.names, n.names FROM now n JOIN file f USING (path) "
            "WHERE f.sha != n.sha AND f.names != n.names"
        ):
            renamed |= defines(path, old) ^ defines(path, new)
        relink_all = anew or self.fresh or bool(removed) or bool(db.execute(added).fetchone()[0])
        if relink_all:  # module names may have changed: every file's names anew
            # the table's indexes built once its rows are in, not row by row
            db.execute("DROP INDEX IF EXISTS defn_key")
            db.execute("DROP INDEX IF EXISTS defn_path")
            db.execute("DELETE FROM defn")
            rows = db.execute("SELECT path, names FROM now ORDER BY path")
            self._definitions = {} if hold else None
            while batch := rows.fetchmany(_STAGED):
                self._define(batch, defines)
            db.execute(_DEFN_KEY)
            db.execute(_DEFN_PATH)
        else:
            db.execute("DELETE FROM defn WHERE path IN (SELECT path FROM now WHERE redo = 1)")
            self._define(
                db.execute("SELECT path, names FROM now WHERE redo = 1").fetchall(), defines
            )
        return Plan(changed, removed, relink_all, renamed)

    def _define(
        self, files: Sequence[tuple[str, str]], defines: Callable[[str, str], set[str]]
    ) -> None:
        rows = [(key, path) for path, names in files for key in sorted(defines(path, names))]
        self.db.executemany("INSERT INTO defn VALUES (?, ?)", rows)
        if self._definitions is not None:  # every name written anew: answered from memory
            claimed = self._definitions
            for key, path in rows:
                held = claimed.get(key)
                if held is None or _claim(path) < _claim(held):
                    claimed[key] = path

    def defined(self, key: str) -> str | None:
        """The file that defines a class (`c:NAME`) or factory (`f:NAME`), as Index
        claims it: a module over its stub, else the first path."""
        found = self.db.execute(
            "SELECT path FROM defn WHERE key = ? ORDER BY substr(path, -4) = '.pyi', path LIMIT 1",
            (key,),
        ).fetchone()
        return None if found is None else str(found[0])

    def definitions(self) -> dict[str, str]:
        """Every key `defined` answers, with its answer: those plan held, handed over
        (held once: the state lets go of them), else read from the table."""
        if self._definitions is not None:
            held, self._definitions = self._definitions, None
            return held
        found: dict[str, str] = {}
        rows = self.db.execute(
            "SELECT key, path FROM defn ORDER BY key, substr(path, -4) = '.pyi', path"
        )
        for key, path in rows:
            found.setdefault(key, path)
        return found

    def changed(self) -> Iterator[tuple[str, str]]:
        """(path, sha) of each file new or with another blob since the kept scan, by path."""
        yield from self.db.execute("SELECT path, sha FROM now WHERE redo = 1 ORDER BY path")

    def redo_dependents(self, used: Sequence[str]) -> None:
        """Mark to relink the files whose records' exceptions were resolved through a
        changed file or one of `used` (what Index.reads gives: `p:PATH` for a file read,
        names looked up)."""
        self._make_dep_rows()
        self.db.execute(
            "UPDATE now SET redo = 2 WHERE redo = 0 AND path IN (SELECT path FROM dep "
            "WHERE used IN (SELECT 'p:' || path FROM now WHERE redo = 1 UNION ALL "
            "SELECT value FROM json_each(?)))",
            (json.dumps(sorted(used)),),
        )

    def redone(self, paths: Iterable[str]) -> Iterator[bool]:
        """For each path of the scan, in order, whether it is marked to relink."""
        rows = self.db.execute("SELECT path, redo FROM now ORDER BY path")
        for path, (marked, redo) in zip(paths, rows, strict=True):
            if marked != path:
                raise RuntimeError(f"scan state out of step: {marked!r} for {path!r}")
            yield redo != 0

    def _make_dep_rows(self) -> None:
        """The rows of `dep`, made from every kept file's deps, and their indexes, where
        no scan of this state has made them yet; keep_many adds to them from then on."""
        if self._dep_rows:
            return
        db = self.db
        db.execute("DELETE FROM dep")
        self._add_dep_rows(db.execute("SELECT path, deps FROM file").fetchall())
        db.execute(_DEP_PATH)
        db.execute(_DEP_USED)
        self._dep_rows = True

    def forget(self, paths: Sequence[str]) -> None:
        chosen = (json.dumps(list(paths)),)
        for table in ("file", "dep"):
            self.db.execute(f"DELETE FROM {table} WHERE path IN {related.IN_LIST}", chosen)

    def kept(self, path: str) -> Kept:
        block, count, error = self.db.execute(
            "SELECT block, count, error FROM file WHERE path = ?", (path,)
        ).fetchone()
        return Kept(block, count, _error(path, error))

    def keep(
        self,
        entry: BlobEntry,
        deps: str,
        block: str,
        count: int,
        error: FileError | None,
    ) -> None:
        """One file's rendered records; a file that timed out is kept as one to redo.
        `deps`: what they depended on, as deps_text gives it."""
        self.keep_many([(entry, deps, block, count, error)])

    def keep_many(self, files: Sequence[ToKeep]) -> None:
        """Files' rendered records (keep's arguments; distinct paths), written with one
        statement each for the files and their dependencies rather than a few per file."""
        rows = [
            {
                "path": entry.path,
                "sha": "" if error is not None and error.transient else entry.sha,
                "block": block,
                "count": count,
                "error": None if error is None else json.dumps([error.reason, error.transient]),
                "deps": deps,
            }
            for entry, deps, block, count, error in files
        ]
        self.db.executemany(
            "INSERT OR REPLACE INTO file VALUES (:path, :sha, "
            "(SELECT names FROM now WHERE path = :path), :block, :count, :error, :deps)",
            rows,
        )  # named: Python 3.12 deprecates numbered placeholders given a sequence (3.14 refuses)
        # a first scan's files have none yet, unless kept already
        stale = [(e.path,) for e, *_ in files if not self.fresh or e.path in self._kept]
        self._kept.update(entry.path for entry, *_ in files)
        if not self._dep_rows:  # made from file.deps when first asked
            return
        if stale:
            self.db.executemany("DELETE FROM dep WHERE path = ?", stale)
        self._add_dep_rows((entry.path, deps) for entry, deps, *_ in files)

    def _add_dep_rows(self, files: Iterable[tuple[str, str]]) -> None:
        """The rows of `dep` of files given as (path, deps_text), made by SQLite
        (json_each), but for a list holding a NUL, which json_each would cut and no path
        nor name holds: such a list's rows are bound one by one."""
        whole: list[tuple[str, str]] = []
        nul: list[tuple[str, str]] = []
        for path, deps in files:
            (nul if _JSON_NUL in deps else whole).append((path, deps))
        self.db.executemany("INSERT INTO dep SELECT ?, value FROM json_each(?)", whole)
        if nul:
            each = [(path, used) for path, deps in nul for used in json.loads(deps)]
            self.db.executemany("INSERT INTO dep VALUES (?, ?)", each)

    def namespaces_changed(self, portions: Sequence[str]) -> bool:
        """Whether the folders read as namespace packages differ from the kept scan's
        (then module names may differ where no path did); records these for the next."""
        found = self.db.execute("SELECT value FROM meta WHERE key = 'namespaces'").fetchone()
        now = json.dumps(sorted(portions))
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('namespaces', ?)", (now,))
        return (found[0] if found is not None else "[]") != now

    def finish(self, commit: str) -> None:
        """Make this scan the kept one, as the state closes (close)."""
        self.ranking.build_indexes()
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (commit,))
        self._finished = True

    def close(self, then: Callable[[], object] | None = None) -> None:
        """Let go of the state, then do `then`. A scan cut short is rolled back here; a
        finished one is committed and closed behind the scan (background.py), with
        `then` after it: the commit's writes and its waits on the disk, and the close's
        checkpoint (the last connection copies the write-ahead log into the file), are
        not the scan's. A commit that fails (the disk full, the file pruned by another
        errscan) keeps no state: the next scan starts afresh."""
        db = self.db
        if not self._finished or self._private:
            if db.in_transaction:
                db.execute("ROLLBACK")
            db.close()
            if then is not None:
                then()
            return

        def closing() -> None:
            try:
                db.execute("PRAGMA wal_autocheckpoint = 0")  # the close checkpoints
                db.execute("COMMIT")
            except sqlite3.Error:
                with contextlib.suppress(sqlite3.Error):
                    if db.in_transaction:
                        db.execute("ROLLBACK")
            with contextlib.suppress(sqlite3.Error):
                db.close()
            if then is not None:
                then()

        background.run(closing)


def _claim(path: str) -> tuple[bool, str]:
    """The order in which files claim a name: a module over its stub, then by path."""
    return path.endswith(".pyi"), path


def _error(path: str, text: str | None) -> FileError | None:
    if text is None:
        return None
    reason, transient = json.loads(text)
    return FileError(path, str(reason), bool(transient))


def _connect(path: Path | None, wait: float) -> sqlite3.Connection:
    """The state file (None: a temporary database), made anew where it is of another
    layout or not a database."""
    for attempt in range(2):
        # A new state's first scan, one transaction that writes every page anew, keeps a
        # rollback journal (of nearly nothing: the pages it adds have no old content) and
        # writes its pages once, into the file; a write-ahead log would take them all
        # twice, and wait on the disk for both, when the log is copied in at the close.
        # The scans after it, which change a few pages of many, keep the log.
        new = path is not None and not path.exists()
        # closed in another thread (State.close), once this one is done with it
        db = sqlite3.connect(
            path or "", timeout=wait, isolation_level=None, check_same_thread=False
        )
        try:
            if path is not None and not new and not _trusted(db):
                raise sqlite3.DatabaseError("written in another boot, never synced")
            if (
                path is not None
                and not new
                and db.execute("PRAGMA journal_mode").fetchone()[0] != "wal"
            ):
                db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'NORMAL' if _boot() is None else 'OFF'}")
            # pages cached (SQLite's default: 2 MB a schema): 1 MB of the kept tables,
            # 256 KB of this scan's own (`now`), which are read in order; past that the
            # operating system's file cache serves, and memory stops growing at a few
            # thousand files
            db.execute("PRAGMA main.cache_size = -1024")
            db.execute("PRAGMA temp.cache_size = -256")
            if db.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
                if new:  # before any table: a page size is the file's from its start
                    db.execute(f"PRAGMA page_size = {_PAGE_BYTES}")
                db.execute("BEGIN IMMEDIATE")
                for (table,) in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                ).fetchall():
                    db.execute(f'DROP TABLE "{table}"')
                for statement in (_SCHEMA + related.SCHEMA).split(";"):
                    if statement.strip():
                        db.execute(statement)
                if _boot() is not None:  # then no commit of this file waits for the disk
                    db.execute("INSERT INTO meta VALUES ('boot', ?)", (_boot(),))
                db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
                db.execute("COMMIT")
            return db
        except sqlite3.OperationalError:
            db.close()
            raise
        except sqlite3.DatabaseError:
            db.close()
            if attempt or path is None:
                raise
            path.unlink(missing_ok=True)  # not a database, or damaged: start a new one
            for suffix in ("-wal", "-shm", "-journal"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
    raise AssertionError("unreachable")


def _trusted(db: sqlite3.Connection) -> bool:
    """Whether a state file can be read as written: its commits waited for the disk (no
    boot id here), it is of an older layout (made anew anyway), or it was made in this
    boot (whose id the file has held since it was made)."""
    boot = _boot()
    if boot is None or db.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
        return True
    try:
        found = db.execute("SELECT value FROM meta WHERE key = 'boot'").fetchone()
    except sqlite3.OperationalError:  # no meta table: not a state of this layout
        return False
    return found is not None and found[0] == boot  # none: a torn write


_BOOT_ID = "/proc/sys/kernel/random/boot_id"  # Linux: new at each boot of the kernel
_boots: list[str | None] = []


def _boot() -> str | None:
    """This boot's id, where the system has one, read once."""
    if not _boots:
        try:
            with open(_BOOT_ID, encoding="ascii") as found:
                _boots.append(found.read().strip() or None)
        except (OSError, ValueError):
            _boots.append(None)
    return _boots[0]


def usage(cache_root: Path) -> tuple[int, int]:
    """How many lineage states the cache holds, and their bytes."""
    files = _states(cache_root)
    return len(files), sum(size for _, size, _ in files)


def prune(cache_root: Path, max_bytes: int, max_states: int = DEFAULT_MAX_STATES) -> int:
    """Drop least recently used states until at most `max_states` and `max_bytes` remain
    (none of them closing behind a scan: see State.close's `then`)."""
    files = sorted(_states(cache_root), key=lambda found: found[2], reverse=True)
    total = 0
    dropped = 0
    for count, (path, size, _) in enumerate(files):
        total += size
        if count >= max_states or total > max_bytes:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):
                    Path(f"{path}{suffix}").unlink()
            dropped += 1
    return dropped


def _states(cache_root: Path) -> list[tuple[Path, int, float]]:
    """Each state file with its bytes (and its log's) and when it was last used."""
    found = []
    for path in (cache_root / "state").glob("*.sqlite"):
        with contextlib.suppress(OSError):
            stat = path.stat()
            log = Path(f"{path}-wal")
            size = stat.st_size + (log.stat().st_size if log.exists() else 0)
            found.append((path, size, stat.st_mtime))
    return found
