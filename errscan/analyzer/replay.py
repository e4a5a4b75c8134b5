"""Whole outputs of earlier scans, kept as files, so rescanning a commit replays its output.

A commit's content never changes, so the output of a scan is a function of the commit
sha and everything else that shapes records (repository name, filters, context,
errscan and Python versions, format): that tuple is the key. An entry is two files,
`KEY.out` and `KEY.counts` (the counts, and the output's size and CRC-32: a check
against damage, not against anyone, as the cache is the user's own), written to temp
files and renamed into place, the counts last, so a reader never sees half an entry;
an output whose bytes no longer match its size and CRC-32 is no entry.

A warm rescan (errscan.launch) reads an entry through here: the module loads neither
json nor pathlib nor contextlib (6 ms of a 31 ms rescan of networkx, with the notes'
json), and the counts are `pack`ed.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib

from errscan.outfile import crc32_of
from errscan.tempname import mkstemp, remove, write_atomically

TYPE_CHECKING = False
if TYPE_CHECKING:  # the models load where a scan's counts are made, not on a replay
    from collections.abc import Iterable, Iterator
    from pathlib import Path
    from typing import IO, Any

    from errscan.models import ScanStats

    Stored = tuple[Iterator[bytes], tuple[int, int, int], tuple[int, int, bytes | None]]

_BLOCK = 1 << 20
_WHOLE = 64 << 20  # an output up to this size is read once, whole


_PACKED = b"errscan packed 1\n"


def pack(value: Any) -> bytes:
    """`value` (None, bools, ints, strings, and lists, tuples and dicts of them) as the
    bytes `unpack` reads: marshal's, the interpreter's own format (as in .pyc files),
    after their CRC-32, which tells damaged bytes (marshal itself checks nothing)."""
    data = marshal.dumps(value, 4)
    return _PACKED + zlib.crc32(data).to_bytes(4, "big") + data


def unpack(data: bytes) -> object:
    """The value `pack` gave these bytes; ValueError where they are not such bytes, or
    are damaged."""
    start = len(_PACKED) + 4
    if not data.startswith(_PACKED) or len(data) < start:
        raise ValueError("not a packed value")
    if zlib.crc32(data[start:]) != int.from_bytes(data[start - 4 : start], "big"):
        raise ValueError("a damaged packed value")
    try:
        return marshal.loads(data[start:])
    except (EOFError, TypeError) as error:
        raise ValueError(f"not a packed value: {error}") from None


def key(*parts: object) -> str:
    """A digest of everything that shapes a scan's output."""
    import hashlib  # here: a warm rerun names no entry (errscan.launch)
    import json

    text = json.dumps([*map(str, parts), f"py{sys.version_info[0]}.{sys.version_info[1]}"])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class Replay:
    def __init__(self, cache_dir: str | os.PathLike[str]) -> None:
        self.root = os.path.join(os.fspath(cache_dir), "outputs")

    def load(self, entry: str) -> Stored | None:
        """The stored output: its UTF-8 bytes a block at a time, its counts (files,
        sites, file errors), and its size, CRC-32 and bytes where read whole
        (outfile.write_bytes' `same`); None where there is no whole entry, or its output
        is not the bytes stored (a damaged file: read whole to check, before any of it
        is given out)."""
        text_path = os.path.join(self.root, f"{entry}.out")
        try:
            with open(os.path.join(self.root, f"{entry}.counts"), "rb") as counts:
                found = unpack(counts.read())
            if type(found) is not tuple or len(found) != 5:
                return None
            if not all(type(count) is int for count in found):
                return None
            files, sites, file_errors, size, digest = found
            stats = (files, sites, file_errors)
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
        except (OSError, ValueError):
            return None
        return chunks, stats, (size, digest, data)

    def recorder(self, entry: str) -> _Recorder:
        """Collects the output as it is written (`with`); stored only if the block ends
        normally."""
        return _Recorder(self.root, entry)

    def files(self) -> list[Path]:
        from pathlib import Path  # here: a replay lists no files

        try:
            root = Path(self.root)
            return [path for path in root.iterdir() if path.suffix in _SUFFIXES]
        except OSError:
            return []


_SUFFIXES = (".out", ".counts")


def _blocks(path: str) -> Iterator[bytes]:
    with open(path, "rb") as stored:
        while block := stored.read(_BLOCK):
            yield block


class _Recorder:
    def __init__(self, root: str, entry: str) -> None:
        self.root = root
        self.entry = entry
        self.stats: ScanStats | None = None
        self._out: IO[bytes] | None = None
        self._tmp: str | None = None
        self._digest = 0  # CRC-32 of the bytes so far
        self._bytes = 0
        self.kept = False  # whether the entry was stored whole
        try:
            os.makedirs(root, exist_ok=True)
            fd, self._tmp = mkstemp(f".{entry}.", ".tmp", root)
            self._out = os.fdopen(fd, "wb")
        except OSError:
            pass

    def __enter__(self) -> _Recorder:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_rest: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()

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
            os.replace(self._tmp, os.path.join(self.root, f"{self.entry}.out"))
            stats = self.stats
            counts = (stats.files, stats.sites, stats.file_errors, self._bytes, self._digest)
            write_atomically(os.path.join(self.root, f"{self.entry}.counts"), pack(counts))
            self.kept = True
        except OSError:
            self.discard()

    def discard(self) -> None:
        if self._out is not None:
            try:  # noqa: SIM105 (contextlib is not loaded on a replay)
                self._out.close()
            except OSError:
                pass
            self._out = None
        if self._tmp is not None:
            remove(self._tmp)
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
        remove(str(path.with_suffix(".counts")))
        remove(str(path.with_suffix(".json")))  # the counts as stored before they were packed
        remove(str(path))
        dropped += 1
    return dropped, total
