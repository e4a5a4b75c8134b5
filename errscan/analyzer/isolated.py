"""LibCST's native parser in a helper process of its own, under a time and memory limit.

LibCST parses in native code, which a crafted file can crash (a PEP 701 line before
10,000 chained `not`s overflows its stack), keep busy for minutes or grow without
bound. Each process that needs it starts one helper, which serves its files one by one
until that process ends; a helper that crashes, overruns or exhausts its memory is one
file's error, and the next file gets a fresh helper.

    request:  8-byte length, the source as UTF-8
    answer:   1 status byte (0 rewritten, 1 not readable by LibCST), 8-byte length, text
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

SECONDS = 30.0  # one file's time in the helper, at most
MEMORY = 1 << 30  # the helper's address space: LibCST takes 250 MB for a 1.1 MB file
_HEADER = struct.Struct(">Q")
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


class Failed(Exception):
    """The helper crashed, overran or ran out of memory on a file: the reason, on one line.

    `transient`: an overrun, which depends on the machine's load, not on the file alone
    (a crash or a memory limit, fixed here, is the file's own).
    """

    def __init__(self, reason: str, transient: bool = False) -> None:
        super().__init__(reason)
        self.transient = transient


class Helper:
    """The helper of this process, started on first use (anew in a forked child)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid = 0

    def rewrite(self, text: str, seconds: float | None = None) -> str | None:
        """`text` rewritten by downlevel.rewrite in the helper; None where LibCST cannot
        read it. Raises Failed where the helper died or overran (it is then replaced)."""
        proc = self._running()
        assert proc.stdin is not None and proc.stdout is not None
        data = text.encode("utf-8", "surrogatepass")
        done = False
        try:
            try:
                proc.stdin.write(_HEADER.pack(len(data)) + data)
                proc.stdin.flush()
            except OSError:
                raise Failed(_death(proc)) from None
            seconds = SECONDS if seconds is None else seconds
            deadline = time.monotonic() + seconds
            status = _read(proc, 1, deadline, seconds)
            (size,) = _HEADER.unpack(_read(proc, _HEADER.size, deadline, seconds))
            answer = _read(proc, size, deadline, seconds).decode("utf-8", "surrogatepass")
            done = True
        finally:
            if not done:  # crashed, overran, or interrupted (a file's time limit) mid-file
                self.close()
        return answer if status == b"\0" else None

    def _running(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._pid == os.getpid() and self._proc.poll() is None:
            return self._proc
        if self._pid != os.getpid():
            self._proc = None  # a forked child: the parent's helper is not ours to use
        self.close()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, env.get("PYTHONPATH")]))
        self._proc = subprocess.Popen(
            [sys.executable, "-c", "from errscan.analyzer.isolated import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=os.path.dirname(_PACKAGE_ROOT) or "/",
        )
        if self._pid == 0:
            atexit.register(self.close)  # once: close whichever helper is running then
        self._pid = os.getpid()
        return self._proc

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or self._pid != os.getpid():
            return
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _read(proc: subprocess.Popen[bytes], size: int, deadline: float, seconds: float) -> bytes:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    chunks = []
    while size:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise Failed(f"LibCST took more than {seconds:g} s", transient=True)
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise Failed(_death(proc))
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _death(proc: subprocess.Popen[bytes]) -> str:
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return "LibCST stopped answering"
    if code < 0:
        return f"LibCST crashed ({signal.Signals(-code).name})"
    return f"LibCST ran out of memory or failed (exit code {code})"


def serve() -> None:
    """The helper's loop: requests from stdin, answers to stdout, until stdin closes."""
    import resource

    from errscan.analyzer.downlevel import rewrite

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while header := stdin.read(_HEADER.size):
        (size,) = _HEADER.unpack(header)
        text = stdin.read(size).decode("utf-8", "surrogatepass")
        try:
            answer = rewrite(text)
        except MemoryError:
            sys.exit(3)
        status, body = (b"\0", answer.encode("utf-8", "surrogatepass")) if answer else (b"\1", b"")
        stdout.write(status + _HEADER.pack(len(body)) + body)
        stdout.flush()


HELPER = Helper()
