"""How much of a real project's errors errscan resolves: messages found, by form.

    python bench/message_stats.py [--packages pip SQLAlchemy] [--target REPO@REV]

Builds a throwaway repository from the packages' PyPI wheels (or scans --target), then
prints per top-level package: raise sites, the share with a non-null message, the count
per message_source over every site, and the share of raises whose exception class
resolved to a qualified name.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import build_corpus

import errscan


def report(result: errscan.ScanResult) -> None:
    groups: dict[str, list[errscan.ErrorRecord]] = defaultdict(list)
    for record in result.records:
        groups[record.file.split("/", 1)[0]].append(record)
    for name, records in sorted(groups.items()):
        raises = [r for r in records if r.kind == "raise"]
        with_message = sum(r.message is not None for r in raises)
        qualified = sum(r.exception_qualname is not None for r in raises)
        kinds = Counter(r.kind for r in records)
        sources = Counter(r.message_source for r in records)
        by_kind = ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        print(f"{name}: {len(records)} sites ({by_kind})")
        if raises:
            print(f"  raise sites with a message: {with_message}/{len(raises)} "
                  f"({with_message / len(raises):.1%})")  # fmt: skip
            print(f"  raise sites with a resolved exception class: {qualified}/{len(raises)} "
                  f"({qualified / len(raises):.1%})")  # fmt: skip
        print("  message_source: " + ", ".join(f"{s} {n}" for s, n in sources.most_common()))
    print(f"file errors: {len(result.file_errors)}")
    for error in result.file_errors:
        print(f"  {error.file}: {error.reason}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=["pip", "SQLAlchemy"])
    parser.add_argument("--target", help="scan this REPO@REV instead of PyPI wheels")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="errscan-stats-") as tmp:
        target = options.target or str(build_corpus(options.packages, Path(tmp)))
        result = errscan.extract(target, include_tests=True, cache_dir=Path(tmp) / "cache")
        print(f"{target} at {result.commit[:12]}: {result.stats.files} files")
        report(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
