"""The result cache and the stored outputs: reuse, robustness, bounds, and concurrent use."""

from __future__ import annotations

import io
import marshal
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

import errscan
from errscan.analyzer import cache, related, scan
from tests.support import commit_all, write


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object) -> None:
        raise AssertionError("a cached file was parsed again")

    monkeypatch.setattr(scan, "scan_file", refuse)


def test_cached_files_are_not_parsed_again_in_any_repository(
    basic_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = errscan.extract(str(basic_repo))
    copy = tmp_path / "copy"
    subprocess.run(["git", "clone", "-q", str(basic_repo), str(copy)], check=True)
    _no_parsing(monkeypatch)
    again = errscan.extract(str(basic_repo))
    assert again.records == first.records
    assert again.file_errors == first.file_errors
    other = errscan.extract(str(copy))  # same blobs, another repository
    assert [r.message for r in other.records] == [r.message for r in first.records]
    # a clone is named by its origin remote: the same repository, whatever folder holds it
    assert [r.repo for r in other.records] == [str(basic_repo)] * len(first.records)


def test_only_changed_files_are_parsed(basic_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    errscan.extract(str(basic_repo))
    write(basic_repo, "pkg/new.py", 'raise ValueError("new file")\n')
    commit_all(basic_repo, "one new file")
    parsed: list[str] = []
    original = scan.scan_file

    def counting(
        path: str, data: bytes | str, radius: int, timeout: float | None, partial: bool = False
    ) -> object:
        parsed.append(path)
        return original(path, data, radius, timeout, partial)

    monkeypatch.setattr(scan, "scan_file", counting)
    result = errscan.extract(str(basic_repo))
    assert parsed == ["pkg/new.py"]
    assert "new file" in {r.message for r in result.records}


def test_options_that_change_records_are_part_of_the_key(basic_repo: Path) -> None:
    wide = errscan.extract(str(basic_repo), context=15)
    narrow = errscan.extract(str(basic_repo), context=1)
    assert wide.records[0].context != narrow.records[0].context


def test_corrupt_entry_is_scanned_again(basic_repo: Path, _private_cache: Path) -> None:
    first = errscan.extract(str(basic_repo))
    db = sqlite3.connect(_private_cache / "results.sqlite")
    with db:
        db.execute("UPDATE results SET data = ?", (b"\x00not json",))
    db.close()
    assert errscan.extract(str(basic_repo)).records == first.records


@pytest.mark.parametrize("column", ["data", "summary", "names", "features"])
def test_a_value_with_any_bit_flipped_is_a_miss(tmp_path: Path, column: str) -> None:
    """Each column's check (CRC-32) catches a flip of any one bit of its value, and a
    damaged column is a miss only for itself."""
    values = (b"sites" * 40, b"summary" * 30, b"names" * 20, b"features" * 10)
    results = cache.ResultCache(tmp_path / "results.sqlite", "digest")
    try:
        where = cache._COLUMNS.index(column)
        size = len(values[where]) * 8
        shas = [f"{bit:040x}" for bit in range(size)]
        results.put_many((sha, values) for sha in shas)
        db = results._db
        for bit, sha in enumerate(shas):
            damaged = bytearray(values[where])
            damaged[bit // 8] ^= 1 << (bit % 8)
            db.execute(
                f"UPDATE results SET {column} = ? WHERE key = ?", (bytes(damaged), f"{sha}:digest")
            )
        assert results.get_many(shas, column) == {}
        others = [c for c in cache._COLUMNS if c != column]
        for other in others:
            kept = results.get_many(shas, other)
            assert set(kept) == set(shas)
    finally:
        results.close()


def test_corrupt_database_file_is_replaced(basic_repo: Path, _private_cache: Path) -> None:
    _private_cache.mkdir(parents=True)
    (_private_cache / "results.sqlite").write_bytes(b"this is not a database" * 100)
    assert errscan.extract(str(basic_repo)).stats.sites == 29


def test_no_cache_leaves_nothing(basic_repo: Path, _private_cache: Path) -> None:
    errscan.extract(str(basic_repo), use_cache=False)
    assert not (_private_cache / "results.sqlite").exists()


@pytest.mark.parametrize("copied", [True, False])
def test_pool_and_in_process_give_the_same_records(
    basic_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copied: bool
) -> None:
    """Related errors too: ranked in the pool, a few records at a time, while the main
    process links; the workers read the groups from a copy of the tables (which is
    gone afterwards), or (`copied` False, as where few records are to rank) the main
    process reads and sends them. (A first ranking of up to related._HELD records is
    ranked in the main process, from memory: none here.)"""
    serial = errscan.extract(str(basic_repo), jobs=1, use_cache=False)
    monkeypatch.setattr(related, "_HELD", 0)
    monkeypatch.setattr(scan, "_POOL_MIN_BYTES", 0)
    monkeypatch.setattr(scan, "_BATCH_FILES", 2)
    monkeypatch.setattr(related, "_GROUP", 2)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    if not copied:
        monkeypatch.setattr(related.Ranking, "_mostly_marked", lambda _self: False)
    pooled_jobs: list[type] = []
    real_map = scan.Scanner.map

    def counting_map(self: scan.Scanner, work: Any, items: Any) -> Any:
        def noted(items: Any) -> Any:
            for item in items:
                if self.pooled and work is related.rank_job:
                    pooled_jobs.append(type(item))
                yield item

        yield from real_map(self, work, noted(items))

    monkeypatch.setattr(scan.Scanner, "map", counting_map)
    pooled = errscan.extract(str(basic_repo), jobs=2, use_cache=False)
    assert pooled.records == serial.records
    assert pooled.file_errors == serial.file_errors
    assert len(pooled_jobs) > 1
    assert set(pooled_jobs) == ({tuple} if copied else {bytes})
    assert any(record.related for record in pooled.records)
    assert not any(scratch.iterdir())


@pytest.mark.parametrize("workers_can_write", [True, False])
def test_pool_workers_store_results_in_the_cache(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch, workers_can_write: bool
) -> None:
    """Workers write each result to the cache file themselves; where they cannot (the
    cache locked past the wait, say), the main process stores what they hand back."""
    serial = errscan.extract(str(basic_repo), jobs=1, use_cache=False)
    monkeypatch.setattr(scan, "_POOL_MIN_BYTES", 0)
    monkeypatch.setattr(scan, "_BATCH_FILES", 2)
    main = os.getpid()
    put_many = cache.ResultCache.put_many

    def put(self: cache.ResultCache, entries: Any) -> None:
        if os.getpid() != main and not workers_can_write:
            raise sqlite3.OperationalError("database is locked")
        put_many(self, entries)

    monkeypatch.setattr(cache.ResultCache, "put_many", put)
    pooled = errscan.extract(str(basic_repo), jobs=2)
    assert pooled.records == serial.records
    assert pooled.file_errors == serial.file_errors
    db = sqlite3.connect(_private_cache / "results.sqlite")
    (entries,) = db.execute("SELECT COUNT(*) FROM results").fetchone()
    db.close()
    assert entries == pooled.stats.files
    _no_parsing(monkeypatch)
    for path in (_private_cache / "state").iterdir():
        path.unlink()  # no kept records: every file's sites come from the cache
    again = errscan.extract(str(basic_repo), jobs=2)
    assert again.records == serial.records


def test_stored_output_is_replayed_byte_for_byte(
    basic_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for fmt in ("jsonl", "json"):
        first = io.StringIO()
        stats = errscan.export(str(basic_repo), fmt, stream=first)
        monkeypatch.setattr(errscan.Scan, "__iter__", lambda _self: iter(()))  # no scanning
        second = io.StringIO()
        replayed = errscan.export(str(basic_repo), fmt, stream=second)
        monkeypatch.undo()
        assert second.getvalue() == first.getvalue()
        assert (replayed.files, replayed.sites, replayed.file_errors) == (
            stats.files,
            stats.sites,
            stats.file_errors,
        )


def test_a_replay_lists_no_files_and_copies_the_bytes(
    basic_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = io.StringIO()
    errscan.export(str(basic_repo), "jsonl", stream=first)

    def unlisted(*_args: object) -> None:
        raise AssertionError("a replay listed the commit's files")

    from errscan.analyzer import files

    monkeypatch.setattr(files, "list_files", unlisted)
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    replayed = errscan.export(str(basic_repo), "jsonl", stream=stream)
    assert raw.getvalue() == first.getvalue().encode("utf-8")
    out = tmp_path / "out.jsonl"
    errscan.export(str(basic_repo), "jsonl", out)
    assert out.read_bytes() == raw.getvalue() and replayed.files > 0


def test_a_damaged_replayed_output_is_made_again(basic_repo: Path, _private_cache: Path) -> None:
    first = io.StringIO()
    errscan.export(str(basic_repo), "jsonl", stream=first)
    (stored,) = (_private_cache / "outputs").glob("*.out")
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0x01  # the same size, one bit changed
    stored.write_bytes(bytes(data))
    second = io.StringIO()
    errscan.export(str(basic_repo), "jsonl", stream=second)
    assert second.getvalue() == first.getvalue()
    assert stored.read_bytes() == first.getvalue().encode("utf-8")  # stored anew


def test_output_replay_is_keyed_by_repository_name(basic_repo: Path) -> None:
    plain, named = io.StringIO(), io.StringIO()
    errscan.export(str(basic_repo), "jsonl", stream=plain)
    errscan.export(str(basic_repo), "jsonl", stream=named, repo_name="acme/widgets")
    assert '"repo": "acme/widgets"' in named.getvalue()
    assert '"repo": "acme/widgets"' not in plain.getvalue()


def test_info_and_prune(basic_repo: Path, _private_cache: Path) -> None:
    errscan.export(str(basic_repo), "jsonl", stream=io.StringIO())
    info = errscan.cache_info()
    assert (info.entries, info.outputs, info.states, info.configs) == (6, 1, 1, 1)
    assert info.bytes > 0 and info.output_bytes > 0 and info.state_bytes > 0
    assert info.config_bytes > 0
    dropped, left = errscan.prune_cache(max_bytes=info.bytes + info.state_bytes)
    assert dropped == 1 and left.outputs == 0 and (left.entries, left.states) == (6, 1)
    dropped, left = errscan.prune_cache(max_bytes=info.bytes)
    assert dropped == 1 and left.states == 0 and left.entries == 6 and left.configs == 1
    dropped, left = errscan.prune_cache(max_bytes=0)
    assert dropped == 7 and left.entries == 0 and left.configs == 0


def test_cache_commands(basic_repo: Path, _private_cache: Path) -> None:
    from click.testing import CliRunner

    from errscan.cli import cli

    runner = CliRunner()
    assert runner.invoke(cli, ["extract", str(basic_repo), "-q"]).exit_code == 0
    info = runner.invoke(cli, ["cache", "info"])
    assert info.exit_code == 0
    assert info.stdout.startswith(f"{_private_cache / 'results.sqlite'}: 6 file results")
    pruned = runner.invoke(cli, ["cache", "prune", "--max-mb", "0"])
    assert pruned.exit_code == 0
    assert pruned.stdout == "dropped 9 entries; 0 left, 0.0 MB\n"  # 6 + output, state, settings


def test_two_processes_share_one_cache(
    basic_repo: Path, tmp_path: Path, _private_cache: Path
) -> None:
    def command(out: Path, context: int) -> list[str]:
        return [sys.executable, "-m", "errscan", "extract", str(basic_repo), "-q",
                "-o", str(out), "--context", str(context)]  # fmt: skip

    outputs = [tmp_path / f"out{i}.jsonl" for i in range(4)]
    procs = [  # two keys, each written by two processes at once
        subprocess.Popen(command(out, i % 2), stderr=subprocess.PIPE, text=True)
        for i, out in enumerate(outputs)
    ]
    finished = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0, 0], finished
    assert outputs[0].read_bytes() == outputs[2].read_bytes()
    assert outputs[1].read_bytes() == outputs[3].read_bytes()
    again = tmp_path / "again.jsonl"
    subprocess.run(command(again, 0), check=True)
    assert again.read_bytes() == outputs[0].read_bytes()


@pytest.mark.parametrize("partial", [False, True])
def test_encode_decode_round_trip(partial: bool) -> None:
    """A summary round trips whole or partial (summarize's `partial`), deferred classes
    and all."""
    code = (
        'from . import x as y\nclass C(E):\n    """Doc."""\n'
        'def f():\n    raise E(f"a {b!r:>3}", c) from d\n'
        "class Bad(ValueError):\n"
        "    code = 'E1'\n"
        "    def __init__(self, name, detail=None):\n"
        "        if detail is None:\n"
        "            detail = f'no {name}'\n"
        "        self.name = name\n"
        "        super().__init__(f'bad {name}: {detail}')\n"
        "    def __str__(self):\n"
        "        return f'{self.name}!'\n"
        "class Small(Bad):\n"
        "    def __init__(self, value):\n"
        "        ValueError.__init__(self, f'small {value}')\n"
        "CODES = {'E1': (Bad, 'bad'), 'E2': (Small, 'small')}\n"
        "def by_code(code):\n"
        "    cls, _ = CODES[code]\n"
        "    return cls(code)\n"
    )
    result = scan.scan_file("m.py", code, 3, partial=partial)
    data, summary, names, features = cache.encode(result)
    ((key, feature),) = cache.decode_features(features) or []
    assert key == ["f", "raise", "E", "a {b!r:>3}"] and feature[0] == "f"
    assert cache.decode_names(names) == (["C", "Bad", "Small"], ["f", "by_code"], False)
    decoded = cache.decode(data, "m.py")
    assert decoded is not None and decoded.sites == result.sites
    assert [s.call_args for s in decoded.sites] == [s.call_args for s in result.sites]
    stored, made = cache.decode_summary(summary), result.summary
    assert stored is not None and made is not None
    assert dict(stored.classes) == {c.qualname: c for c in made.classes}
    assert (stored.imports, stored.factories, stored.aliases) == (
        made.imports,
        made.factories,
        made.aliases,
    )
    assert stored.factory_calls == made.factory_calls
    assert stored.tables == made.tables == (("by_code", "code", (("E1", "Bad"), ("E2", "Small"))),)
    assert stored.partial == made.partial == partial
    assert stored.classes["C"].deferred == partial and not stored.classes["Bad"].deferred
    assert stored.classes["Small"].init_of == "ValueError"  # a base past its parent's
    moved = cache.decode(data, "elsewhere.py")
    assert moved is not None and moved.sites[0].file == "elsewhere.py"
    assert cache.decode(b"{}", "m.py") is None
    assert cache.decode_summary(b"[1]") is None
    # cut short, or of another shape: unreadable, so scanned again
    assert cache.decode(data[:-3], "m.py") is None
    assert cache.decode_summary(summary[: len(summary) // 2]) is None
    assert cache.decode_features(names) is None
    assert cache.decode_names(features) is None
    assert cache.decode(marshal.dumps({"sites": [[1]]}), "m.py") is None


def test_a_read_marks_only_entries_not_marked_within_the_hour(tmp_path: Path) -> None:
    """Pruning goes least recently used first; a read marks an entry used only where its
    mark is older than an hour, so the pool's workers reading what they have just stored
    write nothing (and never wait on each other's write lock)."""
    results = cache.ResultCache(tmp_path / "results.sqlite", "digest")
    encoded = (b"[]", b"{}", b"[[], []]", b"[]")
    results.put_many([("old", encoded), ("new", encoded)])
    db = results._db
    stale = time.time() - 2 * cache._TOUCHED
    db.execute("UPDATE results SET used = ? WHERE key = ?", (stale, "old:digest"))
    recent = db.execute("SELECT used FROM results WHERE key = 'new:digest'").fetchone()[0]
    written: list[str] = []
    db.set_trace_callback(written.append)
    assert set(results.get_many(["old", "new"], column="names")) == {"old", "new"}
    db.set_trace_callback(None)
    updates = [statement for statement in written if statement.startswith("UPDATE")]
    assert len(updates) == 1 and "'old:digest'" in updates[0]
    used = dict(db.execute("SELECT key, used FROM results"))
    assert used["new:digest"] == recent
    assert used["old:digest"] > stale + cache._TOUCHED
    written.clear()
    db.set_trace_callback(written.append)
    results.get_many(["old", "new"])  # both marked within the hour now
    db.set_trace_callback(None)
    assert not [statement for statement in written if not statement.startswith("SELECT")]
    results.close()


def test_pruning_sums_the_entries_only_where_the_file_could_be_over(tmp_path: Path) -> None:
    """Every scan that adds results prunes: under budget by the file's own pages, it
    reads no row (summing them read every page of the cache); over, it drops the least
    recently used entries until the rest fit."""
    results = cache.ResultCache(tmp_path / "results.sqlite", "digest")
    try:
        encoded = (b"x" * 3000, b"{}", b"[[], []]", b"[]")
        results.put_many([(f"blob{n}", encoded) for n in range(8)])
        db = results._db
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        file_bytes = pages * db.execute("PRAGMA page_size").fetchone()[0]
        held = results.info().bytes
        assert 0 < held < file_bytes
        statements: list[str] = []
        db.set_trace_callback(statements.append)
        assert results.prune(file_bytes) == 0
        db.set_trace_callback(None)
        assert not any("FROM results" in statement for statement in statements), statements
        assert results.prune(held) == 0  # within the budget, counted
        assert results.prune(held - 1) == 1
        assert results.info().entries == 7
    finally:
        results.close()


def test_a_first_pass_s_results_are_copied_into_the_file_behind_the_scan(
    tmp_path: Path,
) -> None:
    """The workers' results sit in the write-ahead log; copying them into the file in
    background work while the scan goes on, and emptying the log where no connection
    reads it, leaves the last close little to copy and no log of megabytes to delete."""
    from errscan import background

    results = cache.ResultCache(tmp_path / "results.sqlite", "digest")
    worker = cache.ResultCache(tmp_path / "results.sqlite", "digest")  # as a pool's
    try:
        worker.put_many([(f"blob{n}", (b"x" * 5000, b"{}", b"[]", b"[]")) for n in range(20)])
        file = tmp_path / "results.sqlite"
        before = file.stat().st_size  # the entries are in the log alone
        assert Path(f"{file}-wal").stat().st_size > 100_000 > before
        results.checkpoint_behind()
        background.wait()
        assert file.stat().st_size > 100_000  # copied in, while both connections are open
        assert Path(f"{file}-wal").stat().st_size == 0  # and the log emptied: none read it
        assert set(results.get_many(["blob0", "blob19"])) == {"blob0", "blob19"}
    finally:
        worker.close()
        results.close()
        background.wait()
    memory = cache.ResultCache.in_memory("digest", 2)
    memory.checkpoint_behind()  # nothing to copy, nothing started
    memory.close()
