"""Cached, replayed and incremental output equals a scan from nothing, byte for byte.

Each scenario makes a repository and its history, and after each step compares the
jsonl that errscan writes with its caches (per-file results, replayed outputs, the
kept state of the last scan) against `use_cache=False`, which shares nothing. A
divergence fails the test; `pytest -s` prints how many comparisons each scenario made.
"""

from __future__ import annotations

import io
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import errscan
import errscan.api
from errscan.analyzer import cache as cache_stage
from errscan.analyzer import scan
from tests.support import ROOT, commit_all, git, many_errors_repo, wait_for_results, write

_COMPARED: Counter[str] = Counter()


@pytest.fixture(autouse=True, scope="module")
def _report() -> Iterator[None]:
    yield
    total = sum(_COMPARED.values())
    print(f"\ndifferential: {len(_COMPARED)} scenarios, {total} comparisons, 0 divergences")
    for name, count in sorted(_COMPARED.items()):
        print(f"  {name}: {count}")


def _jsonl(target: str, **options: object) -> str:
    out = io.StringIO()
    errscan.export(target, "jsonl", stream=out, **options)  # type: ignore[arg-type]
    return out.getvalue()


def _same(scenario: str, target: str, **options: object) -> str:
    """The cached output (whatever the caches hold), then its replay, each equal to a
    scan that uses no cache; gives the output."""
    fresh = _jsonl(target, use_cache=False, **options)
    for _ in ("cached or incremental", "replayed"):
        assert _jsonl(target, **options) == fresh, scenario
        _COMPARED[scenario] += 1
    return fresh


