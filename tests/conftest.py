"""Shared fixtures: a fixture repository and a private clone cache per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import build_repo


@pytest.fixture
def basic_repo(tmp_path: Path) -> Path:
    return build_repo(tmp_path / "basic", "basic")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the user's cache."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ERRSCAN_CACHE_DIR", str(cache))
    return cache
