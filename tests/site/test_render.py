"""The renderer's compiled templates, kept in errscan's cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from errscan.site import render


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache folder of its own, and environments made anew."""
    monkeypatch.setenv("ERRSCAN_CACHE_DIR", str(tmp_path / "cache"))
    render.environment.cache_clear()
    yield tmp_path / "cache" / "templates"
    render.environment.cache_clear()


def _page() -> str:
    return render.render("404.html", root="/", version="9.9")


def test_a_compiled_template_is_kept_and_loaded_instead_of_compiled(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _page()
    kept = list(fresh.rglob("*.bin"))
    assert kept and "all repositories" in made
    render.environment.cache_clear()
    compiled: list[str] = []
    original = render.environment().compile

    def compile_(*args: object, **kwargs: object) -> object:
        compiled.append(str(args[1] if len(args) > 1 else kwargs.get("name")))
        return original(*args, **kwargs)

    monkeypatch.setattr(render.environment(), "compile", compile_)
    assert _page() == made and compiled == []  # loaded, not compiled


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "constant"])
def test_a_damaged_compiled_template_is_compiled_again(fresh: Path, damage: str) -> None:
    made = _page()
    for path in fresh.rglob("*.bin"):
        data = path.read_bytes()
        if damage == "flip":
            data = data[:40] + bytes([data[40] ^ 0xFF]) + data[41:]
        # "constant": code that still loads, and would print other text
        constant = data.replace(b"all repositories", b"all repositorieZ")
        path.write_bytes({"flip": data, "truncate": data[: len(data) // 2], "empty": b"",
                          "constant": constant}[damage])  # fmt: skip
    render.environment.cache_clear()
    assert _page() == made
    render.environment.cache_clear()
    assert _page() == made  # and kept whole again


def test_a_cache_that_cannot_be_written_only_costs_the_compiling(fresh: Path) -> None:
    fresh.parent.mkdir(parents=True)
    fresh.write_text("a file where the folder goes")
    assert "all repositories" in _page()
