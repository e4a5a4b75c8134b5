"""Per-file results kept in SQLite by blob sha, so a file already extracted is never parsed again.

The key is the blob sha plus a digest of what changes a file's sites (errscan version,
Python version, context radius), so a blob cached from one repository serves every other.
The path is not part of a cached result: it is put back on load.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import sqlite3
import sys
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from errscan import background
from errscan.analyzer import related
from errscan.analyzer.index import StoredSummary
from errscan.analyzer.link import key_fields
from errscan.errors import CacheError
from errscan.frozen import frozen
from errscan.models import (
    ClassInfo,
    Context,
    FileError,
    FileResult,
    FileSummary,
    Import,
    MessagePart,
    Site,
)

DEFAULT_MAX_BYTES = 1 << 30
_SCHEMA_VERSION = 11
_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    data BLOB NOT NULL,
    summary BLOB NOT NULL,
    names BLOB NOT NULL,
    features BLOB NOT NULL,
    size INTEGER NOT NULL,
    used REAL NOT NULL,
    checks BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS results_used ON results (used);
"""
# A file's result in marshal's format (_dumps): its sites (or error), its summary, the
# names of the classes and factories it defines (all the first pass needs of an unchanged
# file), and each site's id key and ranking features (all that related errors need).
Encoded = tuple[bytes, bytes, bytes, bytes]
_COLUMNS = ("data", "summary", "names", "features")
_CHECK = 4  # bytes of each column's CRC-32 in `checks`: a damaged value is a miss
_LOCK_WAIT = 15  # seconds to wait for another errscan's write before giving up
_CHUNK = 500  # keys per query, under SQLite's bound-parameter limit
_TOUCHED = 3600  # seconds an entry's mark of use stands before a read marks it again
_MARSHAL = 2  # no references between objects (version 3's): one value, one encoding
# what reading a value not of the expected shape raises (marshal: EOFError, ValueError)
_UNREADABLE = (ValueError, EOFError, TypeError, KeyError, IndexError, AttributeError)


@frozen
class CacheInfo:
    """What the cache dir holds: per-file results, whole outputs kept for replay, and
    the last scan's state of each repository."""

    path: str
    entries: int
    bytes: int
    outputs: int = 0
    output_bytes: int = 0
    states: int = 0  # the last scan of each repository (and options), for incremental rescans
    state_bytes: int = 0
    indexes: int = 0  # compiled lookup indexes, one per scan looked up
    index_bytes: int = 0
    configs: int = 0  # a scanned repository's own settings, one per commit scanned
    config_bytes: int = 0


