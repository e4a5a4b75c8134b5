"""Work a scan leaves to finish behind it, in threads of this process: closing the kept
state and the result cache (the last connection to a SQLite file checkpoints it: tens
of milliseconds of copying and waiting on the disk), which the rest of the scan's end
(the output's rename, the command's exit) need not wait for.

Such work has ended before this process forks (scan.Scanner waits: a fork while a
thread of ours runs could copy a lock it holds), before a state is opened again, and
before the process exits (an exit handler waits, which the command's quick exit runs).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable

_running: list[threading.Thread] = []
_lock = threading.Lock()
_registered = False


def run(work: Callable[[], None]) -> None:
    """Start `work` in a thread of its own. It must not raise, nor wait for this
    module's work (its own thread among it)."""
    global _registered
    thread = threading.Thread(target=work, name="errscan-background")
    with _lock:
        if not _registered:
            atexit.register(wait)
            _registered = True
        _running.append(thread)
    thread.start()


def wait() -> None:
    """Until all the work started has ended."""
    while True:
        with _lock:
            if not _running:
                return
            thread = _running.pop()
        thread.join()


def close(db: sqlite3.Connection) -> None:
    """Close a connection (made with check_same_thread=False) behind the scan. A
    checkpoint that fails leaves the write-ahead log, which the next connection reads."""

    def closing() -> None:
        with contextlib.suppress(sqlite3.Error):
            db.close()

    run(closing)


def _excess() -> int | None:
    """The threads the operating system runs in this process beyond those Python knows
    alive (Linux: /proc/self/task); None where it does not say."""
    try:
        return len(os.listdir("/proc/self/task")) - threading.active_count()
    except OSError:
        return None


_BASE = _excess()  # as errscan loads: a host's threads of its own (C libraries'), if any
_SETTLE = 0.02  # seconds a fork waits at most for threads that were joined to be gone


def settle() -> None:
    """Before a fork: wait for the work started here to end (wait), then until the
    operating system has let its threads go too (a joined thread may still be leaving,
    for a moment, and the child of a fork then is of a process with two threads), at
    most _SETTLE seconds (a host's threads that started after errscan loaded are never
    ours to wait for)."""
    wait()
    if _BASE is None:
        return
    deadline = time.monotonic() + _SETTLE
    while (_excess() or 0) > _BASE and time.monotonic() < deadline:
        time.sleep(0.0002)
