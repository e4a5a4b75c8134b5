"""Throwaway git repositories built from fixtures/repos, with fixed dates so shas are stable."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "repos"
EXPECTED = ROOT / "fixtures" / "expected"

_ENV = {
    "GIT_AUTHOR_NAME": "Fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "Fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **_ENV}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def build_repo(dest: Path, case: str) -> Path:
    """A work tree at `dest` holding fixtures/repos/<case> as its first commit on `main`."""
    shutil.copytree(FIXTURES / case, dest)
    git(dest, "init", "-q", "-b", "main")
    commit_all(dest, "fixture")
    return dest


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def write(repo: Path, path: str, text: str) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def many_errors_repo(dest: Path, files: int = 300, per_file: int = 250) -> Path:
    """A repository large enough that a scan of it can be interrupted midway."""
    dest.mkdir(parents=True)
    git(dest, "init", "-q")
    body = "".join(f"def f{i}(x):\n    raise ValueError(f'{i} {{x}}')\n" for i in range(per_file))
    for i in range(files):
        write(dest, f"m{i:03d}.py", f"# file {i}\n{body}")
    commit_all(dest, "many")
    return dest


def wait_for_results(cache: Path, then: float) -> None:
    """Until a scan has opened its result cache under `cache`, then `then` seconds more."""
    import time

    deadline = time.monotonic() + 30
    while not (cache / "results.sqlite").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(then)


def interruptible() -> None:
    """For subprocess.Popen(preexec_fn=...): Ctrl-C as a terminal sends it. A shell runs
    background jobs with SIGINT ignored, and a Python started so keeps ignoring it, so
    a test that sends SIGINT restores the default first."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def candidate_pattern(template: str) -> re.Pattern[str]:
    """A template's text as a pattern, each `{...}` placeholder any text (no errscan
    code, so a benchmark can measure an older checkout's records with it)."""
    pieces = re.split(r"\{[^{}]*\}", template)
    return re.compile(".*?".join(re.escape(piece) for piece in pieces), re.DOTALL)
