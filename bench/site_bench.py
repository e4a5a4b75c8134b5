"""Speed and memory of `errscan site`: a site of 20,000 errors, its search index included.

    python bench/site_bench.py [--errors 20000 5000 ...] [--jobs N]

For each size, builds a repository of generated modules (20 errors a file, each its
own message, guards and context), scans it into a store, then times, each in a fresh
process: --full-runs full builds into an empty folder (its search index included; the
median counts, and the largest peak RSS), a rebuild of the unchanged store, and a
rebuild after each of --commits commits that change 10 files (other files each time)
was scanned into the store, each build after what was written before is flushed to
disk. Prints pages (errors) per second, the peak RSS of the
building process and of its largest child (a page worker), and the median rebuild's
time as a share of the full build's; then how peak RSS grows from the smallest size to
each larger one.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import git

_PER_FILE = 10  # functions a file, two errors each: 20 errors a file, as in real code
_BUILD = r"""
import json, resource, sys, time
start = time.perf_counter()
import errscan
report = errscan.build_site(sys.argv[1], sys.argv[2], jobs=int(sys.argv[3]) or None)
seconds = time.perf_counter() - start
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": seconds, "main_kb": own, "child_kb": children,
                  "errors": report.errors, "written": report.written}))
"""


def module(index: int, version: int = 0) -> str:
    lines = [f'"""Generated module {index}."""', "import os", ""]
    for i in range(_PER_FILE):
        word = ("load", "parse", "open", "check", "send")[i % 5]
        lines += [
            f"def {word}_{index}_{i}(value, path=None):",
            f"    if os.environ.get('GEN_{index % 7}_FLAG') and value is None:",
            f"        raise ValueError(f'cannot {word} item {i} of module {index}: {{value!r}}')",
            f"    if value == {i}:",
            f"        raise KeyError('item {i} of {index} is not supported (v{version})')",
            "    return value",
            "",
        ]
    return "\n".join(lines)


def make_repo(root: Path, errors: int) -> Path:
    repo = root / "repo"
    (repo / "pkg").mkdir(parents=True)
    for index in range(errors // (_PER_FILE * 2)):
        (repo / "pkg" / f"m{index:04d}.py").write_text(module(index))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "generated")
    return repo


def scan(repo: Path, db: Path, cache: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "errscan", "extract", f"{repo}@HEAD", "-q", "-o", os.devnull,
         "--db", str(db), "--repo-name", "bench/site", "--cache-dir", str(cache)],
        check=True,
    )  # fmt: skip


def build(site: Path, db: Path, jobs: int) -> dict[str, float]:
    # errscan as installed, its modules compiled once (pip compiles them at install;
    # an editable checkout under PYTHONDONTWRITEBYTECODE would compile them every run)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    os.sync()  # what the steps before wrote on disk first, not flushed during this build
    done = subprocess.run(
        [sys.executable, "-c", _BUILD, str(site), str(db), str(jobs)],
        check=True, capture_output=True, text=True, env=env,
    )  # fmt: skip
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--errors", type=int, nargs="+", default=[20_000, 5_000])
    parser.add_argument("--jobs", type=int, default=0, help="page workers [the CPUs]")
    parser.add_argument("--commits", type=int, default=5, help="10-file commits, each rebuilt")
    parser.add_argument("--full-runs", type=int, default=3, help="full builds, the median counts")
    options = parser.parse_args()
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs"
    print(f"machine: {machine}, Python {platform.python_version()}")
    peaks: dict[int, dict[str, float]] = {}
    for errors in options.errors:
        root = Path(tempfile.mkdtemp(prefix="errscan-site-bench-"))
        try:
            repo = make_repo(root, errors)
            db, cache, site = root / "errscan.db", root / "cache", root / "site"
            scan(repo, db, cache)
            fulls = []
            for _ in range(options.full_runs):  # each into an empty folder
                shutil.rmtree(site, ignore_errors=True)
                fulls.append(build(site, db, options.jobs))
            full = sorted(fulls, key=lambda run: run["seconds"])[len(fulls) // 2]
            full = {**full, "main_kb": max(run["main_kb"] for run in fulls),
                    "child_kb": max(run["child_kb"] for run in fulls)}  # fmt: skip
            again = build(site, db, options.jobs)
            rebuilds = []
            for commit in range(1, options.commits + 1):  # commits that change 10 files each
                for index in range(10):
                    number = index * 3 + commit - 1
                    path = repo / "pkg" / f"m{number:04d}.py"
                    path.write_text(module(number, version=commit))
                git(repo, "commit", "-q", "-am", "change 10 files")
                scan(repo, db, cache)
                rebuilds.append(build(site, db, options.jobs))
            incremental = sorted(rebuilds, key=lambda run: run["seconds"])[len(rebuilds) // 2]
            count = int(full["errors"])
            times = ", ".join(f"{run['seconds']:.2f}" for run in fulls)
            print(f"{count} errors: full build {full['seconds']:.2f} s (the median of {times} s), "
                  f"{count / full['seconds']:.0f} pages a second (search index included); "
                  f"peak RSS main {full['main_kb'] / 1024:.1f} MB, "
                  f"largest child {full['child_kb'] / 1024:.1f} MB")  # fmt: skip
            print(f"  unchanged store: {again['seconds']:.2f} s, {int(again['written'])} files "
                  f"written")  # fmt: skip
            share = incremental["seconds"] / full["seconds"]
            each = ", ".join(f"{run['seconds']:.2f}" for run in rebuilds)
            print(f"  after a 10-file commit: {incremental['seconds']:.2f} s ({share:.1%} of the "
                  f"full build; the median of {len(rebuilds)} commits: {each} s), "
                  f"{int(incremental['written'])} files written")  # fmt: skip
            print(f"  targets: >= 400 pages/s: {count / full['seconds'] >= 400}; "
                  f"incremental < 5%: {share < 0.05}")  # fmt: skip
            peaks[count] = full
        finally:
            shutil.rmtree(root, ignore_errors=True)
    small = min(peaks)
    for large in sorted(peaks)[1:]:
        growth = peaks[large]["main_kb"] / peaks[small]["main_kb"]
        child = peaks[large]["child_kb"] / peaks[small]["child_kb"]
        print(f"peak RSS, {large} errors against {small}: main {growth:.2f}x, child {child:.2f}x "
              f"(1.00: flat)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
