"""The command line through click's CliRunner and main(): output, files, exit codes, messages."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import errscan
from errscan import api
from errscan.cli import cli, main
from tests.support import git


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_extract_jsonl_to_stdout(basic_repo: Path) -> None:
    code, out, err = run("extract", f"{basic_repo}@HEAD", "--context", "2")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    records = [line for line in lines if "id" in line]
    assert len(records) == 29
    assert records[0]["commit"] == git(basic_repo, "rev-parse", "HEAD")
    assert records[0]["context"]["end_line"] - records[0]["context"]["start_line"] <= 4
    summary = err.strip().splitlines()
    assert len(summary) == 1
    assert summary[0].startswith("errscan: 6 files scanned, 29 sites, 1 file errors, ")


def test_extract_json_to_file_and_quiet(basic_repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "records.json"
    target.parent.mkdir()
    code, out, err = run("extract", str(basic_repo), "--format", "json", "-o", str(target), "-q")
    assert (code, out, err) == (0, "", "")
    document = json.loads(target.read_text())
    assert document["stats"]["sites"] == 29
    assert [name.name for name in target.parent.iterdir()] == ["records.json"]


def test_a_dash_for_the_output_is_stdout(
    basic_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-o -` writes to standard output, as for other tools: no file named `-`."""
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    db = str(tmp_path / "store.db")
    code, out, _ = run("extract", str(basic_repo), "-q", "-o", "-", "--db", db)
    assert code == 0 and len(out.splitlines()) == 30  # 29 records, a file error
    record_id = next(r["id"] for r in map(json.loads, out.splitlines()) if "id" in r)
    code, out, _ = run("export", str(basic_repo), "--db", db, "-o", "-")
    assert code == 0 and len(out.splitlines()) == 30
    code, out, _ = run("show", record_id, "--db", db, "--format", "json", "-o", "-")
    assert code == 0 and json.loads(out)["record"]["id"] == record_id
    assert list(here.iterdir()) == []


def test_main_returns_exit_codes(basic_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", str(basic_repo), "-q", "--include", "pkg/engine.py"]) == 0
    assert "Engine.__init__" in capsys.readouterr().out
    assert main(["extract", str(basic_repo / "nope")]) == 2
    assert capsys.readouterr().err == f"errscan: error: path not found: {basic_repo / 'nope'}\n"
    assert main(["--version"]) == 0


_LOADED = """
import sys
sys.argv = ["errscan", *sys.argv[1:]]
from errscan.__main__ import main
code = main()
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {"errscan", "click", "git", "libcst"})
print(code, *loaded)
"""


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_loads_nothing_but_the_package(flag: str) -> None:
    # what start-up costs is what it imports: --version answers before click or a stage
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, flag], capture_output=True, text=True, timeout=60
    )
    assert done.stdout == f"errscan, version {errscan.__version__}\n0 errscan errscan.__main__\n"
    # through click too, as part of a longer command line
    assert main([flag]) == 0


_THRESHOLDS = """
import gc, sys
sys.argv = ["errscan", *sys.argv[1:]]
import errscan.cli
errscan.cli.main = lambda: print(*gc.get_threshold()) or 0  # as the command loads
from errscan.__main__ import main
main()
"""


def test_a_scan_loads_its_modules_with_the_collector_tuned_as_the_scan_tunes_it(
    tmp_path: Path,
) -> None:
    """`extract` run afresh loads click and the pipeline with the young generation
    collected every 100,000 objects, as a scan sets it (api.tune_allocator), not every
    700; another command keeps Python's default."""
    cache = str(tmp_path / "cache")
    env = {**os.environ, "ERRSCAN_CACHE_DIR": cache}
    for argv, expected in ((["extract", "nowhere@HEAD"], "100000 50 100"), (["show"], "700 10 10")):
        done = subprocess.run(
            [sys.executable, "-c", _THRESHOLDS, *argv],
            capture_output=True, text=True, timeout=60, env=env,
        )  # fmt: skip
        assert done.stdout.split("\n")[-2] == expected, done.stderr


_REUSED = """
import argparse, ast, resource, sys
from errscan import api
api.tune_allocator()
api._tune_allocator()
with open(argparse.__file__, encoding="utf-8") as module:
    source = module.read()  # some 100 KB of real code
def faults(work):
    work()  # the first time grows the heap
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        work()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
faults(lambda: bytearray(900 * 1024))  # a large file's source, a batch's results
faults(lambda: ast.parse(source))  # the parser's memory, given up after each file
"""


