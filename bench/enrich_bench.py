"""Enrichment of a real repository's stored scan against the test server.

    python bench/enrich_bench.py [--library packaging] [--concurrency 4] [--page PATH]

Commits an installed library's files (the wheel's contents) into a throwaway repository,
stores its scan, then runs `errscan enrich` against tests/test_enrichment.py's
chat-completions server on 127.0.0.1 (which answers from the facts it is sent, with 20
tokens out and 100 in per request), twice: the second run must ask nothing. Prints the
requests, tokens and time of each run, and writes one record's page, with its three
sections, as Markdown to --page.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import real_tracebacks  # noqa: E402
from tests.test_enrichment import Model  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--library", default="packaging", choices=sorted(real_tracebacks.LIBRARIES))
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--page", type=Path, default=Path("enriched-page.md"))
    options = parser.parse_args()
    server = Model()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="enrich-bench-") as work:
        repo = real_tracebacks.library_repo(Path(work) / "repo", options.library)
        db = Path(work) / "errscan.db"
        env = {**os.environ, "ERRSCAN_CACHE_DIR": str(Path(work) / "cache")}
        errscan = [sys.executable, "-m", "errscan"]
        subprocess.run([*errscan, "extract", str(repo), "--db", str(db), "-q", "-o", os.devnull],
                       check=True, env=env)  # fmt: skip
        for run in ("first run", "second run"):
            asked = server.requests
            started = time.perf_counter()
            done = subprocess.run(
                [*errscan, "enrich", "--db", str(db), "--endpoint", server.url, "--model",
                 "test-model", "--concurrency", str(options.concurrency)],
                env=env, capture_output=True, text=True,
            )  # fmt: skip
            seconds = time.perf_counter() - started
            print(f"{run}: exit {done.returncode}, {server.requests - asked} requests in "
                  f"{seconds:.1f} s; {done.stderr.strip().splitlines()[-1]}")  # fmt: skip
        with sqlite3.connect(db) as connection:
            (record_id,) = connection.execute(
                "SELECT record_id FROM enrichments ORDER BY record_id LIMIT 1"
            ).fetchone()
            records = connection.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        package = real_tracebacks.LIBRARIES[options.library][0][0]
        print(f"{records} records stored of {real_tracebacks.package_dir(package)}")
        page = subprocess.run([*errscan, "show", record_id, "--db", str(db)], env=env,
                              check=True, capture_output=True, text=True).stdout  # fmt: skip
        options.page.write_text(page, encoding="utf-8")
        print(f"page of {record_id} written to {options.page}")
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
