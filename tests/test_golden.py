"""Golden records: each fixture repository's whole scan, compared as text for a reviewable diff."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

import errscan
from errscan.analyzer import output
from tests.support import EXPECTED, build_repo

CASES = ("basic", "messages", "newsyntax")


def golden_result(case: str, tmp: Path) -> errscan.ScanResult:
    repo = build_repo(tmp / case, case)
    return errscan.extract(
        f"{repo}@main", repo_name=f"errscan-fixtures/{case}", cache_dir=tmp / "cache"
    )


def golden_text(case: str, tmp: Path) -> str:
    out = io.StringIO()
    output.write(golden_result(case, tmp), "json", None, out, errscan.__version__)
    return out.getvalue()


# The page `errscan show` makes of one record: the SGLang-shaped site of the basic fixture.
PAGE = ("basic", "pkg/engine.py", 11)


def golden_page(tmp: Path) -> str:
    case, file, line = PAGE
    records = golden_result(case, tmp).records
    record = next(r for r in records if r.file == file and r.line == line)
    return errscan.page(record, records)


@pytest.mark.parametrize("case", CASES)
def test_golden_records(case: str, tmp_path: Path) -> None:
    expected = (EXPECTED / f"{case}.json").read_text(encoding="utf-8")
    assert golden_text(case, tmp_path) == expected, "run scripts/update_golden.py and review"


def test_golden_show_page(tmp_path: Path) -> None:
    expected = (EXPECTED / "show_page.md").read_text(encoding="utf-8")
    assert golden_page(tmp_path) == expected, "run scripts/update_golden.py and review"


def test_every_golden_record_fits_the_shipped_schema(tmp_path: Path) -> None:
    """`errscan schema` prints what the package ships; each golden record fits it, and
    a record with a wrong field does not (the schema is no `{}`)."""
    from click.testing import CliRunner

    from errscan.cli import cli

    printed = CliRunner().invoke(cli, ["schema"])
    schema = json.loads(printed.output)
    assert printed.exit_code == 0 and schema == errscan.record_schema()
    validator = jsonschema.Draft202012Validator(schema)
    count = 0
    for case in CASES:
        for record in json.loads((EXPECTED / f"{case}.json").read_text())["records"]:
            assert not list(validator.iter_errors(record)), (case, record["id"])
            count += 1
    assert count > 90
    bad = {**record, "kind": "explode", "line": 0}
    assert {e.path[0] for e in validator.iter_errors(bad)} == {"kind", "line"}
