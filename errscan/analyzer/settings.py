"""The scanned repository's own settings at a commit, read once per commit and kept.

A commit's files never change, so the `[tool.errscan]` and pytest settings read from
them (config.repo_config) are kept in the cache dir as `repo-config/KEY.json`, keyed by
the commit and errscan's build: a rescan spawns no `cat-file` and parses no TOML for
them. An entry that does not read back as settings is read again from the repository.
At most MAX_KEPT entries are kept, the least recently used dropped first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from errscan import config
from errscan.analyzer import files
from errscan.analyzer.gitcmd import Git
from errscan.tempname import write_atomically

MAX_KEPT = 4096  # entries of a few hundred bytes each


def read(git: Git, commit: str, cache_root: Path | None, build: str) -> config.RepoConfig:
    """The settings of the repository at `commit` (kept under `cache_root`, if given)."""
    if cache_root is None:
        return config.repo_config(files.root_files(git, commit, config.REPO_FILES))
    text = json.dumps([commit, config.REPO_FILES, build])
    where = _folder(cache_root) / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"
    with contextlib.suppress(OSError, ValueError):
        kept = config.RepoConfig.from_json(json.loads(where.read_bytes()))
        if kept is not None:
            os.utime(where)  # recently used: pruned last
            return kept
    found = config.repo_config(files.root_files(git, commit, config.REPO_FILES))
    _write(where, found)
    if len(_entries(cache_root)) > MAX_KEPT:
        prune(cache_root, MAX_KEPT)
    return found


def _write(where: Path, found: config.RepoConfig) -> None:
    with contextlib.suppress(OSError):
        where.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(where, json.dumps(found.to_json()).encode("utf-8"))


def _folder(cache_root: Path) -> Path:
    return cache_root / "repo-config"


def _entries(cache_root: Path) -> list[Path]:
    try:
        return [path for path in _folder(cache_root).iterdir() if path.suffix == ".json"]
    except OSError:
        return []


def usage(cache_root: Path) -> tuple[int, int]:
    """How many commits' settings are kept, and their bytes."""
    sizes = []
    for path in _entries(cache_root):
        with contextlib.suppress(OSError):
            sizes.append(path.stat().st_size)
    return len(sizes), sum(sizes)


def prune(cache_root: Path, keep: int) -> int:
    """Drop the least recently used entries until at most `keep` remain: how many went."""
    dated = []
    for path in _entries(cache_root):
        with contextlib.suppress(OSError):
            dated.append((path.stat().st_mtime, path.name, path))
    dated.sort()
    dropped = 0
    for _, _, path in dated[: max(0, len(dated) - keep)]:
        with contextlib.suppress(OSError):
            path.unlink()
            dropped += 1
    return dropped
