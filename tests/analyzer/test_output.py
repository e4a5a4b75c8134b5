"""Output is deterministic and written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import errscan
from errscan.analyzer import output
from errscan.models import Context, ErrorRecord, MessagePart


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


_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", categories=None), max_size=12
) | st.sampled_from(["", 'say "hi"\n\tnow\\', "\x00\x1f\x7f", "é €\u2028", "\ud800"])
_MAYBE = st.none() | _TEXT
_STRINGS = st.lists(_TEXT, max_size=3).map(tuple)
_PARTS = st.lists(st.builds(MessagePart, _MAYBE, _MAYBE, _MAYBE, _MAYBE), max_size=3).map(tuple)


@st.composite
def _records(draw: st.DrawFn) -> ErrorRecord:
    ints = st.integers(-1, 10**12)
    fields = {
        "kind": draw(_TEXT), "exception": draw(_MAYBE), "message": draw(_MAYBE),
        "message_parts": draw(_PARTS), "message_source": draw(_TEXT),
        "message_candidates": draw(_STRINGS), "args": draw(_STRINGS), "cause": draw(_MAYBE),
        "reraises": draw(_STRINGS), "guards": draw(_STRINGS), "env_vars": draw(_STRINGS),
        "trigger": draw(_TEXT), "file": draw(_TEXT), "line": draw(ints),
        "end_line": draw(ints), "col": draw(ints), "function": draw(_TEXT),
        "context": Context(draw(ints), draw(ints), draw(_TEXT)),
        "exception_qualname": draw(_MAYBE), "exception_bases": draw(_STRINGS),
        "exception_doc": draw(_MAYBE), "related": draw(_STRINGS), "id": draw(_TEXT),
        "repo": draw(_TEXT), "commit": draw(_TEXT), "url": draw(_MAYBE), "area": draw(_TEXT),
    }  # fmt: skip
    return ErrorRecord.build(fields)


@settings(max_examples=400, deadline=None)
@given(_records())
def test_a_record_s_line_is_json_dumps_of_its_dict(record: ErrorRecord) -> None:
    expected = json.dumps(record.to_dict(), sort_keys=True, ensure_ascii=False)
    assert output.record_line(record) == expected


@pytest.mark.parametrize(
    "odd",
    [{"col": True}, {"line": "3"}, {"args": ["a", 1]}, {"message": 3}, {"guards": "ab"},
     {"message_parts": ({"text": "x"},)}, {"related": None}],
)  # fmt: skip
def test_a_record_with_a_field_of_another_type_is_written_by_json_dumps(
    odd: dict[str, object],
) -> None:
    """A record read back from an edited line can hold anything JSON does: as json.dumps
    writes it, whatever it is."""
    plain = {
        "kind": "raise", "exception": "ValueError", "message": "bad", "message_parts": (),
        "message_source": "literal", "message_candidates": ("bad",), "args": (), "cause": None,
        "reraises": (), "guards": ("x",), "env_vars": (), "trigger": "t", "file": "a.py",
        "line": 3, "end_line": 3, "col": 4, "function": "f", "context": Context(1, 5, "code"),
        "exception_qualname": "ValueError", "exception_bases": (), "exception_doc": None,
        "related": (), "id": "0123", "repo": "r", "commit": "c", "url": None, "area": "code",
    }  # fmt: skip
    record = ErrorRecord.build({**plain, **odd})
    try:
        expected = json.dumps(record.to_dict(), sort_keys=True, ensure_ascii=False)
    except (TypeError, AttributeError) as error:  # no dict to write: the same error
        with pytest.raises(type(error)):
            output.record_line(record)
    else:
        assert output.record_line(record) == expected
