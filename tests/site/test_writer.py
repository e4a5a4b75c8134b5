"""The site's file writer: written and removed in a thread of its own, told in the caller's."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from errscan.site import writer as writer_module
from errscan.site.writer import FileWriter


def _told(root: Path) -> tuple[FileWriter, list[tuple[str, bool, str]]]:
    told: list[tuple[str, bool, str]] = []
    writer = FileWriter(
        root,
        lambda path, removed: told.append((path, removed, threading.current_thread().name)),
        settle=True,
    )
    return writer, told


def test_a_settling_writer_puts_every_file_in_place_and_tells_the_callers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_module, "_HELD", 100)  # the larger files through a temp file
    for i in range(0, 600, 2):
        (tmp_path / "d").mkdir(exist_ok=True)
        (tmp_path / "d" / f"{i}.txt").write_text("old")
    writer, told = _told(tmp_path)
    digests = {}
    for i in range(600):
        body = f"file {i} " * (i % 30)  # empty to 270 bytes
        digests[i] = writer.stream(f"d/{i}.txt", [body[:5], body[5:]], "0" * 64)
    writer.remove(f"d/{i}.txt" for i in range(0, 600, 3))
    writer.wait()
    for i in range(600):
        path = tmp_path / "d" / f"{i}.txt"
        if i % 3 == 0:
            assert not path.exists()
        else:
            body = f"file {i} " * (i % 30)
            assert path.read_text() == body
            assert digests[i] == hashlib.sha256(body.encode()).hexdigest()
    assert writer.written == 600 and writer.removed == 200
    assert {name for _, _, name in told} == {threading.current_thread().name}
    assert sorted(p for p, removed, _ in told if not removed) == sorted(
        f"d/{i}.txt" for i in range(600)
    )
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_a_file_read_after_it_was_written_is_read_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replace = writer_module._replace

    def slow(what: str | bytes, target: Path) -> None:
        time.sleep(0.2)
        replace(what, target)

    monkeypatch.setattr(writer_module, "_replace", slow)
    (tmp_path / "f.json").write_text("old")
    writer, _ = _told(tmp_path)
    digest = writer.stream("f.json", ["new"], "0" * 64)
    assert writer.read("f.json", digest) == "new"  # not the old bytes, still in place
    assert writer.put("f.json", "new") == digest and writer.written == 1  # unchanged
    writer.wait()


def test_a_file_the_thread_cannot_put_in_place_fails_the_build_and_leaves_no_temp_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "d.json").mkdir()  # a folder where the file goes: the rename fails
    (tmp_path / "d.json" / "x").write_text("x")
    writer, told = _told(tmp_path)
    writer.stream("d.json", ["data"], "0" * 64)
    with pytest.raises(OSError):
        writer.wait()
    assert told == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json"]
    writer.stream("e.json", ["data"])  # the writer goes on after the failure raised
    writer.wait()
    assert (tmp_path / "e.json").read_text() == "data"
