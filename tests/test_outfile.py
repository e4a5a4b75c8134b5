"""The atomic writer's check that a file holds a stored output already."""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

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


def test_the_replaced_file_is_let_go_of_behind_the_writer(tmp_path: Path) -> None:
    """Renaming over a large file frees its blocks in the rename (7 ms for a 5 MB output on
    ext4): given `behind`, the old file is held open across the rename, and the work
    given to `behind` lets go of it, so that the freeing is done there."""
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"old\n" * 1000)
    old_inode = target.stat().st_ino
    later: list[Callable[[], None]] = []
    outfile.write_bytes([b"new\n"], target, io.StringIO(), behind=later.append)
    assert target.read_bytes() == b"new\n"
    assert len(later) == 1
    held = [
        fd
        for fd in map(int, os.listdir("/proc/self/fd"))
        if _inode(fd) == old_inode  # the replaced file, open here until let go of
    ]
    assert held
    later[0]()
    assert all(_inode(fd) != old_inode for fd in held)
    # nothing to let go of where no file was replaced, nor without `behind`
    fresh = tmp_path / "fresh.jsonl"
    outfile.write_bytes([b"x\n"], fresh, io.StringIO(), behind=later.append)
    outfile.write_bytes([b"y\n"], fresh, io.StringIO())
    assert len(later) == 1 and fresh.read_bytes() == b"y\n"


def _inode(fd: int) -> int | None:
    try:
        return os.fstat(fd).st_ino
    except OSError:
        return None


def test_a_failed_rename_lets_go_of_the_file_it_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"old\n")
    old_inode = target.stat().st_ino
    later: list[Callable[[], None]] = []

    def refused(_src: object, _dst: object) -> None:
        raise PermissionError("no")

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(PermissionError):
        outfile.write_bytes([b"new\n"], target, io.StringIO(), behind=later.append)
    assert later == [] and target.read_bytes() == b"old\n"
    assert not [fd for fd in map(int, os.listdir("/proc/self/fd")) if _inode(fd) == old_inode]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]  # no temp file left
