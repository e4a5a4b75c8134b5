"""Lookup speed: single lookups against a 50,000-record scan, and `lookup --log` on a log.

    python bench/lookup_bench.py [--records 50000] [--log-mb 200]

Builds a throwaway repository of generated modules whose raises hold varied templates,
scans it, compiles its TemplateIndex, then prints:
- the time to compile the index, and to load it back from its compiled form (what
  `lookup --scan/--db/--from` keep in the cache);
- queries a second for single lookups of runtime messages of those templates;
- MB a second for scanning a synthetic log (mostly ordinary lines, one error in 500,
  a traceback in 5,000), and the process's peak RSS before and after, which must not
  grow with the log's size.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import errscan  # noqa: E402
from errscan.logs import Summary, scan_log  # noqa: E402
from errscan.matching import TemplateIndex  # noqa: E402

_STEMS = ("par", "con", "val", "key", "row", "job", "net", "dis", "map", "ref")
_ENDS = ("ser", "fig", "ue", "word", "data", "queue", "work", "k", "ping", "erence",
         "al", "ium", "ant", "ure", "ise", "ity", "ment", "ness", "ive", "ory")  # fmt: skip
_WORDS = [stem + end for stem in _STEMS for end in _ENDS]  # 200 words: a dense vocabulary
_CLASSES = ("ValueError", "KeyError", "RuntimeError", "TypeError", "OSError")


def _template(rng: random.Random) -> str:
    words = rng.sample(_WORDS, rng.randint(3, 7))
    for _ in range(rng.randint(0, 3)):
        words.insert(rng.randint(0, len(words)), "{x}")
    return " ".join(words)


def build(folder: Path, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """A repository of `count` raise sites; (class, template) of each."""
    sites = []
    per_module = 500
    for m in range(0, count, per_module):
        lines = []
        for i in range(m, min(m + per_module, count)):
            cls, text = rng.choice(_CLASSES), _template(rng)
            sites.append((cls, text))
            lines.append(f"def f{i}(x):\n    raise {cls}(f'{text}')\n")
        (folder / f"mod{m // per_module:04d}.py").write_text("".join(lines))
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid",
           "PATH": "/usr/bin:/bin"}  # fmt: skip
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "generated"]):
        subprocess.run(["git", "-C", str(folder), *args], check=True, env=env)
    return sites


def message(cls: str, template: str, rng: random.Random) -> str:
    text = template.replace("{x}", str(rng.randint(0, 10**6)))
    return f"{cls}: {text!r}" if cls == "KeyError" else f"{cls}: {text}"


def write_log(path: Path, megabytes: int, sites: list[tuple[str, str]], rng: random.Random) -> int:
    """A log of about `megabytes` MB; how many errors it holds."""
    noise = [f"2026-12-03 10:{i % 60:02d}:00 INFO request {i} handled in {i % 97} ms "
             f"path=/api/v1/items/{i} status=200" for i in range(997)]  # fmt: skip
    traceback = ('Traceback (most recent call last):\n  File "/srv/app/mod0001.py", line 4, '
                 "in f1\n    raise ValueError(x)\n")  # fmt: skip
    errors = 0
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        i = 0
        while written < megabytes << 20:
            lines = []
            for _ in range(500):
                lines.append(noise[i % len(noise)])
                i += 1
            cls, text = rng.choice(sites)
            if i % 5000 < 500:
                lines.append(traceback + message(cls, text, rng))
            else:
                lines.append(f"2026-12-03 10:00:00 ERROR {message(cls, text, rng)}")
            errors += 1
            chunk = "\n".join(lines) + "\n"
            out.write(chunk)
            written += len(chunk)
    return errors


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--log-mb", type=int, default=200)
    options = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="lookup-bench-") as work:
        repo = Path(work) / "repo"
        repo.mkdir()
        sites = build(repo, options.records, rng)
        started = time.perf_counter()
        records = list(errscan.extract(str(repo), use_cache=False, context=0).records)
        print(f"scanned {len(records):,} records in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        index = TemplateIndex(records)
        built = time.perf_counter() - started
        print(f"index built in {built:.2f} s; peak RSS {_rss_mb():.0f} MB")
        compiled = index.compiled()
        started = time.perf_counter()
        loaded = TemplateIndex.load(records, compiled)
        seconds = time.perf_counter() - started
        assert loaded is not None
        print(f"compiled index ({len(compiled) / 1e6:.1f} MB) loaded back in {seconds:.2f} s: "
              f"{seconds / built:.2f}x of building it")  # fmt: skip
        queries = [message(*rng.choice(sites), rng) for _ in range(options.queries)]
        started = time.perf_counter()
        hits = sum(1 for q in queries if index.lookup(q) and index.lookup(q)[0].kind == "full")
        seconds = time.perf_counter() - started
        print(f"single lookups: {2 * len(queries) / seconds:,.0f} a second "
              f"({hits}/{len(queries)} with a full match first)")  # fmt: skip
        log = Path(work) / "app.log"
        errors = write_log(log, options.log_mb, sites, rng)
        size = log.stat().st_size / (1 << 20)
        before = _rss_mb()
        summary = Summary()
        started = time.perf_counter()
        with open(log, "rb") as stream:
            found = sum(1 for _ in scan_log(stream, index, summary))
        seconds = time.perf_counter() - started
        print(f"log: {size:.0f} MB, {errors:,} errors written, {found:,} found, "
              f"{summary.unmatched:,} unmatched: {size / seconds:.1f} MB a second; "
              f"peak RSS {before:.0f} MB before, {_rss_mb():.0f} MB after")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
