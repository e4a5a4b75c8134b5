"""Modules loaded on first use."""

from __future__ import annotations

import subprocess
import sys

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
