"""Many repositories at once: on this machine's cores, or as Ray tasks on a cluster.

items = read_list(Path("repos.txt"))     # REPO@REV lines, or a TOML of [[repos]] tables
report = run(items, db, jobs=4)          # or ray="auto" / "HOST:PORT" / "" for a local Ray

Each repository is scanned where it runs (a forked process here, a Ray task there; one
file process each, the parallelism being the repositories) and comes back as one
compressed JSON document. The driver stores each scan as it arrives, one transaction
each, marked done for this batch (the list's digest) in that same transaction, so a
batch run again after an interruption skips what it stored. It holds at most a few
documents at a time.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import multiprocessing
import os
import signal
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import errscan
from errscan import background
from errscan.analyzer import repo
from errscan.analyzer import store as store_stage
from errscan.errors import InputError
from errscan.frozen import frozen
from errscan.models import FileError, ScanStats

# options a list's line leaves to the scanned repository's configuration and the defaults
_DEFAULTS: dict[str, Any] = {}
TASK_MEMORY = 2 << 30  # what a Ray task declares: a large repository's scan fits in it


@frozen
class Item:
    target: str  # REPO@REV
    options: dict[str, Any] = field(default_factory=lambda: dict(_DEFAULTS))

    @property
    def key(self) -> str:
        return json.dumps([self.target, errscan.scan_options(**self.options)])


@dataclass
class Outcome:
    target: str
    status: str  # scanned, done before (this batch stored it already), failed
    repo: str = ""
    commit: str = ""
    records: int = 0
    file_errors: int = 0
    seconds: float = 0.0
    attempts: int = 0
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k != "error"}
        if self.error:
            data["error"] = self.error
        return data


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    total: int = 0
    running: int = 0
    started: float = field(default_factory=time.monotonic)
    interrupted: bool = False

    @property
    def failed(self) -> int:
        return sum(1 for o in self.outcomes if o.status == "failed")

    @property
    def records(self) -> int:
        return sum(o.records for o in self.outcomes)

    @property
    def eta(self) -> float | None:
        finished = len(self.outcomes)
        if not finished:
            return None
        return (time.monotonic() - self.started) / finished * (self.total - finished)

    def to_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for outcome in self.outcomes:
            counts[outcome.status] = counts.get(outcome.status, 0) + 1
        return {
            "summary": {"repositories": self.total, **counts, "records": self.records,
                        "seconds": round(time.monotonic() - self.started, 3),
                        "interrupted": self.interrupted},
            "repos": [o.to_dict() for o in self.outcomes],
        }  # fmt: skip


def read_list(path: Path) -> list[Item]:
    """REPO@REV lines (# comments and blank lines allowed), or, for a .toml file, the
    [[repos]] tables `track` reads (repo, branch or rev, and the scan options)."""
    if path.suffix == ".toml":
        from errscan.track import load_config

        tracked, _ = load_config(path)
        return [Item(f"{t.repo}@{t.rev}", dict(t.options)) for t in tracked]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            parsed = repo.parse_target(line)
            repo.check_address(parsed.repo)
        except InputError as exc:
            raise InputError(f"{path}:{number}: {exc}") from None
        items.append(Item(line if "@" in line else f"{line}@HEAD"))
    if not items:
        raise InputError(f"{path}: no repositories")
    return items


def batch_key(items: Sequence[Item]) -> str:
    """What names a batch: its list, each entry with its options."""
    text = json.dumps(sorted(item.key for item in items))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def scan_one(target: str, options: dict[str, Any], cache_dir: str | None) -> bytes:
    """One repository scanned where this runs, compressed: a first line of JSON (repo,
    commit, its date, counts, file errors; or the reason it could not be scanned, bad
    input not worth a retry), then each record as the store keeps it, a line each."""
    try:
        running = errscan.scan(target, cache_dir=cache_dir, jobs=1, **options)
        lines = [store_stage.record_row(record.to_dict()) for record in running]
        head = {
            "repo": running.repo,
            "commit": running.commit,
            "commit_date": running.commit_date(),
            "errscan_version": errscan.__version__,  # the worker's, which made the records
            "file_errors": [error.to_dict() for error in running.file_errors],
            "stats": running.stats.to_dict(),
        }
    except InputError as exc:
        head, lines = {"error": repo.redact(str(exc))}, []
    text = "\n".join([json.dumps(head, ensure_ascii=False), *lines]) + "\n"
    return zlib.compress(text.encode("utf-8"), 6)


def _lines(data: bytes) -> Iterator[str]:
    """The document's lines, decompressed a block at a time."""
    inflate = zlib.decompressobj()
    rest = b""
    for start in range(0, len(data), 1 << 16):
        rest += inflate.decompress(data[start : start + (1 << 16)])
        *whole, rest = rest.split(b"\n")
        for line in whole:
            yield line.decode("utf-8")
    rest += inflate.flush()
    for line in rest.split(b"\n"):
        if line:
            yield line.decode("utf-8")


def _rows(lines: Iterator[str]) -> Iterator[tuple[str, str | None, str, int, str]]:
    for line in lines:
        record = json.loads(line)
        yield record["id"], record["exception"], record["file"], record["line"], line


class _Driver:
    """Stores what arrives and counts it: the only part that writes the store."""

    def __init__(self, store: store_stage.Store, key: str, report: Report) -> None:
        self.store = store
        self.key = key
        self.report = report
        self.done = store.batch_done(key)

    def todo(self, items: Sequence[Item]) -> list[Item]:
        left = []
        for item in items:
            if item.key in self.done:
                self.report.outcomes.append(Outcome(item.target, "done before"))
            else:
                left.append(item)
        return left

    def arrived(self, item: Item, data: bytes, seconds: float, attempts: int) -> None:
        """Store a scan's document as it is read, a record at a time."""
        lines = _lines(data)
        head = json.loads(next(lines))
        if "error" in head:
            self.failed(item, str(head["error"]), seconds, attempts)
            return
        counts = head["stats"]
        stats = ScanStats(counts["files"], counts["sites"], counts["file_errors"], 0.0)
        version = str(head.get("errscan_version", errscan.__version__))
        scan = store_stage.ScanHead(head["repo"], head["commit"], version, stats)
        errors = [FileError(e["file"], e["reason"]) for e in head["file_errors"]]
        options = errscan.scan_options(**item.options)
        self.store.save_rows(scan, options, head.get("commit_date"), _rows(lines), errors,
                             batch=(self.key, item.key))  # fmt: skip
        self.report.outcomes.append(
            Outcome(item.target, "scanned", scan.repo, scan.commit, stats.sites,
                    len(errors), round(seconds, 3), attempts)
        )  # fmt: skip

    def failed(self, item: Item, reason: str, seconds: float, attempts: int) -> None:
        outcome = Outcome(item.target, "failed", seconds=round(seconds, 3), attempts=attempts,
                          error=reason)  # fmt: skip
        self.report.outcomes.append(outcome)


def run(
    items: Sequence[Item],
    db: str | Path | None,
    *,
    jobs: int | None = None,
    ray: str | None = None,
    repo_timeout: float | None = None,
    retries: int = 2,
    cache_dir: str | Path | None = None,
    progress: Callable[[Report], None] | None = None,
) -> Report:
    """Scan and store every item not stored by this batch before; `ray` the address of
    a Ray cluster ("auto", "HOST:PORT"), "" for a Ray started here, None for local
    processes. A Ctrl-C returns the report so far (`interrupted`)."""
    report = Report(total=len(items))
    store = store_stage.Store.open(db)
    try:
        driver = _Driver(store, batch_key(items), report)
        todo = driver.todo(items)
        cache = str(cache_dir) if cache_dir is not None else None
        try:
            if ray is None:
                _local(todo, driver, jobs or os.cpu_count() or 1, repo_timeout, retries, cache,
                       progress)  # fmt: skip
            else:
                from errscan import batch_ray

                batch_ray.run(todo, driver, ray, jobs, repo_timeout, retries, cache, progress)
        except KeyboardInterrupt:
            report.interrupted = True
    finally:
        store.close()
    return report


@dataclass
class _Running:
    item: Item
    process: multiprocessing.process.BaseProcess
    path: str
    started: float
    attempts: int


def _local(
    items: Sequence[Item],
    driver: _Driver,
    jobs: int,
    timeout: float | None,
    retries: int,
    cache_dir: str | None,
    progress: Callable[[Report], None] | None,
) -> None:
    """A process per repository, `jobs` at a time: one that dies (killed, out of memory)
    is run again up to `retries` times; one past `timeout` is killed and failed."""
    context: Any = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    background.wait()  # no thread of ours runs when the children fork
    queue = [(item, 1) for item in items]
    running: list[_Running] = []
    serial = itertools.count()
    with tempfile.TemporaryDirectory(prefix="errscan-batch-") as work:
        try:
            while queue or running:
                while queue and len(running) < jobs:
                    item, attempt = queue.pop(0)
                    path = os.path.join(work, str(next(serial)))
                    process = context.Process(
                        target=_child, args=(item.target, item.options, cache_dir, path),
                        daemon=True,
                    )  # fmt: skip
                    process.start()
                    running.append(_Running(item, process, path, time.monotonic(), attempt))
                driver.report.running = len(running)
                time.sleep(0.02)
                for task in list(running):
                    elapsed = time.monotonic() - task.started
                    if task.process.is_alive():
                        if timeout is not None and elapsed > timeout:
                            _kill(task.process)
                            running.remove(task)
                            driver.failed(task.item, f"timed out after {timeout:g} s", elapsed,
                                          task.attempts)  # fmt: skip
                            if progress is not None:
                                progress(driver.report)
                        continue
                    running.remove(task)
                    task.process.join()
                    data = _read(task.path)
                    if task.process.exitcode == 0 and data is not None:
                        driver.arrived(task.item, data, elapsed, task.attempts)
                    elif task.attempts <= retries:
                        queue.insert(0, (task.item, task.attempts + 1))
                        continue
                    else:
                        code = task.process.exitcode
                        driver.failed(task.item, f"the worker died (exit {code})", elapsed,
                                      task.attempts)  # fmt: skip
                    if progress is not None:
                        progress(driver.report)
        finally:
            for task in running:
                _kill(task.process)
            driver.report.running = 0


def _child(target: str, options: dict[str, Any], cache_dir: str | None, path: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides when to stop
    data = scan_one(target, options, cache_dir)
    with open(path + ".tmp", "wb") as out:
        out.write(data)
    os.replace(path + ".tmp", path)


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as found:
            data = found.read()
    except OSError:
        return None
    with contextlib.suppress(OSError):
        os.unlink(path)
    return data


def _kill(process: multiprocessing.process.BaseProcess) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        process.kill()
        process.join(5)
