"""The site's files written only where their bytes change, each atomically (a temp file
renamed into place), and files of the site removed.

Renaming a file over another and removing one are the costliest part of writing a small
file: the file system frees the old file's blocks (on ext4, about 0.2 ms a file against
0.01 ms to write 10 kB in place; a rebuild after a commit replaces some 300 files and
removes 200 in the building process). A writer made with `settle=True` writes small
files and does those renames and removals in a thread of its own, in the order asked,
while the build goes on making the next file; what they did is told back in the
caller's thread (counts, `changed`), and their first failure is raised there.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from errscan.tempname import beside

Changed = Callable[[str, bool], None]  # told each file written (False) or removed (True)

_HELD = 1 << 16  # bytes of a file held whole, for the settling thread to write
# files waiting for the settling thread at most: memory holds no list of them, and at most
# _DEPTH * _HELD bytes of them (16 MB) whatever the site's size
_DEPTH = 256


class FileWriter:
    """Writes a file only where its bytes differ from what is there; counts the files
    written and removed, and tells `changed` of each (the build holds no list of them).
    `settle`: in a thread of its own (see the module); `wait()` puts every file in place
    before the build forks workers or keeps its state."""

    def __init__(self, root: Path, changed: Changed | None = None, *, settle: bool = False) -> None:
        self.root = root
        self.changed = changed
        self.written = 0
        self.removed = 0
        self._settler = _Settler() if settle else None

    def wrote(self, path: str) -> None:
        self.written += 1
        if self.changed is not None:
            self.changed(path, False)

    def put(self, path: str, data: str | bytes, last: str | None = None) -> str:
        """Write the file (where its bytes change); its digest. `last`: stream()'s."""
        body = data.encode("utf-8") if isinstance(data, str) else data
        if last is None or hashlib.sha256(body).hexdigest() == last:
            target = self.root / path
            self._settled(target)
            with contextlib.suppress(OSError):
                if target.stat().st_size == len(body) and target.read_bytes() == body:
                    return hashlib.sha256(body).hexdigest()
        return self.stream(path, [body], last)

    def read(self, path: str, digest: str) -> str | None:
        """The file's text where its digest is this one (as this build's writer left
        it); None where it is not, or cannot be read."""
        target = self.root / path
        self._settled(target)
        try:
            body = target.read_bytes()
        except OSError:
            return None
        if hashlib.sha256(body).hexdigest() != digest:
            return None
        return body.decode("utf-8", "surrogateescape")

    def stream(self, path: str, chunks: Iterable[str | bytes], last: str | None = None) -> str:
        """Write the file from its parts, as they come (one part held at a time, but in
        a settling writer a file up to _HELD bytes, held whole), where its bytes change;
        its digest. `last`: the digest of the file as this writer last wrote it, where
        known. Bytes of another digest are written without reading what is there: it is
        that file or one changed since, and is replaced either way."""
        target = self.root / path
        made = hashlib.sha256()
        parts = (chunk.encode("utf-8") if isinstance(chunk, str) else chunk for chunk in chunks)
        held: list[bytes] = []
        size = 0
        if self._settler is not None:
            for body in parts:
                held.append(body)
                made.update(body)
                size += len(body)
                if size > _HELD:
                    break
            else:  # the whole file held: the thread writes it
                digest = made.hexdigest()
                if (last is not None and digest != last) or not self._same(target, size, made):
                    self._told(self._settler.submit(b"".join(held), target, path))
                return digest
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = beside(target)
        try:
            with os.fdopen(fd, "wb", buffering=1 << 16) as out:
                out.writelines(held)
                for body in parts:
                    made.update(body)
                    out.write(body)
                size = out.tell()
            if (last is None or made.hexdigest() == last) and self._same(target, size, made):
                os.unlink(tmp)
                return made.hexdigest()
            os.chmod(tmp, 0o644)
            if self._settler is not None:
                self._told(self._settler.submit(tmp, target, path))
                return made.hexdigest()
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self.wrote(path)
        return made.hexdigest()

    def remove(self, paths: Iterable[str]) -> None:
        for path in paths:
            if ".." in path.split("/") or path.startswith("/"):
                continue
            if self._settler is not None:
                self._told(self._settler.submit(None, self.root / path, path))
                continue
            with contextlib.suppress(OSError):
                (self.root / path).unlink()
                self._removed(path)

    def wait(self) -> None:
        """Every write, rename and removal asked for done and told; the first that
        failed raised. The thread ends (the next file starts another)."""
        if self._settler is not None:
            self._told(self._settler.wait())

    def close(self) -> None:
        """wait(), its failure dropped: for a build that failed already."""
        with contextlib.suppress(Exception):
            self.wait()

    def _same(self, target: Path, size: int, made: hashlib._Hash) -> bool:
        """Whether the file at `target` has this size and digest, once settled."""
        self._settled(target)
        return _same(target, size, made.digest())

    def _settled(self, target: Path) -> None:
        """Wait for what was asked of `target`, if anything, before reading it."""
        if self._settler is not None:
            self._told(self._settler.settled(target))

    def _told(self, done: list[tuple[str, bool]]) -> None:
        for path, removed in done:
            if removed:
                self._removed(path)
            else:
                self.wrote(path)

    def _removed(self, path: str) -> None:
        self.removed += 1
        if self.changed is not None:
            self.changed(path, True)


