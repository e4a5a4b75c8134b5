"""Scans kept over time in SQLite: each scan's records and file errors, one transaction each.

store = Store.open("errscan.db")
store.save(result, options={"include_tests": False}, commit_date="2026-01-01T00:00:00Z")
store.scans("owner/name")  ->  [StoredScan(...), ...]
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from errscan.errors import StoreError
from errscan.frozen import frozen
from errscan.models import ErrorRecord, FileError, ScanResult, ScanStats

SCHEMA_VERSION = 6
_LOCK_WAIT = 30


def _v1(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE scans (id INTEGER PRIMARY KEY, repo TEXT NOT NULL, commit_sha TEXT NOT "
        "NULL, errscan_version TEXT NOT NULL, options TEXT NOT NULL, stats TEXT NOT NULL, "
        "scanned_at REAL NOT NULL, UNIQUE (repo, commit_sha, options))"
    )
    db.execute(
        "CREATE TABLE records (scan_id INTEGER NOT NULL REFERENCES scans(id), id TEXT NOT "
        "NULL, exception TEXT, file TEXT NOT NULL, line INTEGER NOT NULL, data TEXT NOT NULL, "
        "PRIMARY KEY (scan_id, id))"
    )
    db.execute(
        "CREATE TABLE file_errors (scan_id INTEGER NOT NULL REFERENCES scans(id), "
        "file TEXT NOT NULL, reason TEXT NOT NULL)"
    )


def _v2(db: sqlite3.Connection) -> None:
    """Version 2: the commit's date, and indexes for lookups by id, exception and file."""
    db.execute("ALTER TABLE scans ADD COLUMN commit_date TEXT")
    db.execute("CREATE INDEX scans_repo ON scans (repo, scanned_at)")
    db.execute("CREATE INDEX records_id ON records (id)")
    db.execute("CREATE INDEX records_exception ON records (exception)")
    db.execute("CREATE INDEX records_file ON records (file, line)")


def _v3(db: sqlite3.Connection) -> None:
    """Version 3: enrichments (prose a model wrote of a record's facts), kept apart from
    the records, one per record id, digest of the facts sent, model and prompt version;
    and the last failure of each, so a later run knows what it retries."""
    db.execute(
        "CREATE TABLE enrichments (record_id TEXT NOT NULL, facts TEXT NOT NULL, model TEXT "
        "NOT NULL, prompt TEXT NOT NULL, answer TEXT NOT NULL, tokens_in INTEGER NOT NULL, "
        "tokens_out INTEGER NOT NULL, created REAL NOT NULL, "
        "PRIMARY KEY (record_id, facts, model, prompt))"
    )
    db.execute(
        "CREATE TABLE enrichment_failures (record_id TEXT NOT NULL, facts TEXT NOT NULL, "
        "model TEXT NOT NULL, prompt TEXT NOT NULL, reason TEXT NOT NULL, created REAL NOT "
        "NULL, PRIMARY KEY (record_id, facts, model, prompt))"
    )


def _v4(db: sqlite3.Connection) -> None:
    """Version 4: what each batch (by its list's digest) stored, so that a batch run
    again after an interruption skips it."""
    db.execute(
        "CREATE TABLE batch_done (batch TEXT NOT NULL, item TEXT NOT NULL, scan_id INTEGER "
        "NOT NULL REFERENCES scans(id), PRIMARY KEY (batch, item))"
    )


def digest(data: str, commit: str) -> str:
    """A stored record's digest, its commit (and so its URL's) left out: equal where the
    record is the same in two scans, so that what changed between two scans is read
    from an index, not from every record (the site's incremental build)."""
    text = data.replace(commit, "").encode("utf-8", "surrogatepass")
    return hashlib.sha256(text).hexdigest()[:32]


def _v5(db: sqlite3.Connection) -> None:
    """Version 5: each record's digest (digest()), in an index with its scan and id."""
    db.execute("ALTER TABLE records ADD COLUMN digest TEXT")
    db.create_function("errscan_digest", 2, digest, deterministic=True)
    db.execute(
        "UPDATE records SET digest = errscan_digest(data, "
        "(SELECT commit_sha FROM scans WHERE scans.id = records.scan_id))"
    )
    db.execute("CREATE INDEX records_digest ON records (scan_id, id, digest)")


