"""Time and memory of one hostile file each, scanned alone in a fresh process.

    python bench/hostile.py

Prints, per file: its size, the seconds and peak RSS of a plain `ast.parse` of it and of
errscan's `scan_file` (parse, LibCST where ast refuses it, extraction), their ratio, the
output's size, and what errscan made of it. Each file once cost minutes or gigabytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _elifs(n: int) -> str:
    branches = "".join(
        f"    {'if' if i == 0 else 'elif'} x == {i}:\n        raise ValueError('case {i}')\n"
        for i in range(n)
    )
    return f"def f(x):\n{branches}"


def _doubling(n: int) -> str:
    return "def f(x):\n    msg = 'a' + x\n" + "    msg += msg\n" * n + "    raise ValueError(msg)\n"


CASES: dict[str, Callable[[], str]] = {
    "PEP 701 line + 10,000 `not`": lambda: 'x = f"{"a"}"\ny = ' + "not " * 10_000 + "z\n",
    "200 KB of blank lines + syntax error": lambda: "\n" * 200_000 + "x = = 1\n",
    "run of 200,000 capitals in a message": lambda: f"raise ValueError('{'A' * 200_000}')\n",
    "`msg += msg` 12 times": lambda: _doubling(12),
    "`f'{1:100000000}'` x 3": lambda: "raise ValueError(f'{1:100000000}')\n" * 3,
    "900 `elif` branches": lambda: _elifs(900),
    "400,000 lines of `x=1` (the most parsed)": lambda: "x=1\n" * 400_000,
    "20 MB of `x=1` (over the limits)": lambda: "x=1\n" * 5_000_000,
    "1 MB message literal": lambda: f"raise ValueError('{'ab' * 500_000}')\n",
}

_MEASURE = """
import json, resource, sys, time
path = sys.argv[1]
data = open(path, "rb").read()
if sys.argv[2] == "ast":
    import ast
else:
    from errscan.analyzer import cache
    from errscan.analyzer.scan import scan_file
start = time.perf_counter()
if sys.argv[2] == "ast":
    try:
        ast.parse(data)
        outcome = "parsed"
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        outcome = type(exc).__name__
    size = 0
else:
    result = scan_file("hostile.py", data, 2, 60.0)
    size = len(cache.encode(result)[0])
    outcome = result.error.reason[:70] if result.error else f"{len(result.sites)} sites"
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps([seconds, max(peak, kids), size, outcome]))
"""


def measure(path: Path, how: str) -> tuple[float, float, int, str]:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), how],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    if done.returncode != 0:
        return float("nan"), float("nan"), 0, f"exit {done.returncode}"
    seconds, peak, size, outcome = json.loads(done.stdout)
    return seconds, peak, size, outcome


def main() -> int:
    head = ["file", "bytes", "ast.parse s", "errscan s", "ratio", "peak MB (ast, errscan)",
            "out KB", "errscan's result"]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    with tempfile.TemporaryDirectory() as folder:
        for name, make in CASES.items():
            path = Path(folder) / "hostile.py"
            path.write_text(make(), encoding="utf-8")
            base = measure(path, "ast")
            ours = measure(path, "errscan")
            ratio = ours[0] / base[0] if base[0] else float("nan")
            print(
                f"| {name} | {path.stat().st_size:,} | {base[0]:.3f} | {ours[0]:.3f} | "
                f"{ratio:.1f} | {base[1]:.0f}, {ours[1]:.0f} | {ours[2] / 1024:.1f} | {ours[3]} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
