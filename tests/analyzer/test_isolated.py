"""LibCST runs in a helper process: its crash, overrun or memory blow-up is one file's error."""

from __future__ import annotations

import os

import pytest

from errscan.analyzer import isolated
from errscan.analyzer.scan import scan_file

PEP701 = 'x = f"{"a"}"\n'
# syntax no Python before 3.14 reads, so the file goes to LibCST on every one errscan runs on
PEP758 = "try:\n    pass\nexcept KeyError, ValueError:\n    pass\n"
CRASHER = PEP758 + "y = " + "not " * 10_000 + "z\n"  # 40 KB that crash LibCST's parser


def test_a_file_that_crashes_libcst_is_a_file_error_and_the_next_file_is_read() -> None:
    crashed = scan_file("crash.py", CRASHER.encode(), 2)
    assert crashed.error is not None and not crashed.error.transient
    assert "LibCST crashed (SIG" in crashed.error.reason
    fine = scan_file("ok.py", (PEP758 + "raise ValueError(f'{x}!')\n").encode(), 2)
    assert fine.error is None and [s.message for s in fine.sites] == ["{x}!"]


def test_an_overrun_is_a_transient_error_and_the_helper_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    helper = isolated.Helper()
    assert helper.rewrite(PEP701) == "x = f'{\"a\"}'\n"
    first = helper._proc
    assert first is not None
    monkeypatch.setattr(isolated, "SECONDS", 0.0)
    with pytest.raises(isolated.Failed, match="LibCST took more than 0 s") as failed:
        helper.rewrite(PEP701 * 2000)
    assert failed.value.transient and first.poll() is not None  # killed, not left running
    monkeypatch.undo()
    assert helper.rewrite(PEP701) == "x = f'{\"a\"}'\n"
    assert helper._proc is not first
    helper.close()


def test_a_forked_child_starts_a_helper_of_its_own() -> None:
    helper = isolated.Helper()
    assert helper.rewrite(PEP701) is not None
    parent_helper = helper._proc
    assert parent_helper is not None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        ok = helper.rewrite(PEP701) is not None and helper._proc is not parent_helper
        helper.close()
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.waitpid(pid, 0)
    assert parent_helper.poll() is None  # the child left the parent's helper alone
    assert helper.rewrite(PEP701) is not None
    helper.close()