def options_digest(version: str, radius: int) -> str:
    """What besides the blob decides a file's sites."""
    text = f"{version}|py{sys.version_info[0]}.{sys.version_info[1]}|context={radius}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ResultCache:
    """A SQLite file under the cache dir; safe for several errscan processes at once."""

    def __init__(self, path: Path, digest: str) -> None:
        self.path = path
        self.digest = digest
        self.added = 0  # entries put since opened: a cache that got none needs no pruning
        self._db = _connect(path)

    @classmethod
    def in_memory(cls, version: str, radius: int) -> ResultCache:
        """A cache that lives as long as the scan: results kept out of the process's objects."""
        return cls(Path(":memory:"), options_digest(version, radius))

    @classmethod
    def open(cls, cache_dir: Path, version: str, radius: int) -> ResultCache:
        path = cache_dir / "results.sqlite"
        try:
            return cls(path, options_digest(version, radius))
        except (OSError, sqlite3.Error) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise CacheError(f"cache dir not writable: {cache_dir}: {reason}") from exc

    def checkpoint_behind(self) -> None:
        """Copy what the write-ahead log holds into the file, in background work (see
        background.py: no fork may come until it has ended), through a connection of
        its own: a first pass's workers leave their results there (Django's: 6 MB), and
        the close of this connection, the last, would copy them all as the scan ends,
        which the command's exit waits for (some 14 ms of Django's scan), and delete
        the log. Best effort: what is left is copied at the close."""
        if str(self.path) == ":memory:":
            return
        path = self.path

        def copying() -> None:
            with contextlib.suppress(sqlite3.Error):
                db = sqlite3.connect(path, timeout=0, isolation_level=None)
                try:
                    # emptied too, where no reader is in it (its blocks freed here as well)
                    busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                    if busy:
                        db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                finally:
                    db.close()

        background.run(copying)

    def close(self) -> None:
        """Let go of the cache. A file's connection, likely the last, checkpoints as it
        closes: behind the scan (background.py)."""
        if str(self.path) == ":memory:":
            self._db.close()
        else:
            background.close(self._db)

    def _key(self, sha: str) -> str:
        return f"{sha}:{self.digest}"

    def get_many(self, shas: Sequence[str], column: str = "data") -> dict[str, bytes]:
        """One column of the cached results by blob sha, for the shas whose entry is there
        and whose value matches its digest (a damaged value is a miss: scanned again)."""
        offset = _CHECK * _COLUMNS.index(column)
        found: dict[str, bytes] = {}
        stale: list[str] = []  # found, and last marked used over _TOUCHED ago
        since = time.time() - _TOUCHED
        keys = [self._key(sha) for sha in shas]
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, {column}, checks, used FROM results WHERE key IN ({marks})"
            for key, data, checks, used in self._db.execute(query, chunk):
                if not isinstance(data, bytes) or not isinstance(checks, bytes):
                    continue
                if _digest(data) == checks[offset : offset + _CHECK]:
                    found[key.split(":", 1)[0]] = data
                    if not isinstance(used, (int, float)) or used < since:
                        stale.append(key)
        if stale:  # whichever column: an incremental scan reads summaries and features
            self._touch(stale)
        return found

    def summary(self, sha: str) -> StoredSummary | None:
        found = self.get_many([sha], column="summary")
        return decode_summary(found[sha]) if sha in found else None

    def _touch(self, keys: list[str]) -> None:
        """Mark entries used, for pruning. get_many asks only of those last marked over
        _TOUCHED ago: a rescan soon after another writes nothing, and the pool's workers,
        reading what they have just stored, never wait on each other's write lock."""
        now = time.time()
        with contextlib.suppress(sqlite3.OperationalError), self._db:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                self._db.execute(
                    f"UPDATE results SET used = ? WHERE key IN ({marks}) AND used < ?",
                    [now, *chunk, now - _TOUCHED],
                )

    def put_many(self, entries: Iterable[tuple[str, Encoded]]) -> None:
        now = time.time()
        rows = [
            (self._key(sha), *encoded, sum(map(len, encoded)), now, _checks(encoded))
            for sha, encoded in entries
        ]
        if not rows:
            return
        self.added += len(rows)
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows
            )

    def info(self) -> CacheInfo:
        count, size = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM results"
        ).fetchone()
        return CacheInfo(str(self.path), int(count), int(size))

    def prune(self, max_bytes: int) -> int:
        """Drop the least recently used entries until at most `max_bytes` remain; how many.
        The entries' bytes are summed only where the file's pages could hold more: every
        scan that adds results asks, and the sum reads every row (3 ms of Django's first
        scan, and a 256 MB cache's worth of pages at the budget)."""
        (pages,) = self._db.execute("PRAGMA page_count").fetchone()
        (page_size,) = self._db.execute("PRAGMA page_size").fetchone()
        if pages * page_size <= max_bytes:  # the entries' bytes are within their pages
            return 0
        total = self.info().bytes
        if total <= max_bytes:
            return 0
        dropped = 0
        doomed: list[str] = []
        for key, size in self._db.execute("SELECT key, size FROM results ORDER BY used"):
            if total <= max_bytes:
                break
            doomed.append(key)
            total -= size
            dropped += 1
        with self._db:
            for start in range(0, len(doomed), _CHUNK):
                chunk = doomed[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                self._db.execute(f"DELETE FROM results WHERE key IN ({marks})", chunk)
        self._db.execute("VACUUM")
        return dropped


def _connect(path: Path) -> sqlite3.Connection:
    if str(path) == ":memory:":
        return _prepare(sqlite3.connect(":memory:", isolation_level=None))
    path.parent.mkdir(parents=True, exist_ok=True)
    background.wait()  # an earlier scan's connection closed (it may delete the log by name)
    deadline = time.monotonic() + _LOCK_WAIT
    replaced = False
    while True:
        try:
            # closed in another thread (close), once this one is done with it
            db = sqlite3.connect(
                path, timeout=_LOCK_WAIT, isolation_level=None, check_same_thread=False
            )
            return _prepare(db)
        except sqlite3.OperationalError as exc:
            # switching to WAL or creating the table takes a lock that another errscan
            # starting at the same moment may hold, and SQLite does not always wait for it
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
        except sqlite3.DatabaseError:
            if replaced:
                raise
            # not a database (a crash of another tool, a stray file): start a new one
            path.unlink(missing_ok=True)
            replaced = True


def _prepare(db: sqlite3.Connection) -> sqlite3.Connection:
    try:
        if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA cache_size = -1024")  # 1 MB of pages: reads go by in order
        if db.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
            db.execute("BEGIN IMMEDIATE")
            # asked again under the write lock: another errscan may have just made it
            if db.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
                # an older errscan's layout: keyed by its version, its entries are of no use
                db.execute("DROP TABLE IF EXISTS results")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            db.execute("COMMIT")
    except sqlite3.Error:
        db.close()
        raise
    db.isolation_level = "DEFERRED"
    return db


def _digest(value: bytes) -> bytes:
    """A check of a value against damage (a torn write, a flipped bit), not against
    whoever can write the cache dir, who could write any entry: CRC-32, four times as
    fast as the 8-byte BLAKE2b it replaced (Django's first scan writes 6 MB of values,
    and every read checks what it reads)."""
    return zlib.crc32(value).to_bytes(_CHECK, "big")


def _checks(encoded: Encoded) -> bytes:
    return b"".join(map(_digest, encoded))


def encode(result: FileResult) -> Encoded:
    """A file's result, without its path: sites (or error), summary, names and features."""
    if result.error is not None:
        data = _dumps({"error": result.error.reason, "transient": result.error.transient})
    else:
        data = _dumps({"sites": [_site_row(site) for site in result.sites]})
    summary = result.summary
    transient = result.error is not None and result.error.transient
    classes = [c.qualname for c in summary.classes]
    names = [classes, [f for f, _ in summary.factories], transient]
    sites = sorted(result.sites, key=Site.sort_key)
    features = [[key_fields(site), related.features(site)] for site in sites]
    return data, _dumps(_summary_row(summary)), _dumps(names), _dumps(features)


def _dumps(value: Any) -> bytes:
    """A value of lists, dicts, strings, numbers, booleans and None, in marshal's format:
    some three times quicker than JSON both ways. Its version is the interpreter's, part
    of the key (options_digest); an entry is read only once its digest matches."""
    return marshal.dumps(value, _MARSHAL)


def _loads(data: bytes) -> Any:
    return marshal.loads(data)


def decode_features(data: bytes) -> list[tuple[list[str], list[object]]] | None:
    """Each site's id key fields and ranking features, in (line, col) order."""
    try:
        return [(list(key), list(feature)) for key, feature in _loads(data)]
    except _UNREADABLE:
        return None


def decode(data: bytes, path: str) -> FileResult | None:
    """The sites stored in `data`, given back their path; None where the entry is unreadable."""
    try:
        value = _loads(data)
        if "error" in value:
            transient = bool(value.get("transient"))
            return FileResult(path, error=FileError(path, str(value["error"]), transient))
        return FileResult(path, sites=tuple(_site(row, path) for row in value["sites"]))
    except _UNREADABLE:
        return None


def decode_names(data: bytes) -> tuple[list[str], list[str], bool] | None:
    """The classes and factories a file defines, by qualname, and whether the entry is a
    failure of its run (a time limit) to be scanned again; None where it is unreadable."""
    try:
        classes, factories, transient = _loads(data)
        return [str(c) for c in classes], [str(f) for f in factories], bool(transient)
    except _UNREADABLE:
        return None


def decode_summary(data: bytes) -> StoredSummary | None:
    """A file's summary; its classes are made into ClassInfo as they are asked for
    (_Classes), which the value's digest, checked by get_many, lets wait: the rows are
    what encode wrote."""
    try:
        imports, classes, factories, made, aliases, partial, tables = _loads(data)
        return StoredSummary(
            imports=tuple(Import(*row) for row in imports),
            classes=_Classes({row[0]: row for row in classes}),
            factories=tuple((name, made) for name, made in factories),
            factory_calls=tuple(
                (str(name), tuple(map(str, params)), _args(built)) for name, params, built in made
            ),
            aliases=tuple((str(name), str(written)) for name, written in aliases),
            partial=bool(partial),
            tables=tuple(
                (str(name), str(param), tuple((str(k), str(v)) for k, v in entries))
                for name, param, entries in tables
            ),
        )
    except _UNREADABLE:
        return None


class _Classes(Mapping[str, ClassInfo]):
    """A summary's classes by qualname, from their rows, each made once when first asked
    for."""

    def __init__(self, rows: dict[str, list[Any]]) -> None:
        self._rows = rows
        self._made: dict[str, ClassInfo] = {}

    def __getitem__(self, qualname: str) -> ClassInfo:
        found = self._made.get(qualname)
        if found is None:
            found = self._made[qualname] = _class_info(self._rows[qualname])
        return found

    def __contains__(self, qualname: object) -> bool:
        return qualname in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def _class_info(row: list[Any]) -> ClassInfo:
    if len(row) == 4:  # deferred: no details
        q, b, d, constants = row
        constants = tuple((str(n), str(v)) for n, v in constants)
        return ClassInfo(q, tuple(b), d, constants=constants, deferred=True)
    (q, b, d, p, parts, others, from_str, supers, plain, constants, caller_set,
     defaults, init_of, setup) = row  # fmt: skip
    return ClassInfo(
        q,
        tuple(b),
        d,
        tuple(p) if p is not None else None,
        _parts(parts),
        tuple(_parts(o) for o in others),
        bool(from_str),
        tuple((k, str(t)) for k, t in supers),
        bool(plain),
        tuple((str(n), str(v)) for n, v in constants),
        tuple(map(str, caller_set)),
        tuple((str(name), _parts(value)) for name, value in defaults),
        None if init_of is None else str(init_of),
        None if setup is None else tuple((str(k), str(a), str(b)) for k, a, b in setup),
    )


def _summary_row(summary: FileSummary) -> list[Any]:
    classes = [
        [c.qualname, list(c.bases), c.doc, [list(pair) for pair in c.constants]]
        if c.deferred
        else [
            c.qualname,
            list(c.bases),
            c.doc,
            c.init_params,
            _part_rows(c.init_parts),
            [_part_rows(o) for o in c.init_candidates],
            c.from_str,
            [list(arg) for arg in c.super_args],
            c.plain_args,
            [list(pair) for pair in c.constants],
            list(c.caller_set),
            [[name, _part_rows(value)] for name, value in c.init_defaults],
            c.init_of,
            None if c.init_setup is None else [list(entry) for entry in c.init_setup],
        ]
        for c in summary.classes
    ]
    imports = [[i.local, i.level, i.module, i.name] for i in summary.imports]
    made = [
        [name, list(params), [list(arg) for arg in built] if built is not None else None]
        for name, params, built in summary.factory_calls
    ]
    aliases = [list(pair) for pair in summary.aliases]
    factories = [list(f) for f in summary.factories]
    tables = [[name, param, [list(entry) for entry in entries]]
              for name, param, entries in summary.tables]  # fmt: skip
    return [imports, classes, factories, made, aliases, summary.partial, tables]


def _args(rows: list[list[str | None]] | None) -> tuple[tuple[str | None, str], ...] | None:
    if rows is None:
        return None
    return tuple((None if k is None else str(k), str(text)) for k, text in rows)


def _part_rows(parts: tuple[MessagePart, ...]) -> list[list[str | None]]:
    return [[p.text, p.expr, p.conversion, p.format_spec] for p in parts]


def _parts(rows: list[list[str | None]]) -> tuple[MessagePart, ...]:
    return tuple(map(MessagePart._make, rows))


def _site_row(site: Site) -> list[Any]:
    ctx = site.context
    return [
        site.kind, site.exception, site.message, _part_rows(site.message_parts),
        site.message_source, list(site.message_candidates), list(site.args), site.cause,
        list(site.reraises), list(site.guards), list(site.env_vars), site.trigger,
        site.line, site.end_line, site.col, site.function,
        [ctx.start_line, ctx.end_line, ctx.code], site.message_expr, site.exception_ref,
        [list(arg) for arg in site.call_args],
    ]  # fmt: skip


def _site(row: list[Any], path: str) -> Site:
    (kind, exception, message, parts, source, candidates, args, cause, reraises, conditions,
     env_vars, trigger, line, end_line, col, function, ctx, message_expr, exception_ref,
     call_args) = row  # fmt: skip
    return Site.build(
        {
            "kind": kind,
            "exception": exception,
            "message": message,
            "message_parts": _parts(parts),
            "message_source": source,
            "message_candidates": tuple(candidates),
            "args": tuple(args),
            "cause": cause,
            "reraises": tuple(reraises),
            "guards": tuple(conditions),
            "env_vars": tuple(env_vars),
            "trigger": trigger,
            "file": path,
            "line": line,
            "end_line": end_line,
            "col": col,
            "function": function,
            "context": Context(*ctx),
            "message_expr": message_expr,
            "exception_ref": exception_ref,
            "call_args": tuple(map(tuple, call_args)),
        }
    )
