"""Whole outputs of earlier scans, kept as files, so rescanning a commit replays its output.

A commit's content never changes, so the output of a scan is a function of the commit
sha and everything else that shapes records (repository name, filters, context,
errscan and Python versions, format): that tuple is the key. An entry is two files,
`KEY.out` and `KEY.json` (the counts, and the output's size and CRC-32: a check
against damage, not against anyone, as the cache is the user's own), written to temp
files and renamed into place, the counts last, so a reader never sees half an entry;
an output whose bytes no longer match its size and CRC-32 is no entry.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import zlib
from pathlib import Path

from errscan.outfile import crc32_of
from errscan.tempname import mkstemp, write_atomically

TYPE_CHECKING = False
if TYPE_CHECKING:  # the models load where a scan's counts are made, not on a replay
    from collections.abc import Iterable, Iterator
    from typing import IO

    from errscan.models import ScanStats

    Stored = tuple[Iterator[bytes], tuple[int, int, int], tuple[int, int, bytes | None]]

_BLOCK = 1 << 20
_WHOLE = 64 << 20  # an output up to this size is read once, whole


def key(*parts: object) -> str:
    """A digest of everything that shapes a scan's output."""
    import hashlib  # here: a warm rerun names no entry (errscan.launch)

    text = json.dumps([*map(str, parts), f"py{sys.version_info[0]}.{sys.version_info[1]}"])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class Replay:
    def __init__(self, cache_dir: Path) -> None:
        self.root = cache_dir / "outputs"

    def load(self, entry: str) -> Stored | None:
        """The stored output: its UTF-8 bytes a block at a time, its counts (files,
        sites, file errors), and its size, CRC-32 and bytes where read whole
        (outfile.write_bytes' `same`); None where there is no whole entry, or its output
        is not the bytes stored (a damaged file: read whole to check, before any of it
        is given out)."""
        text_path, stats_path = self.root / f"{entry}.out", self.root / f"{entry}.json"
        try:
            counts = json.loads(stats_path.read_text(encoding="utf-8"))
            stats = (counts["files"], counts["sites"], counts["file_errors"])
            if not all(type(count) is int for count in stats):
                return None
            size, digest = counts["bytes"], counts["crc32"]
            if type(size) is not int or type(digest) is not int:
                return None
            with open(text_path, "rb") as stored:
                if os.fstat(stored.fileno()).st_size != size:
                    return None
                data: bytes | None = None
                if size <= _WHOLE:  # read once, kept to be written out
                    data = stored.read()
                    if zlib.crc32(data) != digest:
                        return None
                    chunks: Iterator[bytes] = iter([data])
                elif crc32_of(stored) != digest:
                    return None
                else:
                    chunks = _blocks(text_path)
            os.utime(text_path)  # recently used: pruned last
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return chunks, stats, (size, digest, data)

    @contextlib.contextmanager
    def recorder(self, entry: str) -> Iterator[_Recorder]:
        """Collects the output as it is written; stored only if the block ends normally."""
        recorder = _Recorder(self.root, entry)
        try:
            yield recorder
        except BaseException:
            recorder.discard()
            raise
        recorder.commit()

    def files(self) -> list[Path]:
        try:
            return [path for path in self.root.iterdir() if path.suffix in (".out", ".json")]
        except OSError:
            return []


def _blocks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as stored:
        while block := stored.read(_BLOCK):
            yield block


class _Recorder:
    def __init__(self, root: Path, entry: str) -> None:
        self.root = root
        self.entry = entry
        self.stats: ScanStats | None = None
        self._out: IO[bytes] | None = None
        self._tmp: str | None = None
        self._digest = 0  # CRC-32 of the bytes so far
        self._bytes = 0
        self.kept = False  # whether the entry was stored whole
        with contextlib.suppress(OSError):
            root.mkdir(parents=True, exist_ok=True)
            fd, self._tmp = mkstemp(f".{entry}.", ".tmp", root)
            self._out = os.fdopen(fd, "wb")

    def tee(self, chunks: Iterable[str]) -> Iterator[bytes]:
        """The chunks as UTF-8, kept as they go by (encoded once, for the output too)."""
        for chunk in chunks:
            data = chunk.encode("utf-8")
            if self._out is not None:
                try:
                    self._out.write(data)
                except OSError:
                    self.discard()
                self._digest = zlib.crc32(data, self._digest)
                self._bytes += len(data)
            yield data

    def commit(self) -> None:
        if self._out is None or self._tmp is None or self.stats is None:
            self.discard()
            return
        try:
            self._out.close()
            os.replace(self._tmp, self.root / f"{self.entry}.out")
            counts = {"files": self.stats.files, "sites": self.stats.sites,
                      "file_errors": self.stats.file_errors, "bytes": self._bytes,
                      "crc32": self._digest}  # fmt: skip
            write_atomically(self.root / f"{self.entry}.json", json.dumps(counts).encode())
            self.kept = True
        except OSError:
            self.discard()

    def discard(self) -> None:
        if self._out is not None:
            with contextlib.suppress(OSError):
                self._out.close()
            self._out = None
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp)
            self._tmp = None


DEFAULT_MAX_BYTES = 256 << 20


def usage(replay: Replay) -> tuple[int, int]:
    """How many outputs are stored, and their bytes."""
    outputs = [path for path in replay.files() if path.suffix == ".out"]
    return len(outputs), sum(path.stat().st_size for path in outputs)


def prune(replay: Replay, max_bytes: int) -> tuple[int, int]:
    """Drop least recently used entries until at most `max_bytes` remain: (dropped, kept bytes)."""
    outputs = sorted(
        (path for path in replay.files() if path.suffix == ".out"),
        key=lambda path: path.stat().st_mtime,
    )
    total = sum(path.stat().st_size for path in outputs)
    dropped = 0
    for path in outputs:
        if total <= max_bytes:
            break
        total -= path.stat().st_size
        with contextlib.suppress(OSError):
            path.with_suffix(".json").unlink()
            path.unlink()
        dropped += 1
    return dropped, total
