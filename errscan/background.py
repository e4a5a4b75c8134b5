"""Work a scan leaves to finish behind it, in threads of this process: a kept state's
last checkpoint (state.State.close), a few tens of milliseconds of writing and waiting
on the disk that the rest of the scan's end (the result cache's close, the output's
rename) need not wait for.

Such work has ended before this process forks (scan.Scanner waits: a fork while a
thread of ours runs could copy a lock it holds), before a state is opened again, and
before the process exits (an exit handler waits, which the command's quick exit runs).
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable

_running: list[threading.Thread] = []
_lock = threading.Lock()
_registered = False


def run(work: Callable[[], None]) -> None:
    """Start `work` in a thread of its own; `work` must not raise."""
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
