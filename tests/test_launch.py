"""A rerun of an `extract` command line, answered from its stored output before click
loads (errscan.launch): the same bytes as the full way, and the full way again wherever
an input it read changed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import errscan
from errscan import build, launch
from errscan.analyzer.repo import Commit
from tests.support import commit_all, git, write

# the command as the entry point runs it; then whether click (the full way) was loaded
_RUN = """
import sys
sys.argv = ["errscan", *sys.argv[1:]]
from errscan.__main__ import main
code = main()
sys.stdout.flush()
print(f"\\n{code} {'click' in sys.modules}", file=sys.stderr)
"""


def _extract(*args: str, cwd: Path | None = None) -> tuple[str, str, bool]:
    """stdout, stderr (the exit line taken off) and whether the full way ran."""
    done = subprocess.run(
        [sys.executable, "-c", _RUN, "extract", *args],
        capture_output=True, text=True, timeout=120, cwd=cwd,
    )  # fmt: skip
    err, _, last = done.stderr.rstrip("\n").rpartition("\n")
    code, full = last.split()
    assert code == "0", done.stderr
    return done.stdout, err, full == "True"


def _records(out: str, key: str) -> set[str]:
    """The values of `key` in the records of a jsonl output (its file errors left out)."""
    rows = (json.loads(line) for line in out.splitlines())
    return {row[key] for row in rows if row.get("type") != "file_error"}


def _summary(err: str) -> str:
    """The summary line, its seconds left out."""
    return re.sub(r"[0-9.]+s$", "Ns", err.strip())


def test_a_rerun_writes_the_stored_bytes_before_click_loads(
    basic_repo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "records.jsonl"
    first_out, first_err, full = _extract(f"{basic_repo}@HEAD", "-o", str(out))
    assert full and first_out == ""
    written = out.read_bytes()
    assert len(written.splitlines()) == 30
    for _ in range(2):
        out.write_bytes(b"stale")
        again_out, again_err, full = _extract(f"{basic_repo}@HEAD", "-o", str(out))
        assert again_out == ""
        assert not full
        assert out.read_bytes() == written
        assert _summary(again_err) == _summary(first_err)
        assert _summary(first_err) == "errscan: 6 files scanned, 29 sites, 1 file errors, Ns"
    # to stdout, quiet: the same bytes there, nothing on stderr
    piped, err, full = _extract(f"{basic_repo}@HEAD", "-q")
    assert full and piped.encode() == written and err == ""
    piped, err, full = _extract(f"{basic_repo}@HEAD", "-q")
    assert not full and piped.encode() == written and err == ""


_LOADED = """
import sys
heavy = ("click", "subprocess", "hashlib", "_hashlib", "errscan.api", "errscan.cli",
         "json", "pathlib", "contextlib", "importlib.util", "signal", "re", "enum")
for name in heavy:  # loaded as the interpreter started (an editable install's finder)
    sys.modules.pop(name, None)