class _Settler:
    """The thread that writes files and removes them, in the order asked.

    At most _DEPTH files wait at a time (submit() waits for room). What the thread did is
    handed back by the next call, in the caller's thread; after a failure it puts
    nothing more in place (its temp files are removed) until wait(), and the next call
    raises it.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[str | bytes | None, Path, str] | None]
        self._jobs = queue.Queue(_DEPTH)
        self._done: queue.SimpleQueue[tuple[str, bool]] = queue.SimpleQueue()
        self._pending: dict[Path, int] = {}  # targets asked for and not yet done
        self._change = threading.Condition()
        self._failure: BaseException | None = None  # to raise in the caller's thread
        self._failed = False  # nothing more put in place
        self._thread: threading.Thread | None = None

    def submit(self, what: str | bytes | None, target: Path, path: str) -> list[tuple[str, bool]]:
        """Put `what` at `target`: a temp file renamed over it, or bytes written to a
        temp file first (None: remove `target`); `path` is the site's name of it. What
        was done since the last call."""
        self._raise()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="errscan-site-writer", daemon=True
            )
            self._thread.start()
        with self._change:
            self._pending[target] = self._pending.get(target, 0) + 1
        self._jobs.put((what, target, path))
        return self._told()

    def settled(self, target: Path) -> list[tuple[str, bool]]:
        """Once nothing asked of `target` waits; what was done since the last call."""
        with self._change:
            self._change.wait_for(lambda: target not in self._pending)
        self._raise()
        return self._told()

    def wait(self) -> list[tuple[str, bool]]:
        """Once all asked is done and the thread ended; what was done since the last call.
        Raises the first failure."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join()
            self._thread = None
        self._failed = False  # the next thread starts afresh, once this failure is raised
        done = self._told()
        self._raise()
        return done

    def _raise(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def _told(self) -> list[tuple[str, bool]]:
        done: list[tuple[str, bool]] = []
        with contextlib.suppress(queue.Empty):
            while True:
                done.append(self._done.get_nowait())
        return done

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            what, target, path = job
            try:
                if self._failed:
                    if isinstance(what, str):
                        with contextlib.suppress(OSError):
                            os.unlink(what)
                elif what is None:
                    with contextlib.suppress(OSError):
                        target.unlink()
                        self._done.put((path, True))
                else:
                    _replace(what, target)
                    self._done.put((path, False))
            except BaseException as exc:  # raised in the caller's thread
                self._failure, self._failed = exc, True
            finally:
                with self._change:
                    left = self._pending[target] - 1
                    if left:
                        self._pending[target] = left
                    else:
                        del self._pending[target]
                    self._change.notify_all()


def _replace(what: str | bytes, target: Path) -> None:
    """Rename the temp file `what` over `target`, or first write bytes `what` to a temp
    file beside it; the temp file removed where that fails."""
    if isinstance(what, bytes):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = beside(target)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(what)
            os.chmod(tmp, 0o644)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        what = tmp
    try:
        os.replace(what, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(what)
        raise


def _same(target: Path, size: int, digest: bytes) -> bool:
    """Whether the file at `target` has this size and digest."""
    try:
        if target.stat().st_size != size:
            return False
        there = hashlib.sha256()
        with target.open("rb") as held:
            for block in iter(lambda: held.read(1 << 16), b""):
                there.update(block)
    except OSError:
        return False
    return there.digest() == digest
