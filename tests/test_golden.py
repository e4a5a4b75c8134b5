"""Golden records: each fixture repository's whole scan, compared as text for a reviewable diff."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import errscan
from errscan.analyzer import output
from tests.support import EXPECTED, build_repo

CASES = ("basic", "messages", "newsyntax")


def golden_text(case: str, tmp: Path) -> str:
    repo = build_repo(tmp / case, case)
    result = errscan.extract(
        f"{repo}@main", repo_name=f"errscan-fixtures/{case}", cache_dir=tmp / "cache"
    )
    out = io.StringIO()
    output.write(result, "json", None, out, errscan.__version__)
    return out.getvalue()


@pytest.mark.parametrize("case", CASES)
def test_golden_records(case: str, tmp_path: Path) -> None:
    expected = (EXPECTED / f"{case}.json").read_text(encoding="utf-8")
    assert golden_text(case, tmp_path) == expected, "run scripts/update_golden.py and review"
