"""Work left to finish behind a scan: waited for before a fork, a state's reopening, and
the command's exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import errscan
from errscan import background
from errscan.analyzer import scan, state


def _slow(done: list[str], name: str) -> None:
    time.sleep(0.3)
    done.append(name)


def test_wait_ends_all_the_work_started() -> None:
    done: list[str] = []
    background.run(lambda: _slow(done, "a"))
    background.run(lambda: _slow(done, "b"))
    background.wait()
    assert sorted(done) == ["a", "b"]
    assert [t for t in threading.enumerate() if t.name == "errscan-background"] == []


def test_a_pool_forks_once_the_work_has_ended() -> None:
    done: list[str] = []
    background.run(lambda: _slow(done, "closed"))
    with scan.Scanner(2, 3) as scanner:
        assert scanner.pooled
        assert done == ["closed"]


def test_a_state_opens_once_its_last_close_has_ended(
    basic_repo: Path, _private_cache: Path
) -> None:
    """A scan's state and result cache close behind it (their last checkpoint); the next
    scan of the same lineage waits for that rather than working in a private state."""
    records = list(errscan.scan(str(basic_repo)))  # iterated: the state closes behind
    done: list[str] = []
    background.run(lambda: _slow(done, "closed"))
    kept = state.State.open(_private_cache, "lineage")
    try:
        assert done == ["closed"]
    finally:
        kept.close()
    background.wait()
    assert list(errscan.scan(str(basic_repo))) == records
    background.wait()
    # checkpointed as they closed, their logs removed
    assert not list(_private_cache.glob("**/*-wal"))


def test_the_command_exits_once_the_work_has_ended(tmp_path: Path) -> None:
    """The command ends its process without the interpreter's teardown (os._exit), which
    would not wait for threads: an exit handler waits."""
    marker = tmp_path / "done"
    script = textwrap.dedent(
        f"""
        import sys, time
        from errscan import background, __main__
        def work():
            time.sleep(0.3)
            open({str(marker)!r}, "w").close()
        background.run(work)
        sys.argv = ["errscan", "--version"]
        __main__.run()
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)
    assert marker.exists()


def test_a_pool_s_modules_load_in_the_background() -> None:
    """A scan that may start a process pool imports its modules in a thread while git
    lists the files; the pool's start waits for that (as for all background work)."""
    script = textwrap.dedent(
        """
        import sys
        from errscan import background
        from errscan.analyzer import scan
        assert "concurrent.futures.process" not in sys.modules
        scan.preload()
        background.wait()
        assert "concurrent.futures.process" in sys.modules
        assert "multiprocessing" in sys.modules
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)


def test_a_fork_waits_for_joined_threads_to_leave_the_system(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A thread joined in Python may still be leaving the operating system for a moment:
    settle waits until the threads beyond Python's are as many as when errscan loaded,
    and no longer than background._SETTLE where they stay (a host's own)."""
    counts = iter([2, 1, 1, 0])
    asked: list[int] = []

    def excess() -> int:
        asked.append(1)
        return next(counts, 0)

    monkeypatch.setattr(background, "_BASE", 0)
    monkeypatch.setattr(background, "_excess", excess)
    background.settle()
    assert len(asked) == 4  # until none was left
    monkeypatch.setattr(background, "_excess", lambda: 3)
    started = time.monotonic()
    background.settle()
    assert background._SETTLE <= time.monotonic() - started < background._SETTLE + 1
    monkeypatch.setattr(background, "_BASE", None)  # the system does not say: no wait
    started = time.monotonic()
    background.settle()
    assert time.monotonic() - started < background._SETTLE


def test_the_threads_the_system_runs_beyond_python_s_are_counted() -> None:
    found = background._excess()
    if found is None:
        pytest.skip("this system lists no threads of a process")  # not Linux
    assert found >= 0
    started = threading.Event()
    ending = threading.Event()

    def waiting() -> None:
        started.set()
        ending.wait()

    thread = threading.Thread(target=waiting)
    thread.start()
    started.wait()
    assert background._excess() == found  # Python knows the thread: not beyond
    ending.set()
    thread.join()
