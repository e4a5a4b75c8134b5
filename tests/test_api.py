"""The library API: scan() streams, extract() collects, export() writes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import errscan


def test_scan_streams_records_in_order_then_reports_errors(basic_repo: Path) -> None:
    running = errscan.scan(str(basic_repo))
    assert running.files == 6 and running.file_errors == []
    records = list(running)
    keys = [(r.file, r.line, r.col) for r in records]
    assert keys == sorted(keys)
    assert [e.file for e in running.file_errors] == ["pkg/broken.py"]
    assert running.stats.sites == len(records) == 29
    with pytest.raises(RuntimeError, match="iterated once"):
        list(running)


def test_extract_collects_the_same(basic_repo: Path) -> None:
    result = errscan.extract(str(basic_repo), use_cache=False)
    assert result.records == tuple(errscan.scan(str(basic_repo)))
    assert result.errscan_version == errscan.__version__
    assert result.to_dict()["stats"] == {"files": 6, "sites": 29, "file_errors": 1}


def test_records_are_frozen_and_serialisable(basic_repo: Path) -> None:
    record = errscan.extract(str(basic_repo)).records[0]
    with pytest.raises(AttributeError):
        record.message = "changed"  # type: ignore[misc]
    data = record.to_dict()
    assert set(data) == set(
        [
            "id",
            "repo",
            "commit",
            "kind",
            "exception",
            "exception_qualname",
            "exception_bases",
            "exception_doc",
            "message",
            "message_parts",
            "message_source",
            "message_candidates",
            "args",
            "cause",
            "reraises",
            "guards",
            "env_vars",
            "trigger",
            "related",
            "file",
            "line",
            "end_line",
            "col",
            "function",
            "area",
            "context",
            "url",
        ]
    )


def test_scan_is_a_context_manager_and_errors_share_a_base(
    basic_repo: Path, tmp_path: Path
) -> None:
    with errscan.scan(str(basic_repo), cache_dir=tmp_path / "cache") as running:
        first = next(iter(running))
        assert first.repo == running.repo
    with errscan.scan(str(basic_repo), cache_dir=tmp_path / "cache") as running:
        assert len(list(running)) == running.stats.sites  # iterated inside, closed after
    for error in (errscan.InputError, errscan.StoreError, errscan.CacheError):
        assert issubclass(error, errscan.ErrscanError)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    result = errscan.extract(str(basic_repo), cache_dir=tmp_path / "cache")
    with pytest.raises(errscan.StoreError, match="not an errscan store"):
        errscan.store_scan(result, other)
