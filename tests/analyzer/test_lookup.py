"""Lookups stay linear whatever templates a store holds: no backtracking, no quadratic score."""

from __future__ import annotations

import difflib

import pytest

import errscan
from errscan.analyzer.lookup import _matches


def _records(*messages: str) -> list[errscan.ErrorRecord]:
    source = "".join(
        f"def f{i}(a, b):\n    raise ValueError({m})\n" for i, m in enumerate(messages)
    )
    return errscan.extract_source(source)


ADJACENT = "f'" + "{a}" * 16 + "!'"  # 16 placeholders side by side
SPACED = "f'" + " ".join(["{a}"] * 30) + " end'"  # 30 placeholders among words


@pytest.mark.parametrize(
    ("parts", "message", "expected"),
    [
        ([("a", None), (None, "x"), ("b", None)], "a-b", True),
        ([("a", None), (None, "x"), ("b", None)], "ab", True),
        ([("a", None), (None, "x"), ("b", None)], "ba", False),
        ([(None, "x"), ("ab", None), (None, "y"), ("ab", None)], "abab", True),
        ([(None, "x"), ("ab", None), (None, "y"), ("ab", None)], "aba", False),
        ([("x", None), (None, "y"), ("x", None)], "x", False),  # prefix and suffix overlap
        ([("plain", None)], "plain", True),
        ([("plain", None)], "plainer", False),
        ([(None, "x")], "", True),
    ],
)
def test_a_template_matches_as_its_regular_expression_would(
    parts: list[tuple[str | None, str | None]], message: str, expected: bool
) -> None:
    assert _matches(parts, message) is expected


def test_hostile_templates_and_messages_do_not_hang_a_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Adjacent placeholders once backtracked for minutes; difflib took 24 s on 185 KB."""
    scored: list[int] = []
    real = difflib.SequenceMatcher

    def spy(isjunk: None, a: str, b: str, autojunk: bool) -> difflib.SequenceMatcher[str]:
        scored.append(max(len(a), len(b)))
        return real(isjunk, a, b, autojunk=autojunk)

    monkeypatch.setattr(difflib, "SequenceMatcher", spy)
    records = _records(ADJACENT, SPACED, "'a b ' * 3")
    for query in [
        "ValueError: " + "z" * 40,
        "ValueError: " + " ".join(["word"] * 40),
        "ValueError: " + "a b " * 46_000,  # 185 KB
    ]:
        errscan.lookup(query, records)
    assert scored and max(scored) <= 2000
    found = errscan.lookup("ValueError: " + " ".join(["w"] * 30) + " end", records)
    assert [m.record.message for m in found if m.kind == "full"] == [SPACED[2:-1]]
