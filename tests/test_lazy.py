"""Modules loaded on first use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from errscan.lazy import LazyModule


def test_a_lazy_module_loads_on_first_read_and_follows_the_module() -> None:
    script = (
        "import sys\n"
        "from errscan.lazy import LazyModule\n"
        "proxy = LazyModule('errscan.analyzer.diff')\n"
        "before = 'errscan.analyzer.diff' in sys.modules\n"
        "proxy.Diff\n"
        "print(before, 'errscan.analyzer.diff' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout == "False True\n"


def test_what_is_set_on_the_module_later_is_what_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from errscan.analyzer import diff

    proxy = LazyModule("errscan.analyzer.diff")
    assert proxy.text is diff.text

    def stand_in(_changes: diff.Diff) -> str:
        return "stand-in"

    monkeypatch.setattr(diff, "text", stand_in)
    assert proxy.text is stand_in
    with pytest.raises(AttributeError):
        proxy.nothing_here  # noqa: B018


def test_a_module_another_thread_is_loading_is_waited_for(tmp_path: Path) -> None:
    """The command loads the first pass's modules in a thread while the main one asks
    git for the commit (api._load_stages): a read of a module that thread has begun to
    load waits for it, never reads it half made (its names not yet set)."""
    (tmp_path / "slow_to_load.py").write_text(
        "import builtins, time\n"
        "builtins.errscan_test_started.set()\n"
        "time.sleep(0.3)\n"
        "DONE = 'loaded'\n"
    )
    script = (
        "import builtins, sys, threading\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from errscan.lazy import LazyModule\n"
        "builtins.errscan_test_started = threading.Event()\n"
        "loading = threading.Thread(target=__import__, args=('slow_to_load',))\n"
        "loading.start()\n"
        "builtins.errscan_test_started.wait()\n"
        "print('slow_to_load' in sys.modules, LazyModule('slow_to_load').DONE)\n"
        "loading.join()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout == "True loaded\n", done.stderr