def _v6(db: sqlite3.Connection) -> None:
    """Version 6: a scan's records in an index by place, so that they are read by file
    and line as stored, not sorted in memory (the site's build of a large scan)."""
    db.execute("CREATE INDEX records_place ON records (scan_id, file, line, id)")


# MIGRATIONS[n] brings a database of version n to version n + 1.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1, _v2, _v3, _v4, _v5, _v6]


@frozen
class StoredEnrichment:
    record_id: str
    facts: str  # digest of the facts sent
    model: str
    prompt: str  # the prompt's version
    answer: dict[str, Any]
    tokens_in: int
    tokens_out: int
    created: float


def record_row(record: dict[str, Any]) -> str:
    """A record as the store keeps it (`records.data`)."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


@frozen
class ScanHead:
    """What a stored scan is, besides its records and file errors."""

    repo: str
    commit: str
    errscan_version: str
    stats: ScanStats


@frozen
class StoredScan:
    id: int
    repo: str
    commit: str
    commit_date: str | None
    errscan_version: str
    options: str
    stats: ScanStats
    scanned_at: float


def default_path() -> Path:
    import os

    return Path(os.environ.get("ERRSCAN_DB") or "errscan.db")


class Store:
    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path

    @classmethod
    def open(cls, path: str | Path | None = None, create: bool = True) -> Store:
        """The store at `path` (default_path()), made there if `create` and it is not.

        A file that is not an errscan store (another program's database, say) is refused
        before anything is written to it; StoreError for that, and for a missing store
        where `create` is False (read-only commands make no file).
        """
        where = Path(path) if path is not None else default_path()
        if where.exists():
            _check(where)
        elif not create:
            raise StoreError(f"no store at {where}")
        deadline = time.monotonic() + _LOCK_WAIT
        while True:
            db = None
            try:
                db = sqlite3.connect(where, timeout=_LOCK_WAIT, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA foreign_keys=ON")
                _migrate(db)
                return cls(db, where)
            except sqlite3.DatabaseError as exc:
                if db is not None:
                    db.close()
                # SQLite waits for a lock only where it can: a new store being made WAL,
                # or migrated, by another errscan at once is met with "locked" at once
                locked = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
                if not locked or time.monotonic() > deadline:
                    raise StoreError(f"cannot use the store {where}: {exc}") from exc
                time.sleep(0.05)

    def close(self) -> None:
        self.db.close()

    def find(self, repo: str, commit: str, options: str) -> StoredScan | None:
        row = self.db.execute(
            f"SELECT {_SCAN_COLUMNS} FROM scans WHERE repo = ? AND commit_sha = ? AND options = ?",
            (repo, commit, options),
        ).fetchone()
        return _scan(row) if row else None

    def save(self, result: ScanResult, options: str, commit_date: str | None) -> StoredScan:
        """Store a scan in one transaction; the same repo, commit and options again is a no-op."""
        rows = (
            (r.id, r.exception, r.file, r.line, record_row(r.to_dict())) for r in result.records
        )
        head = ScanHead(result.repo, result.commit, result.errscan_version, result.stats)
        return self.save_rows(head, options, commit_date, rows, result.file_errors)

    def save_rows(
        self,
        head: ScanHead,
        options: str,
        commit_date: str | None,
        rows: Iterable[tuple[str, str | None, str, int, str]],
        file_errors: Iterable[FileError],
        batch: tuple[str, str] | None = None,
    ) -> StoredScan:
        """Store a scan from its rows, (id, exception, file, line, record_row(...)), taken
        one at a time (a batch's driver never holds a whole scan's records); with
        `batch`, (batch, item), the scan is marked done for that batch in the same
        transaction."""
        found = self.find(head.repo, head.commit, options)
        if found is not None:
            if batch is not None:
                self.mark_batch_done(*batch, found.id)
            return found
        stats = json.dumps(head.stats.to_dict(), sort_keys=True)
        try:
            self.db.execute("BEGIN IMMEDIATE")
            again = self.find(head.repo, head.commit, options)
            if again is not None:
                self.db.execute("ROLLBACK")
                return again
            cursor = self.db.execute(
                "INSERT INTO scans (repo, commit_sha, errscan_version, options, stats, "
                "scanned_at, commit_date) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (head.repo, head.commit, head.errscan_version, options, stats, time.time(),
                 commit_date),
            )  # fmt: skip
            scan_id = int(cursor.lastrowid or 0)
            self.db.executemany(
                "INSERT INTO records (scan_id, id, exception, file, line, data, digest) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                ((scan_id, *row, digest(row[4], head.commit)) for row in rows),
            )
            self.db.executemany(
                "INSERT INTO file_errors (scan_id, file, reason) VALUES (?, ?, ?)",
                ((scan_id, e.file, e.reason) for e in file_errors),
            )
            if batch is not None:
                self.db.execute(
                    "INSERT OR REPLACE INTO batch_done (batch, item, scan_id) VALUES (?, ?, ?)",
                    (*batch, scan_id),
                )
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        stored = self.find(head.repo, head.commit, options)
        assert stored is not None
        return stored

    def scans(self, repo: str | None = None) -> list[StoredScan]:
        query = f"SELECT {_SCAN_COLUMNS} FROM scans"
        rows = (
            self.db.execute(query + " WHERE repo = ? ORDER BY scanned_at, id", (repo,))
            if repo
            else self.db.execute(query + " ORDER BY repo, scanned_at, id")
        )
        return [_scan(row) for row in rows]

    def latest(self, repo: str, before: int | None = None) -> StoredScan | None:
        scans = [s for s in self.scans(repo) if before is None or s.id < before]
        return scans[-1] if scans else None

    def for_commit(self, repo: str, commit: str) -> StoredScan | None:
        matches = [s for s in self.scans(repo) if s.commit == commit]
        return matches[-1] if matches else None

    def records(self, scan: StoredScan) -> list[ErrorRecord]:
        rows = self.db.execute(
            "SELECT data FROM records WHERE scan_id = ? ORDER BY file, line, id", (scan.id,)
        )
        records = [ErrorRecord.from_dict(json.loads(data)) for (data,) in rows]
        records.sort(key=lambda r: (r.file, r.line, r.col))
        return records

    def file_errors(self, scan: StoredScan) -> list[FileError]:
        rows = self.db.execute(
            "SELECT file, reason FROM file_errors WHERE scan_id = ? ORDER BY file", (scan.id,)
        )
        return [FileError(file, reason) for file, reason in rows]

    def result(self, scan: StoredScan) -> ScanResult:
        return ScanResult(
            repo=scan.repo,
            commit=scan.commit,
            errscan_version=scan.errscan_version,
            records=tuple(self.records(scan)),
            file_errors=tuple(self.file_errors(scan)),
            stats=scan.stats,
        )

    def briefs(
        self, scan: StoredScan, ids: Sequence[str] | None = None
    ) -> Iterator[tuple[Any, ...]]:
        """(id, kind, exception, message, file, line, area, function) of each record of
        the scan (of `ids` only, where given), by file and line: what a list, a search or
        a related error shows. All the scan's are read as the index holds them, not held."""
        query = (
            "SELECT id, json_extract(data, '$.kind'), exception, json_extract(data, "
            "'$.message'), file, line, json_extract(data, '$.area'), json_extract(data, "
            "'$.function') FROM records WHERE scan_id = ?"
        )
        if ids is None:
            yield from self.db.execute(query + " ORDER BY file, line, id", (scan.id,))
            return
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(ids), _IN_LIMIT):
            part = ids[start : start + _IN_LIMIT]
            marks = ",".join("?" * len(part))
            rows += self.db.execute(query + f" AND id IN ({marks})", (scan.id, *part))
        rows.sort(key=lambda row: (row[4], row[5], row[0]))
        yield from rows

    def ids(self, scan: StoredScan) -> Iterator[str]:
        """The scan's records' ids, in order, as read."""
        rows = self.db.execute("SELECT id FROM records WHERE scan_id = ? ORDER BY id", (scan.id,))
        return (row[0] for row in rows)

    def changed(self, before: StoredScan, after: StoredScan) -> list[str]:
        """The records of `after` that `before` has not, or has otherwise (digest())."""
        # both read from the (scan_id, id, digest) index: a third of a join's time
        rows = self.db.execute(
            "SELECT id FROM (SELECT id, digest FROM records WHERE scan_id = ? EXCEPT "
            "SELECT id, digest FROM records WHERE scan_id = ?)",
            (after.id, before.id),
        )
        return [row[0] for row in rows]

    def gone(self, before: StoredScan, after: StoredScan) -> list[str]:
        """The records of `before` that `after` has not."""
        rows = self.db.execute(
            "SELECT o.id FROM records o WHERE o.scan_id = ? AND NOT EXISTS (SELECT 1 FROM "
            "records n WHERE n.scan_id = ? AND n.id = o.id)",
            (before.id, after.id),
        )
        return [row[0] for row in rows]

    def enriched(self, scan: StoredScan, since: float = -1.0) -> tuple[int, float, list[str]]:
        """How many enrichments the scan's records have, the latest one's time, and the
        records with one made after `since`."""
        rows = self.db.execute(
            "SELECT e.record_id, e.created FROM enrichments e JOIN records r ON r.id = "
            "e.record_id AND r.scan_id = ?",
            (scan.id,),
        )
        count, latest, after = 0, 0.0, set()
        for record_id, created in rows:
            count += 1
            latest = max(latest, created)
            if created > since:
                after.add(record_id)
        return count, latest, sorted(after)

    def rows_of(self, scan: StoredScan, ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """(id, its related ids as JSON, the record as JSON) of these records of the
        scan, by file and line: read, not yet parsed."""
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            "SELECT id, json_extract(data, '$.related'), data FROM records "
            # +file: found by id, then sorted (not the whole scan read in its order)
            f"WHERE scan_id = ? AND id IN ({marks}) ORDER BY +file, line, id",
            (scan.id, *ids),
        )
        return list(rows)

    def enrichments_of(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str, float]]]:
        """(facts digest, model, time) of each stored enrichment of these records."""
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT record_id, facts, model, created FROM enrichments WHERE record_id IN "
            f"({marks}) ORDER BY record_id, created, facts, model",
            tuple(ids),
        )
        found: dict[str, list[tuple[str, str, float]]] = {}
        for record_id, facts, model, created in rows:
            found.setdefault(record_id, []).append((facts, model, created))
        return found

    def history(
        self, repo: str, ids: Sequence[str]
    ) -> dict[str, list[tuple[str, str | None, str | None, str]]]:
        """For each of `ids`, (commit, commit date, message, the record as JSON without
        its commit, URL and related ids) of each stored scan of the repository that
        holds it, oldest scan first."""
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            "SELECT r.id, s.commit_sha, s.commit_date, json_extract(r.data, '$.message'), "
            "json_remove(r.data, '$.commit', '$.url', '$.related') "
            f"FROM records r JOIN scans s ON s.id = r.scan_id WHERE s.repo = ? AND r.id IN "
            f"({marks}) ORDER BY s.scanned_at, s.id",
            (repo, *ids),
        )
        seen: dict[str, list[tuple[str, str | None, str | None, str]]] = {}
        for record_id, commit, date, message, rest in rows:
            seen.setdefault(record_id, []).append((commit, date, message, rest))
        return seen

    def latest_scans(self) -> list[StoredScan]:
        """Every repository's latest scan (what show and lookup search), by repository."""
        latest: dict[str, StoredScan] = {}
        for scan in self.scans():
            latest[scan.repo] = scan
        return list(latest.values())

    def all_records(self) -> Iterator[ErrorRecord]:
        """The records of every repository's latest scan."""
        for scan in self.latest_scans():
            yield from self.records(scan)

    def enrichment(
        self, record_id: str, facts: str, model: str | None = None, prompt: str | None = None
    ) -> StoredEnrichment | None:
        """The latest enrichment of these facts of a record (of `model` and `prompt`
        where given); one of other facts is of another version of the error: None."""
        query = f"SELECT {_ENRICHMENT_COLUMNS} FROM enrichments WHERE record_id = ? AND facts = ?"
        args: list[str] = [record_id, facts]
        for column, value in (("model", model), ("prompt", prompt)):
            if value is not None:
                query += f" AND {column} = ?"
                args.append(value)
        row = self.db.execute(query + " ORDER BY created DESC LIMIT 1", args).fetchone()
        if row is None:
            return None
        try:
            answer = json.loads(row[4])
        except ValueError:
            return None
        return StoredEnrichment(row[0], row[1], row[2], row[3], answer, row[5], row[6], row[7])

    def save_enrichment(self, found: StoredEnrichment) -> None:
        """Keep one enrichment (its own transaction); it clears a failure of the same."""
        key = (found.record_id, found.facts, found.model, found.prompt)
        with self._transaction():
            self.db.execute(
                f"INSERT OR REPLACE INTO enrichments ({_ENRICHMENT_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, json.dumps(found.answer, sort_keys=True, ensure_ascii=False),
                 found.tokens_in, found.tokens_out, found.created),
            )  # fmt: skip
            self.db.execute(
                "DELETE FROM enrichment_failures WHERE record_id = ? AND facts = ? AND "
                "model = ? AND prompt = ?",
                key,
            )

    def save_enrichment_failure(
        self, record_id: str, facts: str, model: str, prompt: str, reason: str
    ) -> None:
        with self._transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO enrichment_failures (record_id, facts, model, prompt, "
                "reason, created) VALUES (?, ?, ?, ?, ?, ?)",
                (record_id, facts, model, prompt, reason, time.time()),
            )

    def enrichment_failures(self) -> list[tuple[str, str]]:
        """(record id, reason) of each failure not since made good."""
        rows = self.db.execute(
            "SELECT record_id, reason FROM enrichment_failures ORDER BY record_id"
        )
        return [(str(a), str(b)) for a, b in rows]

    def batch_done(self, batch: str) -> set[str]:
        """The items a batch stored."""
        rows = self.db.execute("SELECT item FROM batch_done WHERE batch = ?", (batch,))
        return {str(item) for (item,) in rows}

    def mark_batch_done(self, batch: str, item: str, scan_id: int) -> None:
        with self._transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO batch_done (batch, item, scan_id) VALUES (?, ?, ?)",
                (batch, item, scan_id),
            )

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")


