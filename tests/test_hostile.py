"""Hostile repositories: every file is extracted or a file error, nothing runs, nothing leaks.

Small cases are files under fixtures/repos/hostile; large, binary and oddly named ones
are made here, into the same throwaway repository.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import errscan
from errscan.analyzer import scan
from tests.analyzer.test_isolated import CRASHER
from tests.support import (
    build_repo,
    commit_all,
    git,
    interruptible,
    many_errors_repo,
    wait_for_results,
    write,
)


def add_generated(repo: Path, tmp_path: Path) -> None:
    pad = "#" * 190
    big = "".join(
        f"def f{i}(x):\n    {pad}\n    if x == {i}:\n        raise ValueError(f'case {i}: {{x}}')\n"
        for i in range(20_000)
    )
    assert len(big) > 5_000_000
    write(repo, "gen/big.py", big)  # over 5 MB, 20,000 raise sites
    write(repo, "gen/minified.py", "x=1;" * 250_000 + "raise ValueError('minified')\n")
    write(repo, "gen/long_line.py", f"x = '{'a' * 200_000}'\nraise ValueError('after')\n")
    write(repo, "gen/deep_expr.py", f"x = {'1+' * 100_000}1\n")
    write(repo, "gen/parens.py", "x = " + "(" * 5_000 + "1" + ")" * 5_000 + "\n")
    ifs = "".join("    " * i + f"if a{i}:\n" for i in range(2_000))
    write(repo, "gen/ifs.py", ifs + "    " * 2_000 + "raise ValueError('deep')\n")
    (repo / "gen" / "crlf.py").write_bytes(b"x = 1\r\n\r\nraise ValueError('crlf')\r\n")
    (repo / "gen" / "cr.py").write_bytes(b"x = 1\r\rraise ValueError('lone cr')\r")
    (repo / "gen" / "nul.py").write_bytes(b"raise ValueError('x')\x00\n")
    (repo / "gen" / "binary.py").write_bytes(bytes(range(256)) * 64)
    for name in ("with space.py", "ünïcödé.py", "new\nline.py"):
        write(repo, f"names/{name}", f"raise ValueError({name!r})\n")
    (repo / ".gitattributes").write_text("*.py filter=unconfigured-driver\n")
    outside = tmp_path / "outside.py"
    outside.write_text("raise ValueError('outside the commit')\n")
    os.symlink(outside, repo / "gen" / "link_out.py")
    os.symlink("/etc/passwd", repo / "gen" / "passwd.py")
    os.symlink("loop.py", repo / "gen" / "loop.py")
    commit_all(repo, "generated")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'2' * 40},gen/submodule.py")
    commit_all(repo, "gitlink")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    repo = build_repo(tmp_path / "hostile", "hostile")
    add_generated(repo, tmp_path)
    return repo


EXPECTED_ERRORS = {
    "pkg/syntax_error.py": "syntax error (line 1)",
    "pkg/python2.py": "(Python 2 code?)",
    "pkg/utf16.py": "cannot decode",
    "pkg/lfs.py": "Git LFS pointer",
    "gen/parens.py": "too many nested parentheses",
    "gen/ifs.py": "too many levels of indentation",
    "gen/nul.py": "null bytes",
    "gen/binary.py": "",
}
if sys.version_info >= (3, 11):  # 3.10's parser builds a tree of 100,000 levels, which is read
    EXPECTED_ERRORS["gen/deep_expr.py"] = "recursion"
EXPECTED_MESSAGES = {
    "pkg/latin1.py": "café crème",
    "pkg/cp1252.py": "€ price “quoted”",
    "pkg/bom.py": "after a BOM",
    "pkg/tabs.py": "indented with tabs",
    "weird.py/inner.py": "inside a folder named weird.py",
    "gen/minified.py": "minified",
    "gen/long_line.py": "after",
    "gen/crlf.py": "crlf",
    "gen/cr.py": "lone cr",
    "names/with space.py": "with space.py",
    "names/ünïcödé.py": "ünïcödé.py",
    "names/new\nline.py": "new\nline.py",
}


def test_every_file_is_extracted_or_an_error(hostile: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    before = {p: git(hostile, *p.split()) for p in ("status --porcelain", "rev-parse HEAD")}
    out = cwd / "records.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "errscan", "extract", f"{hostile}@HEAD", "--include-tests",
         "--context", "2", "-o", str(out)],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    errors = {line["file"]: line["reason"] for line in lines if line.get("type") == "file_error"}
    records = [line for line in lines if "id" in line]
    for path, reason in EXPECTED_ERRORS.items():
        assert reason in errors.pop(path), path
    assert errors == {}
    by_file: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_file.setdefault(str(record["file"]), []).append(record)
    for path, message in EXPECTED_MESSAGES.items():
        assert [r["message"] for r in by_file[path]] == [message], path
    assert len(by_file["gen/big.py"]) == 20_000
    assert by_file["gen/crlf.py"][0]["line"] == 3 and by_file["gen/cr.py"][0]["line"] == 3
    assert all(
        len(line) <= 402
        for line in str(by_file["gen/minified.py"][0]["context"]["code"]).split("\n")
    )
    # links, gitlinks and what was never committed are not read; nothing ran
    assert not {"gen/link_out.py", "gen/passwd.py", "gen/loop.py", "gen/submodule.py"} & set(
        by_file
    )
    assert sorted(os.listdir(cwd)) == ["records.jsonl"]
    assert not list(hostile.glob("MARKER*")) and not list(Path.cwd().glob("MARKER*"))
    after = {p: git(hostile, *p.split()) for p in ("status --porcelain", "rev-parse HEAD")}
    assert after == before


def test_marker_files_are_never_run_even_with_cwd_in_the_repo(hostile: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "errscan", "extract", ".", "-q", "--include-tests", "-o",
         os.devnull],
        cwd=hostile, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not list(hostile.rglob("MARKER*"))


def test_time_limit_turns_a_slow_file_into_an_error_that_is_not_kept(
    basic_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = scan._scan

    def slow(path: str, data: bytes | str, radius: int, partial: bool) -> object:
        if path == "pkg/engine.py":
            time.sleep(5)
        return original(path, data, radius, partial)

    monkeypatch.setattr(scan, "_scan", slow)
    first = errscan.extract(str(basic_repo), jobs=1, file_timeout=0.2)
    assert [e.reason for e in first.file_errors if e.file == "pkg/engine.py"] == [
        "timed out after 0.2 s"
    ]
    monkeypatch.setattr(scan, "_scan", original)
    second = errscan.extract(str(basic_repo), jobs=1, file_timeout=0.2)
    assert "pkg/engine.py" in {r.file for r in second.records}  # scanned again, not cached


def test_interrupt_leaves_no_half_output_and_a_second_run_succeeds(tmp_path: Path) -> None:
    repo = many_errors_repo(tmp_path / "many")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "records.jsonl"
    cache = tmp_path / "interrupted-cache"
    command = [sys.executable, "-m", "errscan", "extract", str(repo), "-o", str(out), "-q",
               "--context", "0", "--cache-dir", str(cache)]  # fmt: skip
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    wait_for_results(cache, 0.3)  # into the scan of 300 files, far from its end
    assert proc.poll() is None, "the scan ended before the interrupt"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err == "errscan: interrupted\n"
    assert os.listdir(out_dir) == []
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert len(out.read_text().splitlines()) == 300 * 250


ONE_LINERS = {
    "overflow.py": 'raise ValueError("%c" % -1)\n',
    "tokens.py": 'raise ValueError(("\\x0099\\x00" + x).strip())\n',
    "surrogate.py": 'raise ValueError("\\ud800")\n',
    "wide.py": 'raise ValueError(f"{1:100000000}")\n',
    "crash.py": CRASHER,  # syntax newer than any Python errscan runs on: LibCST reads it
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_no_one_file_stops_a_scan(tmp_path: Path, jobs: str) -> None:
    """Each of these once ended the whole scan (exit 1, or 139 from inside LibCST)."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    for name, text in ONE_LINERS.items():
        write(repo, name, text)
    (repo / "x\\xff.py").write_text("raise ValueError('one')\n")  # named as the next reads
    (repo / os.fsdecode(b"x\xff.py")).write_text("raise ValueError('two')\n")
    commit_all(repo, "one-liners")
    out = tmp_path / "out.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "errscan", "extract", str(repo), "-j", jobs, "-o", str(out),
         "--cache-dir", str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    messages = {line["file"]: line["message"] for line in lines if "id" in line}
    errors = {line["file"]: line["reason"] for line in lines if "id" not in line}
    assert messages == {
        "overflow.py": "{-1:c}",
        "tokens.py": "\x0099\x00{x}",
        "surrogate.py": "\\ud800",
        "wide.py": "{1:100000000}",
        "x\\xff.py": "one",
    }
    assert "LibCST crashed" in errors.pop("crash.py")
    assert errors == {"x\\xff.py": "file name is not UTF-8: not read"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "out.jsonl", "r"]


def test_sigterm_cleans_up_as_ctrl_c_does(tmp_path: Path) -> None:
    """`timeout`, a CI cancel or systemd send SIGTERM to errscan alone: no temp output, no
    temp folder, no pool worker may outlive it."""
    repo = many_errors_repo(tmp_path / "many")
    out_dir, temp = tmp_path / "out", tmp_path / "tmp"
    out_dir.mkdir()
    temp.mkdir()
    cache = tmp_path / "terminated-cache"
    command = [sys.executable, "-m", "errscan", "extract", str(repo), "-o", str(out_dir / "r"),
               "-q", "-j", "2", "--context", "0", "--cache-dir", str(cache)]  # fmt: skip
    proc = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(temp)}
    )
    wait_for_results(cache, 0.3)
    assert proc.poll() is None, "the scan ended before SIGTERM"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err == "errscan: terminated\n"
    assert os.listdir(out_dir) == [] and os.listdir(temp) == []
    time.sleep(0.5)
    survivors = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if str(cache).encode() in cmdline:
            survivors.append(entry.name)
    assert survivors == []