@pytest.mark.skipif(not api.on_glibc(), reason="mallopt is glibc's")
def test_a_scan_reuses_the_memory_it_frees_rather_than_faulting_in_fresh_pages() -> None:
    """As a scan tunes glibc's heap (api.tune_allocator), a buffer under 1 MB freed and
    made again, and the parser's memory, freed after each file, reuse the heap's pages:
    with the 128 KB mmap threshold first chosen, each 900 KB buffer came back as 225
    fresh pages (4,520 page faults in 20 rounds), and 20 parses of argparse.py took
    17,900 (18,400 with 1 MB and glibc's trimming; 47 as tuned)."""
    done = subprocess.run(
        [sys.executable, "-c", _REUSED], capture_output=True, text=True, timeout=120, check=True
    )
    buffers, parses = map(int, done.stdout.split())
    assert buffers < 200 and parses < 2000, done.stdout


_TRIMMED = """
from errscan import api
api.tune_allocator()
api._tune_allocator()
def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 // 2**20
held = [bytes(2048) for _ in range(30_000)]  # 60 MB of the C heap (past pymalloc's 512 B)
held = held[::100]  # one in a hundred kept: the pages freed are between those
before = resident()
api._trim_heap()
print(before, resident())
"""


@pytest.mark.skipif(not api.on_glibc(), reason="malloc_trim is glibc's")
def test_the_heap_freed_before_workers_fork_goes_back_to_the_system() -> None:
    """The tuned heap keeps up to 64 MB freed (api.tune_allocator), which a worker
    forked then would count as its own: _trim_heap gives it back first."""
    done = subprocess.run(
        [sys.executable, "-c", _TRIMMED], capture_output=True, text=True, timeout=120, check=True
    )
    before, after = map(int, done.stdout.split())
    assert before - after > 20, done.stdout


def test_importing_errscan_loads_the_api_on_first_use() -> None:
    import errscan.api

    script = (
        "import sys, errscan; before = 'errscan.api' in sys.modules; errscan.scan_options;"
        "missing = sorted(set(errscan.__all__) - set(dir(errscan)));"
        "print(before, 'errscan.api' in sys.modules, missing)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout == "False True []\n"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        errscan.nothing  # noqa: B018
    assert all(getattr(errscan, name) is getattr(errscan.api, name) for name in errscan.api.__all__)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["extract", "{tmp}/missing@HEAD"], "path not found: {tmp}/missing"),
        (["extract", "{tmp}@HEAD"], "not a git repository: {tmp}"),
        (["extract", "{repo}@nope"], "unknown revision 'nope' in {repo}"),
        (["extract", "{repo}@"], "empty revision in '{repo}@'"),
        (["extract", "{repo}@deadbeef"], "unknown revision 'deadbeef'"),
        (["extract", "file://{repo}"], "a remote repository needs a revision"),
        (["extract", "https://127.0.0.1:9/refused.git@main"], "git ls-remote failed"),
        (["extract", "{repo}", "-o", "{tmp}/missing/out.jsonl"], "output directory not found"),
        (["extract", "{repo}", "--context", "-1"], "Invalid value for '--context'"),
        (["extract", "{repo}", "--format", "xml"], "Invalid value for '--format'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    basic_repo: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    filled = [a.format(tmp=scratch, repo=basic_repo) for a in args]
    code, out, err = run(*filled)
    assert code == 2
    assert out == ""
    assert message.format(tmp=scratch, repo=basic_repo) in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


class _AuthHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="private"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def private_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/private.git"
    server.shutdown()


def test_clone_that_needs_credentials_does_not_prompt(private_server: str) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "errscan", "extract", f"{private_server}@main"],
        capture_output=True,
        text=True,
        stdin=None,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("errscan: error: git ls-remote failed:")
    assert "terminal prompts disabled" in lines[0] or "Authentication" in lines[0]
    assert time.monotonic() - started < 30


