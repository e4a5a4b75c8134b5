"""Templates of a package's own exception classes against what Python makes of them.

    python bench/class_truth.py [PACKAGE ...]

For each package (a PyPI wheel, committed into a throwaway repository), errscan scans
it; then, for every record that raises a class of a module (not a builtin) through a
call of the class itself whose arguments are all literals (`raise PoolError(None,
"Pool is closed.")`; a factory's call is left out), this script imports the class,
builds the exception from those arguments in a child
process and checks that str() fullmatches one of the record's templates. It runs the
package's code (its classes' __init__ and __str__), never errscan: a check of reading
classes, beside bench/runtime_truth.py's test suites. Prints, per package, the
records checked and those whose template matched, and the misses.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import build_corpus

from tests.support import candidate_pattern

DEFAULT = ["urllib3", "httpx", "requests", "rich", "docutils", "tomlkit", "jsonschema", "click"]

# run in a child whose path holds the package: each record's class built, str() printed
_BUILD = r"""
import ast, importlib, json, sys
root = sys.argv[1]
sys.path.insert(0, root)
trees = {}
for line in sys.stdin:
    record = json.loads(line)
    path = record["file"]
    if path not in trees:
        trees[path] = ast.parse(open(f"{root}/{path}", encoding="utf-8").read())
    call = next((n.exc for n in ast.walk(trees[path]) if isinstance(n, ast.Raise)
                 and n.lineno == record["line"] and isinstance(n.exc, ast.Call)), None)
    if call is None or any(isinstance(a, ast.Starred) for a in call.args):
        continue
    func = call.func
    callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if callee != record["exception_qualname"].rpartition(".")[2]:
        continue  # a factory's call (make_error(...)): its arguments are not the class's
    try:
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
        module, _, name = record["exception_qualname"].rpartition(".")
        text = str(getattr(importlib.import_module(module), name)(*args, **kwargs))
    except Exception:
        continue  # not literals, or a class that will not be built so
    print(json.dumps({"id": record["id"], "text": text}), flush=True)
"""


def check(package: str, root: Path) -> tuple[int, int, list[str]]:
    repo = build_corpus([package], root)
    out = root / "records.jsonl"
    subprocess.run(
        [sys.executable, "-m", "errscan", "extract", str(repo), "-q", "--no-cache",
         "-o", str(out)],
        check=True,
    )  # fmt: skip
    records = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        qualname = record.get("exception_qualname") or ""
        if (
            record.get("kind") == "raise"
            and record.get("message") is not None
            and (qualname and not qualname.startswith("builtins."))
        ):
            records[record["id"]] = record
    built = subprocess.run(
        [sys.executable, "-c", _BUILD, str(repo)],
        input="".join(json.dumps(r) + "\n" for r in records.values()),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    checked = matched = 0
    misses = []
    for line in built.stdout.splitlines():
        done = json.loads(line)
        record = records[done["id"]]
        checked += 1
        templates = record["message_candidates"] or [record["message"]]
        if any(candidate_pattern(t).fullmatch(done["text"]) for t in templates):
            matched += 1
        else:
            misses.append(f"{record['file']}:{record['line']} {record['exception_qualname']}: "
                          f"{record['message']!r} vs {done['text']!r}")  # fmt: skip
    return checked, matched, misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", default=DEFAULT)
    options = parser.parse_args()
    total = right = 0
    for package in options.packages:
        root = Path(tempfile.mkdtemp(prefix="errscan-class-truth-"))
        try:
            checked, matched, misses = check(package, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        total, right = total + checked, right + matched
        print(f"{package}: {matched}/{checked} templates fullmatch str() of the class built")
        for miss in misses:
            print(f"  {miss[:200]}")
    share = f"{right / total:.1%}" if total else "-"
    print(f"all: {right}/{total} ({share})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
