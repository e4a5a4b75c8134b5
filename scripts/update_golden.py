"""Rewrite fixtures/expected/*.json from the fixture repositories; review the diff after."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_golden import CASES, golden_page, golden_text


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            path = Path(__file__).resolve().parent.parent / "fixtures" / "expected" / f"{case}.json"
            path.write_text(golden_text(case, Path(tmp)), encoding="utf-8")
            print(f"wrote {path}")
        page = Path(__file__).resolve().parent.parent / "fixtures" / "expected" / "show_page.md"
        page.write_text(golden_page(Path(tmp) / "page"), encoding="utf-8")
        print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