def test_internal_error_is_one_line_and_exit_1(
    basic_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errscan.api

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(errscan.api, "scan", broken)
    code, _out, err = run("extract", str(basic_repo))
    assert code == 1
    assert err == "errscan: internal error: RuntimeError: boom second line\n"


def test_python_dash_m_runs(basic_repo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "errscan", "extract", f"{basic_repo}@HEAD", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert len(done.stdout.splitlines()) == 30  # 29 records and one file error


_EXIT_HANDLER = """
import atexit, sys
atexit.register(lambda: print("exit handler ran", file=sys.stderr))
sys.argv = ["errscan", *sys.argv[1:]]
from errscan.__main__ import run
run()
"""


def test_the_command_ends_with_mains_code_its_output_flushed_and_exit_handlers_run(
    basic_repo: Path,
) -> None:
    # run() skips the interpreter's teardown: nothing written or registered may be lost
    for args, code in ([f"{basic_repo}@HEAD", "-q"], 0), ([f"{basic_repo}/nope"], 2):
        done = subprocess.run(
            [sys.executable, "-c", _EXIT_HANDLER, "extract", *args],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == code
        assert done.stderr.endswith("exit handler ran\n")
    assert len(done.stdout.splitlines()) == 0
    piped = subprocess.run(
        [sys.executable, "-c", _EXIT_HANDLER, "extract", f"{basic_repo}@HEAD", "-q"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert len(piped.stdout.splitlines()) == 30 and piped.stdout.endswith("\n")


def test_output_under_a_file_is_one_line_and_exit_2(basic_repo: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, out, err = run("extract", str(basic_repo), "-o", str(blocker / "out.jsonl"))
    assert (code, out) == (2, "")
    assert err.startswith("errscan: error: output directory not found")


def test_locked_cache_is_one_line_and_exit_2(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from errscan import background
    from errscan.analyzer import cache

    assert run("extract", str(basic_repo), "-q")[0] == 0
    background.wait()  # the scan's cache connection closes behind it (background.py)
    monkeypatch.setattr(cache, "_LOCK_WAIT", 0.5)
    holder = sqlite3.connect(_private_cache / "results.sqlite", isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        code, out, err = run("extract", str(basic_repo), "--context", "3")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (code, out) == (2, "")
    assert "locked" in err and len(err.strip().splitlines()) == 1
    assert time.monotonic() - started < 10


def test_every_printing_command_takes_format(basic_repo: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from errscan.cli import cli

    runner = CliRunner()
    db = str(tmp_path / "errscan.db")
    assert (
        runner.invoke(cli, ["extract", str(basic_repo), "--db", db, "-o", os.devnull]).exit_code
        == 0
    )
    listed = runner.invoke(cli, ["scans", "--db", db, "--format", "json"])
    (row,) = json.loads(listed.output)
    assert row["sites"] == 29 and len(row["commit"]) == 40
    text = runner.invoke(cli, ["scans", "--db", db]).output.splitlines()
    assert text[0].startswith("repository  commit") and len(text) == 2
    none = runner.invoke(cli, ["scans", "nobody/nothing", "--db", db])
    assert none.exit_code == 0 and "no scans of nobody/nothing" in none.output
    records = errscan.extract(str(basic_repo)).records
    record = next(r for r in records if r.message and "{" not in r.message and r.related)
    shown = json.loads(
        runner.invoke(cli, ["show", record.id, "--db", db, "--format", "json"]).output
    )
    assert shown["record"]["id"] == record.id and shown["enrichment"] is None
    assert [r["id"] for r in shown["related"]] == list(record.related)
    query = f"{record.exception}: {record.message}"
    as_format = runner.invoke(cli, ["lookup", query, "--db", db, "--format", "json"])
    as_flag = runner.invoke(cli, ["lookup", query, "--db", db, "--json"])
    assert as_format.output == as_flag.output
    assert json.loads(as_format.output)[0]["id"] == record.id


def test_kind_keeps_those_kinds_and_leaves_the_cache_whole(basic_repo: Path) -> None:
    runner = CliRunner()
    everything = errscan.extract(str(basic_repo)).records
    kinds = {r.kind for r in everything}
    assert {"raise", "assert"} <= kinds
    outputs = [
        runner.invoke(cli, ["extract", str(basic_repo), "-q", "--kind", "assert,warning"]).output
        for _ in range(2)  # the second replays the stored output
    ]
    assert outputs[0] == outputs[1]
    found = [json.loads(line) for line in outputs[0].splitlines()]
    records = [row for row in found if "id" in row]
    assert records and {row["kind"] for row in records} <= {"assert", "warning"}
    assert len(records) == sum(1 for r in everything if r.kind in ("assert", "warning"))
    again = errscan.extract(str(basic_repo)).records  # a filtered scan kept every record
    assert [r.id for r in again] == [r.id for r in everything]
    bad = runner.invoke(cli, ["extract", str(basic_repo), "--kind", "explode"])
    assert bad.exit_code == 2 and "unknown kind 'explode'" in bad.output
