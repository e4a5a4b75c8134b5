"""Output is deterministic and written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import errscan
from errscan.analyzer import output


def test_same_input_same_bytes(basic_repo: Path, tmp_path: Path) -> None:
    for fmt in output.FORMATS:
        first, second = tmp_path / f"a.{fmt}", tmp_path / f"b.{fmt}"
        output.write(errscan.extract(str(basic_repo)), fmt, first, None, "test")  # type: ignore[arg-type]
        output.write(errscan.extract(str(basic_repo)), fmt, second, None, "test")  # type: ignore[arg-type]
        assert first.read_bytes() == second.read_bytes()


def test_jsonl_lines_and_json_document(basic_repo: Path, tmp_path: Path) -> None:
    result = errscan.extract(str(basic_repo))
    text = "".join(output.render(result, "jsonl", "test"))
    lines = [json.loads(line) for line in text.splitlines()]
    records = [line for line in lines if line.get("type") != "file_error"]
    errors = [line for line in lines if line.get("type") == "file_error"]
    assert [r["id"] for r in records] == [r.id for r in result.records]
    assert errors == [
        {"type": "file_error", "file": "pkg/broken.py", "reason": errors[0]["reason"]}
    ]
    keys = [(r["file"], r["line"], r["col"]) for r in records]
    assert keys == sorted(keys)
    document = json.loads("".join(output.render(result, "json", "test")))
    assert set(document) == {"repo", "commit", "errscan_version", "records", "file_errors", "stats"}
    assert document["stats"] == {"files": 6, "sites": len(records), "file_errors": 1}


def test_failed_write_leaves_the_old_file(
    basic_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = errscan.extract(str(basic_repo))
    target = tmp_path / "out.jsonl"
    target.write_text("old content\n")

    def explode(*_args: object) -> list[str]:
        def chunks() -> list[str]:
            raise OSError("disk full")

        return chunks()

    monkeypatch.setattr(output, "render", lambda *_a: iter(["partial", *explode()]))
    with pytest.raises(OSError, match="disk full"):
        output.write(result, "jsonl", target, None, "test")  # type: ignore[arg-type]
    assert target.read_text() == "old content\n"
    assert os.listdir(tmp_path).count("out.jsonl") == 1
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_output_keeps_the_existing_file_mode(basic_repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("{}")
    target.chmod(0o640)
    output.write(errscan.extract(str(basic_repo)), "json", target, None, "test")  # type: ignore[arg-type]
    assert target.stat().st_mode & 0o777 == 0o640


def test_devices_are_written_to_never_replaced(basic_repo: Path) -> None:
    result = errscan.extract(str(basic_repo))
    before = os.stat(os.devnull)
    output.write(result, "jsonl", Path(os.devnull), None, "test")  # type: ignore[arg-type]
    after = os.stat(os.devnull)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)


def test_symlinked_output_writes_the_target(basic_repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "real.jsonl"
    target.write_text("old")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    output.write(errscan.extract(str(basic_repo)), "jsonl", link, None, "test")  # type: ignore[arg-type]
    assert link.is_symlink()
    assert target.read_text().startswith('{"area"')
