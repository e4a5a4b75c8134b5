"""Temp names for atomic writes: new files only, private to the user."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from errscan import tempname


def test_each_name_is_a_new_private_file(tmp_path: Path) -> None:
    made = [tempname.mkstemp(".out.", ".tmp", tmp_path) for _ in range(50)]
    for fd, _ in made:
        os.close(fd)
    paths = [Path(path) for _, path in made]
    assert len(set(paths)) == 50 and all(p.parent == tmp_path for p in paths)
    assert all(p.name.startswith(".out.") and p.name.endswith(".tmp") for p in paths)
    assert {stat.S_IMODE(p.stat().st_mode) for p in paths} == {0o600}


def test_a_taken_name_is_never_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = tmp_path / "x000000000000.tmp"
    taken.write_text("someone else's")
    monkeypatch.setattr(os, "urandom", lambda n: bytes(n))  # every try: the taken name
    with pytest.raises(FileExistsError):
        tempname.mkstemp("x", ".tmp", tmp_path)
    assert taken.read_text() == "someone else's"