sys.argv = ["errscan", *sys.argv[1:]]
from errscan.__main__ import main
code = main()
sys.stdout.flush()
print(code, *sorted(name for name in heavy if name in sys.modules), file=sys.stderr)
"""


def test_a_rerun_loads_neither_click_nor_subprocess_nor_openssl(
    basic_repo: Path, tmp_path: Path
) -> None:
    """What a warm rerun imports is most of its time: git is spawned without the
    subprocess module, and digests are BLAKE2b from CPython's own module, not
    hashlib's (which loads OpenSSL). Nor json, pathlib, contextlib or signal (whose
    enums load enum and re): notes and counts are packed, paths are strings."""
    out = tmp_path / "records.jsonl"
    command = [sys.executable, "-c", _LOADED, "extract", f"{basic_repo}@HEAD", "-o", str(out)]
    first = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert first.stderr.splitlines()[-1].split()[0] == "0"
    assert "click" in first.stderr.splitlines()[-1].split()  # the full way
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert again.stderr.splitlines()[-1].split() == ["0"], again.stderr


def test_git_commands_run_at_once_report_each_status_and_output(tmp_path: Path) -> None:
    from errscan.analyzer import gitcmd

    env = gitcmd.environment(scanned=True)
    missing = str(tmp_path / "no-such-program")
    answers = gitcmd.outputs(
        [["git", "--version"], [missing], ["git", "-C", str(tmp_path), "rev-parse"]], env
    )
    assert answers[0] is not None and answers[0][0] == 0
    assert answers[0][1].startswith(b"git version ")
    assert answers[1] is None  # could not start
    assert answers[2] is not None and answers[2][0] != 0  # not a repository
    slow = gitcmd.outputs([["sleep", "5"]], env, timeout=0.2)
    assert slow == [None]  # killed past its time


def test_an_output_file_holding_the_bytes_already_is_left_as_it_is(
    basic_repo: Path, tmp_path: Path
) -> None:
    """A rerun to the file it wrote before writes nothing (the same inode, the same
    modification time); to a file of the same size but other bytes, writes them."""
    out = tmp_path / "records.jsonl"
    _, _, full = _extract(f"{basic_repo}@HEAD", "-o", str(out))
    assert full
    written = out.read_bytes()
    os.utime(out, ns=(10**18, 10**18))
    before = out.stat()
    _, _, full = _extract(f"{basic_repo}@HEAD", "-o", str(out))
    after = out.stat()
    assert not full and out.read_bytes() == written
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    damaged = bytearray(written)
    damaged[10] ^= 1
    out.write_bytes(bytes(damaged))
    _, _, full = _extract(f"{basic_repo}@HEAD", "-o", str(out))
    assert not full and out.read_bytes() == written
    # a link to the file: its target holds the bytes, and stays a link
    link = tmp_path / "link.jsonl"
    link.symlink_to(out)
    _extract(f"{basic_repo}@HEAD", "-o", str(link))
    assert link.is_symlink() and out.read_bytes() == written


def test_a_new_commit_goes_the_full_way(basic_repo: Path) -> None:
    first, _, _ = _extract(f"{basic_repo}@HEAD", "-q")
    write(basic_repo, "pkg/extra.py", "def f():\n    raise KeyError('added')\n")
    sha = commit_all(basic_repo, "one more")
    second, _, full = _extract(f"{basic_repo}@HEAD", "-q")
    assert full and second != first
    assert _records(second, "commit") == {sha}
    assert len(second.splitlines()) == len(first.splitlines()) + 1
    # then this commit's rerun is answered again
    third, _, full = _extract(f"{basic_repo}@HEAD", "-q")
    assert not full and third == second


def test_another_origin_remote_goes_the_full_way(basic_repo: Path) -> None:
    _extract(f"{basic_repo}@HEAD", "-q")
    git(basic_repo, "remote", "add", "origin", "https://github.com/owner/renamed.git")
    out, _, full = _extract(f"{basic_repo}@HEAD", "-q")
    assert full
    assert _records(out, "repo") == {"owner/renamed"}


def test_a_remote_that_is_a_folder_is_checked_where_it_leads(
    basic_repo: Path, tmp_path: Path
) -> None:
    # origin = ../up/link, a folder named through a symbolic link: the records name the
    # folder it leads to, so a link that now leads elsewhere is a change
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    git(basic_repo, "remote", "add", "origin", str(tmp_path / "link"))
    first, _, _ = _extract(f"{basic_repo}@HEAD", "-q")
    assert _records(first, "repo") == {str(tmp_path / "a")}
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(tmp_path / "b")
    second, _, full = _extract(f"{basic_repo}@HEAD", "-q")
    assert full
    assert _records(second, "repo") == {str(tmp_path / "b")}


def test_a_configuration_file_that_appears_or_changes_goes_the_full_way(
    basic_repo: Path, tmp_path: Path
) -> None:
    cwd = tmp_path / "work" / "here"
    cwd.mkdir(parents=True)
    (tmp_path / "work" / ".git").mkdir()  # the top of the project: the search stops there
    first, _, _ = _extract(f"{basic_repo}@HEAD", "-q", cwd=cwd)
    (cwd.parent / "errscan.toml").write_text("kinds = ['assert']\n")
    second, _, full = _extract(f"{basic_repo}@HEAD", "-q", cwd=cwd)
    assert full and second != first
    assert _records(second, "kind") == {"assert"}
    (cwd.parent / "errscan.toml").write_text("kinds = ['raise']\n")
    third, _, full = _extract(f"{basic_repo}@HEAD", "-q", cwd=cwd)
    assert full
    assert _records(third, "kind") == {"raise"}
    fourth, _, full = _extract(f"{basic_repo}@HEAD", "-q", cwd=cwd)
    assert not full and fourth == third


def test_a_damaged_stored_output_or_note_goes_the_full_way(
    basic_repo: Path, _private_cache: Path
) -> None:
    first, _, _ = _extract(f"{basic_repo}@HEAD", "-q")
    (stored,) = (_private_cache / "outputs").glob("*.out")
    data = bytearray(stored.read_bytes())
    data[100] ^= 1
    stored.write_bytes(bytes(data))
    second, _, full = _extract(f"{basic_repo}@HEAD", "-q")
    assert full and second == first
    for note in (_private_cache / "launches").glob("*.note"):
        note.write_text('{"version": 1, "root": 3}')
    third, _, full = _extract(f"{basic_repo}@HEAD", "-q")
    assert full and third == first


def test_options_the_note_does_not_cover_go_the_full_way(basic_repo: Path, tmp_path: Path) -> None:
    _extract(f"{basic_repo}@HEAD", "-q")
    # another command line is another note; --no-cache and --db never leave one
    for args in (["--context", "2"], ["--no-cache"], ["--db", str(tmp_path / "s.db")]):
        _extract(f"{basic_repo}@HEAD", "-q", *args)
        _, _, full = _extract(f"{basic_repo}@HEAD", "-q", *args)
        assert full == (args[0] != "--context")


def test_a_remote_repository_is_never_noted(tmp_path: Path) -> None:
    commit = Commit(str(tmp_path / "clone.git"), "a" * 40, "owner/name", None)
    launch.remember(["extract", "owner/name@" + "a" * 40], tmp_path, commit, "e" * 32,
                    output=None, quiet=True, configs=[])  # fmt: skip
    assert not (tmp_path / "launches").exists()


def test_the_build_signature_follows_every_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "errscan"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("A = 1\n")
    monkeypatch.setattr(build, "_PACKAGE", package)
    seen = {build.signature()}
    (package / "sub" / "b.py").write_text("B = 1\n")  # a new source
    seen.add(build.signature())
    os.utime(package / "a.py", ns=(0, 0))  # another time, the content as it was
    seen.add(build.signature())
    (package / "a.py").write_text("A = 2\n")
    seen.add(build.signature())
    assert len(seen) == 4
    (package / "sub" / "__pycache__").mkdir()
    (package / "sub" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"\0")
    assert build.signature() in seen  # bytecode is not a source
    assert [os.path.basename(path) for path in build._sources()] == ["a.py", "b.py"]
    ident = build.ident()
    (package / "a.py").write_text("A = 3\n")
    assert build.ident() != ident


@given(st.lists(st.sampled_from(["/", "//", ".", "..", "a", "b c", "~", "~root", "~x.y", "é"])))
def test_a_cache_folder_is_named_as_the_api_names_it(parts: list[str]) -> None:
    """launch names the cache folder without pathlib (a warm rescan loads none), as
    str(Path(text).expanduser()) does: slashes, `.` parts, `~` and `~user`."""
    text = "".join(parts)
    if not text:
        return
    try:
        wanted: str | None = str(Path(text).expanduser())
    except RuntimeError:  # no such user
        wanted = None
    try:
        found: str | None = launch._as_path(text)
    except ValueError:
        found = None
    assert found == wanted


def test_the_cache_folder_is_found_as_the_command_finds_it(tmp_path: Path) -> None:
    environ = {"ERRSCAN_CACHE_DIR": str(tmp_path / "env"), "XDG_CACHE_HOME": "/x"}
    assert launch.cache_root(["extract", "r", "--cache-dir", "/c"], environ) == "/c"
    assert launch.cache_root(["extract", "r", "--cache-dir=/d"], environ) == "/d"
    assert launch.cache_root(["extract", "r"], environ) == str(tmp_path / "env")
    assert launch.cache_root(["extract", "r"], {"XDG_CACHE_HOME": "/x"}) == "/x/errscan"


def test_the_notes_are_bounded_and_pruned_with_the_cache(
    basic_repo: Path, _private_cache: Path
) -> None:
    for context in range(3):  # three command lines, three notes
        _extract(f"{basic_repo}@HEAD", "-q", "--context", str(context))
    notes = _private_cache / "launches"
    assert len(list(notes.glob("*.note"))) == 3
    assert launch.prune(_private_cache, 2) == 1
    assert len(list(notes.glob("*.note"))) == 2
    dropped, _ = errscan.prune_cache(_private_cache, max_bytes=0)
    assert dropped >= 2 and not list(notes.glob("*.note"))
    _, _, full = _extract(f"{basic_repo}@HEAD", "-q", "--context", "2")
    assert full


def test_an_output_written_in_place_goes_the_full_way(basic_repo: Path) -> None:
    # a device or a pipe is written as it is, so a shortcut failing half way would have
    # the full way write it a second time: never taken there
    for _ in range(2):
        _, _, full = _extract(f"{basic_repo}@HEAD", "-q", "-o", os.devnull)
        assert full


def test_ident_worked_out_ahead_is_ident_s_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "_ahead", [])
    monkeypatch.setattr(build, "_worked_out", [])
    expected = build._ident()
    build.ident_ahead()
    build.ident_ahead()  # asked twice: worked out once
    assert build.ident() == expected == build.ident()


def test_ident_worked_out_ahead_gives_its_error_to_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreadable() -> str:
        raise PermissionError("a source cannot be read")

    monkeypatch.setattr(build, "_ahead", [])
    monkeypatch.setattr(build, "_worked_out", [])
    monkeypatch.setattr(build, "_ident", unreadable)
    build.ident_ahead()
    with pytest.raises(PermissionError, match="cannot be read"):
        build.ident()
