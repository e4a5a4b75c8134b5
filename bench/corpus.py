"""A throwaway git repository of real Python code, built from PyPI wheels.

A wheel carries a package's .py sources and downloads in seconds (an sdist would have
pip build its metadata first). Nothing of it is ever committed to errscan.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        env={**os.environ, **_ENV},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def build_corpus(packages: list[str], root: Path) -> Path:
    wheels = root / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary",
            ":all:",
            "-d",
            str(wheels),
            *packages,
        ],
        check=True,
    )
    repo = root / "corpus"
    repo.mkdir()
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if name.endswith((".py", ".pyi")):
                    archive.extract(name, repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "corpus")
    return repo