def _init(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    return path


def _module(rng: random.Random, name: str, count: int) -> str:
    lines = ["from pkg.errors import AppError, Other\n", "import os\n"]
    for i in range(count):
        cls = rng.choice(["AppError", "Other", "ValueError", "KeyError"])
        word = rng.choice(["alpha", "bravo", "charlie", "delta", "echo"])
        guard = rng.choice(["", "    if os.environ.get('DEBUG_MODE'):\n    "])
        lines.append(f"def {name}_{i}(x):\n{guard}    raise {cls}(f'{word} {name} {{x}}')\n")
    lines.append(f"raise ImportError('{name} cannot be imported')\n")
    return "".join(lines)


_ERRORS = "class AppError(Exception):\n    '''App.'''\n\nclass Other(AppError):\n    pass\n"


@pytest.mark.parametrize("seed", range(4))
def test_histories_with_renames_copies_and_moves(seed: int, tmp_path: Path) -> None:
    """Random commits that edit, rename (git mv), copy, move files between packages, and
    add or remove an __init__.py (which renames every module below it)."""
    rng = random.Random(seed)
    repo = _init(tmp_path / "repo")
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/errors.py", _ERRORS)
    files = {f"pkg/m{i}.py": f"m{i}" for i in range(4)}
    for path, name in files.items():
        write(repo, path, _module(rng, name, rng.randint(2, 6)))
    commit_all(repo, "start")
    _same("renames, copies, moves", str(repo))
    for step in range(7):
        action = rng.choice(["edit", "rename", "copy", "move", "package"])
        path = rng.choice(sorted(files))
        if action == "edit":
            write(repo, path, _module(rng, files[path], rng.randint(0, 6)))
        elif action in ("rename", "move"):
            folder = "pkg" if action == "rename" else rng.choice(["pkg/sub", "other", "pkg"])
            new = f"{folder}/r{step}.py"
            (repo / new).parent.mkdir(parents=True, exist_ok=True)
            git(repo, "mv", path, new)
            files[new] = files.pop(path)
        elif action == "copy":
            new = f"{rng.choice(['pkg', 'pkg/sub', 'other'])}/c{step}.py"
            write(repo, new, (repo / path).read_text())
            files[new] = files[path]
        else:
            init = rng.choice(["pkg/sub/__init__.py", "other/__init__.py"])
            if (repo / init).exists():
                (repo / init).unlink()
            else:
                write(repo, init, "")
        commit_all(repo, f"{step}: {action}")
        _same("renames, copies, moves", str(repo))


def test_one_blob_at_two_paths(tmp_path: Path) -> None:
    repo = _init(tmp_path / "repo")
    for folder in ("alpha", "beta"):
        write(repo, f"{folder}/__init__.py", "")
        write(repo, f"{folder}/same.py", "raise ImportError('needs numpy')\n")
    commit_all(repo, "twins")
    for _ in range(2):
        output = _same("one blob at two paths", str(repo))
        assert "while importing alpha.same" in output and "while importing beta.same" in output


def test_repo_name_on_and_off_do_not_share_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local folder acme/engine, typed as such, once shared its outputs with the same
    repository under --repo-name acme/engine (pinned links or none, whichever ran first)."""
    shutil.copytree(ROOT / "fixtures" / "repos" / "basic", tmp_path / "acme" / "engine")
    repo = tmp_path / "acme" / "engine"
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "fixture")
    monkeypatch.chdir(tmp_path)
    for name in (None, "acme/engine", None, "acme/engine", str(repo)):
        options = {} if name is None else {"repo_name": name}
        output = _same("--repo-name on and off", "acme/engine@main", **options)
        assert ('"url": "https://github.com/acme/engine/' in output) == (name == "acme/engine")


def _other_python() -> str:
    """An interpreter of another minor version than this one, from pyenv's (3.10 first:
    its builtins lack ExceptionGroup, so records differ from 3.11's)."""
    import pwd

    mine = f"{sys.version_info[0]}.{sys.version_info[1]}."
    roots = [Path(sys.executable).resolve().parents[2], Path(pwd.getpwuid(os.getuid()).pw_dir)]
    found = [p for root in roots for p in sorted(root.glob("3.1[0-9].*/bin/python"))]
    found += sorted(roots[1].glob(".pyenv/versions/3.1[0-9].*/bin/python"))
    others = [str(p) for p in found if not p.parent.parent.name.startswith(mine)]
    assert others, "needs a second Python 3.10+ (pyenv's, as on this project's machines)"
    return others[0]


_EXPORT = (
    "import io, sys, errscan\n"
    "out = io.StringIO()\n"
    "errscan.export(sys.argv[1], 'jsonl', stream=out, use_cache=sys.argv[2] == '1')\n"
    "sys.stdout.write(out.getvalue())\n"
)


def test_two_pythons_sharing_one_cache(basic_repo: Path, tmp_path: Path) -> None:
    """`ast.unparse` and float sums differ between interpreters: neither may reuse the
    other's results, outputs or kept state."""
    write(basic_repo, "pkg/groups.py", "raise ExceptionGroup('eg', [ValueError(1)])\n")
    commit_all(basic_repo, "a builtin of some Pythons only")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ERRSCAN_CACHE_DIR": str(tmp_path / "c")}
    outputs = {}
    for python in (sys.executable, _other_python(), sys.executable, _other_python()):
        for cached in ("0", "1"):
            done = subprocess.run(
                [python, "-c", _EXPORT, str(basic_repo), cached],
                env=env, capture_output=True, text=True, timeout=300, check=True,
            )  # fmt: skip
            outputs[cached] = done.stdout
        assert outputs["1"] == outputs["0"], python
        _COMPARED["two Pythons, one cache"] += 1


@pytest.mark.parametrize(
    "column", ["data", "summary", "names", "features", "checks", "size", "used", "key"]
)
def test_a_damaged_value_in_any_column(column: str, basic_repo: Path, _private_cache: Path) -> None:
    _same(f"damaged {column}", str(basic_repo))
    shutil.rmtree(_private_cache / "outputs")  # the replayed outputs, and the kept
    shutil.rmtree(_private_cache / "state")  # state: the results must be read
    db = sqlite3.connect(_private_cache / "results.sqlite")
    rng = random.Random(column)
    rows = db.execute("SELECT rowid FROM results").fetchall()
    for (rowid,) in rows:
        if column in ("size", "used"):
            value: object = rng.choice([-1, 0, 2**62, "x"])
        elif column == "key":
            value = f"{rng.getrandbits(64):x}"
        else:
            value = rng.choice([b"[]", b"{}", b"null", b"\x00garbage", b""])
        db.execute(f"UPDATE results SET {column} = ? WHERE rowid = ?", (value, rowid))
    db.commit()
    db.close()
    _same(f"damaged {column}", str(basic_repo))


def test_a_prune_racing_a_scan(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another errscan prunes everything between the two passes of this one."""
    write(basic_repo, "pkg/more.py", "from pkg.engine import Engine\nraise ValueError('x')\n")
    commit_all(basic_repo, "more")
    fresh = _jsonl(str(basic_repo), use_cache=False)
    real = scan.prepare

    def then_prune(*args: object, **kwargs: object) -> scan.Scanner:
        scanner = real(*args, **kwargs)  # type: ignore[arg-type]
        errscan.prune_cache(_private_cache, 0)
        return scanner

    monkeypatch.setattr(scan, "prepare", then_prune)
    for _ in range(2):  # the first scan's output, then its kept state and replay
        assert _jsonl(str(basic_repo)) == fresh
        _COMPARED["a prune racing a scan"] += 1
    monkeypatch.undo()
    _same("a prune racing a scan", str(basic_repo))


def test_deep_expressions_in_a_process_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers fork from a deep stack: a guard of 320 terms once became a file error there."""
    monkeypatch.setattr(scan, "_POOL_MIN_BYTES", 0)
    repo = _init(tmp_path / "repo")
    terms = " + ".join(["x"] * 320)
    for i in range(8):
        write(
            repo,
            f"m{i}.py",
            f"def f(x):\n    if {terms} > {i}:\n        raise ValueError('deep {i}')\n",
        )
    commit_all(repo, "deep")
    fresh = _jsonl(str(repo), use_cache=False, jobs=1)
    assert fresh.count('"message": "deep') == 8
    for jobs in (2, 2, 1):
        assert _jsonl(str(repo), jobs=jobs) == fresh
        _COMPARED["deep expressions in a pool"] += 1


def test_a_sigkill_mid_scan(tmp_path: Path) -> None:
    repo = many_errors_repo(tmp_path / "repo", files=200, per_file=200)
    cache = tmp_path / "killed-cache"
    command = [sys.executable, "-m", "errscan", "extract", str(repo), "-q", "-o", os.devnull,
               "--context", "1", "--cache-dir", str(cache)]  # fmt: skip
    for pause in (0.2, 0.6):
        proc = subprocess.Popen(command, start_new_session=True)
        wait_for_results(cache, pause)
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: workers too
        proc.wait()
        fresh = _jsonl(str(repo), use_cache=False, context=1)
        assert _jsonl(str(repo), cache_dir=cache, context=1) == fresh
        _COMPARED["a SIGKILL mid-scan"] += 1
    assert cache_stage.ResultCache.open(cache, errscan.api._BUILD, 1).info().entries >= 200