_IN_LIMIT = 500  # ids in one `IN (...)`
_ENRICHMENT_COLUMNS = "record_id, facts, model, prompt, answer, tokens_in, tokens_out, created"
_SCAN_COLUMNS = "id, repo, commit_sha, commit_date, errscan_version, options, stats, scanned_at"


def _scan(row: Sequence[Any]) -> StoredScan:
    stats = json.loads(row[6])
    return StoredScan(
        id=int(row[0]),
        repo=row[1],
        commit=row[2],
        commit_date=row[3],
        errscan_version=row[4],
        options=row[5],
        stats=ScanStats(stats["files"], stats["sites"], stats["file_errors"], 0.0),
        scanned_at=float(row[7]),
    )


def _check(where: Path) -> None:
    """An existing file is an errscan store, or an empty database, or it is refused: read
    through a read-only connection, so that nothing of it changes."""
    try:
        db = sqlite3.connect(f"{where.resolve().as_uri()}?mode=ro", uri=True, timeout=_LOCK_WAIT)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot use the store {where}: {exc}") from exc
    if (version == 0 and not tables) or (version > 0 and "scans" in tables):
        return
    raise StoreError(f"not an errscan store: {where} (another program's database?)")


def _migrate(db: sqlite3.Connection) -> None:
    """Bring the database forward to SCHEMA_VERSION, one transaction per step."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(f"schema version {version} is newer than this errscan's")
    while version < SCHEMA_VERSION:
        db.execute("BEGIN IMMEDIATE")
        current = db.execute("PRAGMA user_version").fetchone()[0]
        if current == version:  # not migrated meanwhile by another errscan
            MIGRATIONS[version](db)
            db.execute(f"PRAGMA user_version = {version + 1}")
        db.execute("COMMIT")
        version = db.execute("PRAGMA user_version").fetchone()[0]
