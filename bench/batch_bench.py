"""`errscan batch` on 100 repositories: local processes against Ray on this machine.

    python bench/batch_bench.py [--repos 100] [--jobs 2]

Downloads the wheels of 100 PyPI projects once (into ~/.cache/errscan-bench/wheels, out
of this repository), commits each into a throwaway git repository, then runs the batch
cold (an empty cache and store each time) in local mode, then with Ray on a local
cluster started for it (its start-up timed apart, as a cluster is up before a batch),
each run in a process of its own, `--rounds` times. Prints repositories a minute and
records a second of the median run of each, the ratio of Ray's throughput to local
mode's (target: within 20%), and the driver's peak RSS after each quarter of the list
(target: flat).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("ERRSCAN_BENCH_CACHE", Path.home() / ".cache" / "errscan-bench"))

_NAMES = """
requests urllib3 idna certifi charset-normalizer click flask jinja2 markupsafe itsdangerous
werkzeug attrs packaging pyparsing six python-dateutil pytz tzdata pyyaml toml tomli tomlkit
rich pygments markdown-it-py mdurl typing-extensions pluggy iniconfig pytest setuptools wheel
pip virtualenv filelock platformdirs distlib docutils sphinx alabaster babel snowballstemmer
requests-toolbelt httpx httpcore h11 anyio sniffio trio outcome sortedcontainers
exceptiongroup pydantic marshmallow sqlalchemy alembic mako boto3 botocore s3transfer jmespath
pyasn1 rsa cachetools google-auth networkx mpmath decorator ipython traitlets jedi parso
prompt-toolkit wcwidth pexpect ptyprocess asttokens executing pure-eval stack-data
jsonschema referencing isort pycodestyle pyflakes mccabe pylint astroid tomli-w pycparser
paramiko invoke gunicorn uvicorn starlette fastapi websockets redis kombu tqdm colorama
"""
PROJECTS = _NAMES.split()


def wheels(count: int) -> list[Path]:
    folder = CACHE / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    wanted = PROJECTS[:count]
    have = {p.name.split("-")[0].lower().replace("_", "-") for p in folder.glob("*.whl")}
    missing = [name for name in wanted if name.lower().replace("_", "-") not in have]
    if missing:
        command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary",
                   ":all:", "-d", str(folder), *missing]  # fmt: skip
        subprocess.run(command, check=True)
    found = sorted(folder.glob("*.whl"))
    return found[:count]


def repositories(work: Path, count: int) -> list[Path]:
    out = []
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid",
           "PATH": os.environ["PATH"]}  # fmt: skip
    for wheel in wheels(count):
        repo = work / wheel.name.split("-")[0]
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(repo)
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "wheel"]):
            subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
        out.append(repo)
    return out


def one(listing: Path, mode: str, jobs: int, work: Path) -> dict[str, Any]:
    """Run in a process of its own: this process is the driver whose RSS is measured, at
    every quarter of the list."""
    sys.path.insert(0, str(ROOT))
    from errscan import batch

    items = batch.read_list(listing)
    marks: dict[int, float] = {}

    def progress(report: batch.Report) -> None:
        done = len(report.outcomes)
        if done % max(1, len(items) // 4) == 0 or done == len(items):
            marks[done] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    started = time.perf_counter()
    report = batch.run(items, work / "errscan.db", jobs=jobs, cache_dir=work / "cache",
                       ray=None if mode == "local" else mode, progress=progress)  # fmt: skip
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "repos": len(items), "failed": report.failed,
            "records": report.records, "rss_mb": marks,
            "largest": max(o.records for o in report.outcomes)}  # fmt: skip


def measured(listing: Path, mode: str, jobs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="batch-run-") as work:
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(listing), mode, str(jobs), work],
            capture_output=True, text=True, check=True, env=_RAY_ENV,
        )  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


_RAY_ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


def cluster(jobs: int, temp: Path) -> tuple[str, float]:
    """A Ray head node on 127.0.0.1 with `jobs` CPUs: its address, and seconds to start."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.perf_counter()
    subprocess.run(
        ["ray", "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}",
         f"--num-cpus={jobs}", "--include-dashboard=false", "--disable-usage-stats",
         f"--temp-dir={temp}"],
        check=True, capture_output=True, env=_RAY_ENV,
    )  # fmt: skip
    return f"127.0.0.1:{port}", time.perf_counter() - started


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        listing, mode, jobs, folder = sys.argv[2:6]
        print(json.dumps(one(Path(listing), mode, int(jobs), Path(folder))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repos", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each mode; the median")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="batch-bench-") as folder:
        work = Path(folder)
        repos = repositories(work / "repos", options.repos)
        names = work / "list.txt"
        names.write_text("".join(f"{r}\n" for r in repos))
        print(f"{len(repos)} repositories from wheels; {options.jobs} at a time")
        rounds: dict[str, list[dict[str, Any]]] = {"local": [], "ray": []}
        for _ in range(options.rounds):  # before Ray is up
            rounds["local"].append(measured(names, "local", options.jobs))
        address, start = cluster(options.jobs, work / "ray")
        print(f"a local Ray cluster started in {start:.1f} s at {address}")
        try:
            for _ in range(options.rounds):
                rounds["ray"].append(measured(names, address, options.jobs))
        finally:
            subprocess.run(["ray", "stop", "--force"], capture_output=True, env=_RAY_ENV)
        results = {}
        for mode, runs in rounds.items():
            runs.sort(key=lambda run: float(run["seconds"]))
            found = results[mode] = runs[len(runs) // 2]
            times = ", ".join(f"{run['seconds']:.1f}" for run in runs)
            print(f"{mode:>5} runs: {times} s")
            rss = ", ".join(f"{done}: {mb:.0f} MB" for done, mb in found["rss_mb"].items())
            print(f"{mode:>5}: {found['seconds']:.1f} s, "
                  f"{60 * found['repos'] / found['seconds']:.1f} repos/min, "
                  f"{found['records'] / found['seconds']:,.0f} records/s, "
                  f"{found['failed']} failed; driver peak RSS after N repositories "
                  f"({rss}); largest scan {found['largest']:,} records")  # fmt: skip
        ratio = results["local"]["seconds"] / results["ray"]["seconds"]
        print(f"Ray's throughput / local mode's, medians of {options.rounds}: {ratio:.2f} "
              "(target at least 0.80)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
