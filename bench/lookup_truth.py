"""Lookup on real tracebacks: installed libraries called wrongly, looked up against
records of their own files, and how often the site that raised comes first.

    python bench/lookup_truth.py [--errscan DIR]

The cases are tests/real_tracebacks.py's (packaging, attrs, PyYAML, markdown-it-py,
sortedcontainers, pluggy, Markdown, iniconfig, Jinja2, as the test environment
installs them). `--errscan DIR` runs another checkout's errscan (an older commit in a
git worktree, say) on the same tracebacks, for a before/after figure.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--errscan", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every miss")
    options = parser.parse_args()
    sys.path.insert(0, str(options.errscan.resolve()))
    import errscan  # from the checkout measured; its submodules follow errscan.__path__

    sys.path[0] = str(ROOT)  # and the cases from this one
    from tests import real_tracebacks

    print(f"errscan from {Path(errscan.__file__).parent.parent}")
    tries: Counter[str] = Counter()
    firsts: Counter[str] = Counter()
    anywhere: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="lookup-truth-") as work:
        records: dict[str, list[errscan.ErrorRecord]] = {}
        for library in real_tracebacks.LIBRARIES:
            repo = real_tracebacks.library_repo(Path(work) / library, library)
            found = errscan.extract(str(repo), cache_dir=Path(work) / "cache")
            records[library] = list(found.records)
        for library, name, call in real_tracebacks.CASES:
            raised = real_tracebacks.run(library, call)
            origin = raised.origin(records[library])
            truth = [origin] if origin is not None else []
            tries[library] += 1
            matches = errscan.lookup(raised.text, records[library])
            ids = [m.record.id for m in matches]
            hit = bool(truth) and bool(ids) and ids[0] == truth[0].id
            firsts[library] += hit
            anywhere[library] += bool(truth) and truth[0].id in ids
            if options.verbose and not hit:
                top = f"{matches[0].record.file}:{matches[0].record.line}" if matches else "none"
                where = f"{origin.file}:{origin.line}" if origin else f"no site {raised.places}"
                print(f"  miss {library} {name}: raised at {where}, "
                      f"first {top} of {len(matches)}")  # fmt: skip
    print(f"{'library':<18} {'cases':>5} {'top-1':>6} {'listed':>6}")
    for library in tries:
        print(f"{library:<18} {tries[library]:>5} {firsts[library]:>6} {anywhere[library]:>6}")
    total, first, listed = sum(tries.values()), sum(firsts.values()), sum(anywhere.values())
    print(f"{'all':<18} {total:>5} {first:>6} {listed:>6}   top-1 {first / total:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
