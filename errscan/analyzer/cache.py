"""Per-file results kept in SQLite by blob sha, so a file already extracted is never parsed again.

The key is the blob sha plus a digest of what changes a file's sites (errscan version,
Python version, context radius), so a blob cached from one repository serves every other.
The path is not part of a cached result: it is put back on load.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from errscan.errors import InputError
from errscan.models import Context, FileError, FileResult, MessagePart, Site

DEFAULT_MAX_BYTES = 1 << 30
_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    data BLOB NOT NULL,
    size INTEGER NOT NULL,
    used REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS results_used ON results (used);
"""
_CHUNK = 500  # keys per query, under SQLite's bound-parameter limit


@dataclass(frozen=True)
class CacheInfo:
    """What the cache dir holds: per-file results, and whole outputs kept for replay."""

    path: str
    entries: int
    bytes: int
    outputs: int = 0
    output_bytes: int = 0


def options_digest(version: str, radius: int) -> str:
    """What besides the blob decides a file's sites."""
    text = f"{version}|py{sys.version_info[0]}.{sys.version_info[1]}|context={radius}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ResultCache:
    """A SQLite file under the cache dir; safe for several errscan processes at once."""

    def __init__(self, path: Path, digest: str) -> None:
        self.path = path
        self.digest = digest
        self._db = _connect(path)

    @classmethod
    def open(cls, cache_dir: Path, version: str, radius: int) -> ResultCache:
        path = cache_dir / "results.sqlite"
        try:
            return cls(path, options_digest(version, radius))
        except (OSError, sqlite3.Error) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise InputError(f"cache dir not writable: {cache_dir}: {reason}") from exc

    def close(self) -> None:
        self._db.close()

    def _key(self, sha: str) -> str:
        return f"{sha}:{self.digest}"

    def has_many(self, shas: Sequence[str]) -> set[str]:
        """The blob shas among `shas` that have an entry."""
        found: set[str] = set()
        keys = [self._key(sha) for sha in shas]
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key FROM results WHERE key IN ({marks})", chunk)
            found.update(key.split(":", 1)[0] for (key,) in rows)
        return found

    def get_many(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Cached data by blob sha, for the shas that have an entry."""
        found: dict[str, bytes] = {}
        keys = [self._key(sha) for sha in shas]
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key, data FROM results WHERE key IN ({marks})", chunk)
            for key, data in rows:
                found[key.split(":", 1)[0]] = bytes(data)
        if found:
            self._touch([self._key(sha) for sha in found])
        return found

    def _touch(self, keys: list[str]) -> None:
        now = time.time()
        with contextlib.suppress(sqlite3.OperationalError), self._db:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                self._db.execute(
                    f"UPDATE results SET used = ? WHERE key IN ({marks})", [now, *chunk]
                )

    def put_many(self, entries: Iterable[tuple[str, bytes]]) -> None:
        now = time.time()
        rows = [(self._key(sha), data, len(data), now) for sha, data in entries]
        if not rows:
            return
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?)", rows)

    def info(self) -> CacheInfo:
        count, size = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM results"
        ).fetchone()
        return CacheInfo(str(self.path), int(count), int(size))

    def prune(self, max_bytes: int) -> int:
        """Drop the least recently used entries until at most `max_bytes` remain; how many."""
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
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
    except sqlite3.DatabaseError:
        db.close()
        # not a database (a crash of another tool, a stray file): start a new one
        path.unlink(missing_ok=True)
        db = sqlite3.connect(path, timeout=60, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(_SCHEMA)
    db.isolation_level = "DEFERRED"
    return db


def encode(result: FileResult) -> bytes:
    """A file's result as compact JSON, without its path."""
    if result.error is not None:
        return json.dumps({"error": result.error.reason}).encode()
    return json.dumps({"sites": [_site_row(site) for site in result.sites]}).encode()


def decode(data: bytes, path: str) -> FileResult | None:
    """The result stored in `data`, given back its path; None where the entry is unreadable."""
    try:
        value = json.loads(data)
        if "error" in value:
            return FileResult(path, error=FileError(path, str(value["error"])))
        return FileResult(path, sites=tuple(_site(row, path) for row in value["sites"]))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


def _site_row(site: Site) -> list[Any]:
    parts = [[p.text, p.expr, p.conversion, p.format_spec] for p in site.message_parts]
    ctx = site.context
    return [
        site.kind, site.exception, site.message, parts, site.message_source, list(site.args),
        site.cause, site.line, site.end_line, site.col, site.function,
        [ctx.start_line, ctx.end_line, ctx.code], site.message_expr,
    ]  # fmt: skip


def _site(row: list[Any], path: str) -> Site:
    (kind, exception, message, parts, source, args, cause, line, end_line, col, function,
     ctx, message_expr) = row  # fmt: skip
    return Site(
        kind=kind,
        exception=exception,
        message=message,
        message_parts=tuple(MessagePart(*part) for part in parts),
        message_source=source,
        args=tuple(args),
        cause=cause,
        file=path,
        line=line,
        end_line=end_line,
        col=col,
        function=function,
        context=Context(*ctx),
        message_expr=message_expr,
    )
