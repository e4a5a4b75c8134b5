"""The atomic writer's check that a file holds a stored output already."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from errscan import outfile


def test_a_file_holds_the_bytes_compared_or_by_digest(tmp_path: Path) -> None:
    data = os.urandom(3 * (1 << 20) + 17)  # past one block of the comparison
    digest = zlib.crc32(data)
    path = tmp_path / "out.jsonl"
    path.write_bytes(data)
    assert outfile.holds(path, (len(data), digest, data))
    assert outfile.holds(path, (len(data), digest, None))
    other = data[:-1] + bytes([data[-1] ^ 1])
    assert not outfile.holds(path, (len(other), zlib.crc32(other), other))
    assert not outfile.holds(path, (len(other), zlib.crc32(other), None))
    assert not outfile.holds(path, (len(data) + 1, digest, data + b"x"))
    assert not outfile.holds(tmp_path / "missing.jsonl", (len(data), digest, data))
    assert not outfile.holds(tmp_path, (len(data), digest, data))  # a folder
    link = tmp_path / "link.jsonl"
    link.symlink_to(path)
    assert outfile.holds(link, (len(data), digest, data))  # its target's bytes


def test_a_named_pipe_is_not_read_while_nobody_writes_it(tmp_path: Path) -> None:
    """-o to a named pipe: the check answers at once (then the output goes in place)."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    assert not outfile.holds(pipe, (3, zlib.crc32(b"abc"), b"abc"))
