"""Shared fixtures: a fixture repository and a private clone cache and store per test.

Before any test runs, HOME, the XDG cache folder and ERRSCAN_CACHE_DIR point into a
folder of this session's own, set in os.environ itself, and so does the working folder
(where the default store, errscan.db, is): a test that undoes its monkeypatching falls
back on these, never on the user's cache, store or home.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.support import build_repo

_SESSION = Path(tempfile.mkdtemp(prefix="errscan-tests-"))
atexit.register(shutil.rmtree, _SESSION, ignore_errors=True)
os.environ.update(
    HOME=str(_SESSION / "home"),
    XDG_CACHE_HOME=str(_SESSION / "xdg-cache"),
    ERRSCAN_CACHE_DIR=str(_SESSION / "cache"),
)
os.environ.pop("ERRSCAN_DB", None)


@pytest.fixture(autouse=True, scope="session")
def _session_folder() -> None:
    """The working folder of the whole session, set once collection is done (testpaths
    are read from the folder pytest started in)."""
    (_SESSION / "cwd").mkdir(exist_ok=True)
    # the configuration the commands find, going up from the working folder: no settings
    (_SESSION / "errscan.toml").write_text("# the tests' own: no settings\n")
    os.chdir(_SESSION / "cwd")


@pytest.fixture
def basic_repo(tmp_path: Path) -> Path:
    return build_repo(tmp_path / "basic", "basic")


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """No test reads or writes the user's cache or store, nor another test's: each runs in
    a working folder of its own (beside tmp_path, which tests list)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ERRSCAN_CACHE_DIR", str(cache))
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    return cache
