"""A first scan's ranking and linking in the pool's workers: the same output and state."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import errscan
from errscan import background
from errscan.analyzer import cache, fanout, output, related, scan
from tests.support import commit_all, git, write


def _jsonl(repo: Path, **options: object) -> str:
    out = io.StringIO()
    errscan.export(str(repo), "jsonl", stream=out, **options)  # type: ignore[arg-type]
    return out.getvalue()


def _held(monkeypatch: pytest.MonkeyPatch) -> list[fanout.Context]:
    """The contexts the workers were forked with."""
    contexts: list[fanout.Context] = []
    real = fanout.hold

    def noted(context: fanout.Context | None) -> None:
        if context is not None:
            contexts.append(context)
        real(context)

    monkeypatch.setattr(fanout, "hold", noted)
    return contexts


def _linked_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files linked by this process rather than the pool's workers, as they come."""
    linked_here: list[str] = []
    real = errscan.api.Scan._link

    def noted(self: errscan.api.Scan, entry: Any, *args: Any) -> Any:
        linked_here.append(entry.path)
        return real(self, entry, *args)

    monkeypatch.setattr(errscan.api.Scan, "_link", noted)
    return linked_here


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_POOL_MIN_BYTES", 0)
    monkeypatch.setattr("errscan.api._LINK_BATCH", 2)


@pytest.mark.usefixtures("pooled")
def test_workers_rank_and_link_as_this_process_does(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Byte for byte, related lists included; and the state they leave gives the next
    scan, after a change, what a scan from nothing gives."""
    serial = _jsonl(basic_repo, jobs=1, use_cache=False)
    contexts = _held(monkeypatch)
    copies: list[Path] = []
    real_copy = cache.ResultCache.checkpoint_behind

    def copy(self: cache.ResultCache) -> None:
        copies.append(self.path)
        real_copy(self)

    monkeypatch.setattr(cache.ResultCache, "checkpoint_behind", copy)
    assert _jsonl(basic_repo, jobs=2) == serial
    assert len(contexts) == 1
    assert copies == [_private_cache / "results.sqlite"]  # the first pass's, copied behind
    # the ids the workers were given (the first ranking's), those linking would make
    ids: dict[str, list[str]] = {}
    for line in serial.splitlines():
        record = json.loads(line)
        if "id" in record:
            ids.setdefault(record["file"], []).append(record["id"])
    assert contexts[0].ids == ids and len(ids) >= 3
    assert '"related": ["' in serial and '"related": []' in serial  # ranked in the pool
    write(basic_repo, "pkg/extra.py", "def f(x):\n    raise ValueError(f'bad value {x}')\n")
    commit_all(basic_repo, "one more")
    assert _jsonl(basic_repo, jobs=2) == _jsonl(basic_repo, jobs=1, use_cache=False)
    assert len(contexts) == 1  # the second scan went from the state, in this process


@pytest.mark.usefixtures("pooled")
def test_files_a_worker_cannot_read_are_ranked_and_linked_here(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker without the result cache (or missing an entry) hands its files back;
    and where no worker ranks, this process does."""
    serial = _jsonl(basic_repo, jobs=1, use_cache=False)
    contexts = _held(monkeypatch)
    monkeypatch.setattr(scan, "worker_cache", lambda: None)  # in the workers forked next
    linked_here = _linked_here(monkeypatch)
    assert _jsonl(basic_repo, jobs=2, use_cache=False) == serial
    assert contexts and linked_here  # the pool was tried, and the files came back


@pytest.mark.usefixtures("pooled")
def test_the_first_ranking_is_done_by_a_process_of_its_own_or_here_where_it_dies(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The held ranking goes to a process forked once the first pass ends; where that
    process ends without its lists, this process ranks, and the output is the same."""
    serial = _jsonl(basic_repo, jobs=1, use_cache=False)
    rankers = tmp_path / "rankers"
    real_rank = related.Ranker.rank

    def ranking(self: related.Ranker, paths: Any = None) -> related.Updates:
        with rankers.open("a") as noted:  # a forked process's list would stay its own
            noted.write(f"{os.getpid()}\n")
        return real_rank(self, paths)

    monkeypatch.setattr(related.Ranker, "rank", ranking)
    assert _jsonl(basic_repo, jobs=2, use_cache=False) == serial
    pids = rankers.read_text().split()
    assert len(pids) > 1 and len(set(pids)) == 1  # a batch of files at a time
    assert int(pids[0]) != os.getpid()  # elsewhere
    rankers.unlink()
    monkeypatch.setattr(fanout, "_rank_and_send", _dies)
    assert _jsonl(basic_repo, jobs=2, use_cache=False) == serial
    assert set(rankers.read_text().split()) == {str(os.getpid())}  # here


@pytest.mark.usefixtures("pooled")
def test_batches_a_ranking_process_ended_before_are_ranked_here_as_it_would_have(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Where the ranking process ends after some batches' lists, this process ranks the
    rest (after scoring the pairs of those before, as the process scored them): the
    output is the same byte for byte."""
    serial = _jsonl(basic_repo, jobs=1, use_cache=False)
    real = fanout._rank_and_send
    rankers = tmp_path / "rankers"
    real_rank = related.Ranker.rank

    def ranking(self: related.Ranker, paths: Any = None) -> related.Updates:
        with rankers.open("a") as noted:
            noted.write(f"{os.getpid()}\n")
        return real_rank(self, paths)

    sent_groups: list[int] = []

    def one_then_dies(ranker: Any, groups: list[list[str]], sent: Any) -> None:
        real(ranker, groups[:1], sent)
        os._exit(9)

    def noting(context: Any, *args: Any, **kwargs: Any) -> None:
        sent_groups.append(len(args[1]))
        real_init(context, *args, **kwargs)

    real_init = fanout.RankApart.__init__
    monkeypatch.setattr(fanout.RankApart, "__init__", noting)
    monkeypatch.setattr(related.Ranker, "rank", ranking)
    monkeypatch.setattr(fanout, "_rank_and_send", one_then_dies)
    assert _jsonl(basic_repo, jobs=2, use_cache=False) == serial
    assert sent_groups[0] >= 3
    pids = rankers.read_text().split()
    here = str(os.getpid())
    assert pids[0] != here  # the first batch's lists came from the process
    assert pids[1:] == [here] * sent_groups[0]  # the first again, then the others


@pytest.mark.usefixtures("pooled")
def test_a_first_ranking_too_large_to_hold_is_ranked_by_fresh_workers(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past related._HELD records the first pass's workers are replaced (ended while the
    ranking's records went in) by new ones that rank from the tables, as on later scans."""
    serial = _jsonl(basic_repo, jobs=1, use_cache=False)
    monkeypatch.setattr(related, "_HELD", 0)
    contexts = _held(monkeypatch)
    in_pool: list[bool] = []
    real_map = scan.Scanner.map

    def noting_map(self: scan.Scanner, work: Any, items: Any) -> Any:
        if work is related.rank_job:
            in_pool.append(self.pooled)
        return real_map(self, work, items)

    monkeypatch.setattr(scan.Scanner, "map", noting_map)
    assert _jsonl(basic_repo, jobs=2, use_cache=False) == serial
    assert in_pool == [True] and not contexts


@pytest.mark.usefixtures("pooled")
def test_workers_ranking_a_first_ranking_too_large_to_hold_fork_without_the_held_sites(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past related._HELD records this process links the files from the cache: the
    sites and summaries the first pass held for linking workers (scan.Held) are let go
    of, and the heap they were in given back, before the workers that rank are forked
    (they would hold them as their own: the benchmark's 20,000 copies, 110 MB)."""
    serial = _jsonl(basic_repo, jobs=1, use_cache=False)
    monkeypatch.setattr(related, "_HELD", 0)
    made: list[scan.Held] = []
    real_held = scan.Held

    class Noted(real_held):  # type: ignore[misc,valid-type]
        def __init__(self, limit: int | None = None) -> None:
            super().__init__(limit)
            made.append(self)

    monkeypatch.setattr(scan, "Held", Noted)
    events: list[str] = []
    real_trim, real_restart = errscan.api._trim_heap, scan.Scanner.restart

    def trimmed() -> None:
        events.append("trim")
        real_trim()

    def restarted(self: scan.Scanner, nice: int = 0) -> None:
        events.append(f"restart holding {sum(len(h.results) for h in made)}")
        real_restart(self, nice)

    monkeypatch.setattr(errscan.api, "_trim_heap", trimmed)
    monkeypatch.setattr(scan.Scanner, "restart", restarted)
    assert _jsonl(basic_repo, jobs=2, use_cache=False) == serial
    assert len(made) == 1 and events[-2:] == ["trim", "restart holding 0"]


@pytest.mark.usefixtures("pooled")
def test_no_thread_runs_as_a_first_scan_forks(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool's workers, the ranking process and the linking workers are each forked
    with this process's main thread alone (a thread holding a lock then would leave
    the child that lock, held forever): a retired pool's threads are waited for."""
    import threading

    others: list[list[str]] = []
    lingering: list[int] = []
    real_fork = os.fork
    # threads the system runs beyond Python's before the scan (a C library's, if any)
    base = background._excess()

    def fork() -> int:
        others.append([t.name for t in threading.enumerate() if t is not threading.main_thread()])
        excess = background._excess()
        if base is not None and excess is not None:
            lingering.append(excess - base)  # a joined thread still leaving the system
        return real_fork()

    monkeypatch.setattr(os, "fork", fork)
    for use_cache in (False, False, True):  # a cache file's log is copied behind the scan
        _jsonl(basic_repo, jobs=2, use_cache=use_cache)
    assert len(others) >= 15  # 2 scanning workers, the ranking process, 2 linking workers
    assert others == [[]] * len(others)
    assert set(lingering) <= {0}


def _dies(*_args: object) -> None:
    """A ranking process killed before it sent its lists."""
    os._exit(9)


def test_a_ranking_process_still_at_work_ends_with_its_close() -> None:
    """An interrupted scan's close ends the ranking process (never left behind), and its
    batches are then ranked here."""

    def forever() -> related.Ranker:
        time.sleep(600)
        raise AssertionError("never")

    apart = fanout.RankApart(forever, [["a.py"]])
    started = time.monotonic()
    apart.close()
    assert time.monotonic() - started < 30
    assert not apart._process.is_alive()
    assert list(apart.results(lambda: related.Ranker(([], {}, {}, [], [])))) == [[]]


def test_a_block_gets_each_record_s_list_in_its_own_line_and_key() -> None:
    """with_related puts a record's list where the block has its empty one, and nowhere
    else: not in a message holding the same text, nor in another record's line."""
    code = (
        "def f(x):\n"
        "    if x:\n"
        "        raise ValueError('\"related\": [] is not a list')\n"
        "    raise KeyError(x)\n"
        "def g():\n"
        "    raise TypeError('\"related\": []')\n"
    )
    records = errscan.extract_source(code, "m.py")
    assert len(records) == 3
    bare = [replace(r, related=()) for r in records]
    lists = {records[0].id: (records[1].id, records[2].id), records[2].id: (records[0].id,)}
    made = [replace(r, related=lists.get(r.id, ())) for r in records]
    texts = {i: json.dumps(list(ids)) for i, ids in lists.items()}
    ids = [r.id for r in bare]
    assert fanout.with_related(output.jsonl_block(bare), ids, texts) == output.jsonl_block(made)
    assert fanout.with_related(output.jsonl_block(bare), ids, {}) == output.jsonl_block(bare)


_ERRORS = """
class NotFound(Exception):
    def __init__(self, name):
        super().__init__(f"{name} WORD")
"""


@pytest.mark.usefixtures("pooled")
def test_what_a_worker_saw_a_file_depend_on_relinks_it_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dependencies a worker hands back are kept: a later change to the class a
    file raises relinks that file (and that file only), as if this process had linked."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/errors.py", _ERRORS.replace("WORD", "was not found"))
    write(
        repo, "pkg/use.py", "from .errors import NotFound\n\ndef get(k):\n    raise NotFound(k)\n"
    )
    for i in range(6):
        write(repo, f"pkg/other{i}.py", f"def f{i}(x):\n    raise ValueError(f'bad {{x}}')\n")
    commit_all(repo, "start")
    contexts = _held(monkeypatch)
    assert _jsonl(repo, jobs=2) == _jsonl(repo, jobs=1, use_cache=False)
    assert len(contexts) == 1
    write(repo, "pkg/errors.py", _ERRORS.replace("WORD", "is missing"))
    commit_all(repo, "reworded")
    again = _jsonl(repo, jobs=2)
    assert again == _jsonl(repo, jobs=1, use_cache=False)
    assert "is missing" in again and "was not found" not in again


@pytest.mark.usefixtures("pooled")
def test_details_deferred_in_the_first_pass_are_read_whole_where_linking_needs_them(
    tmp_path: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers and this process alike read a file again, whole, for the details its
    partial summary deferred (a mixin's __init__, a form field's messages, a factory's
    call): the records are those of whole summaries, and the cache then holds the file
    whole, while a file none of whose details were read stays partial."""
    from errscan.analyzer import cache
    from errscan.extractors import summary
    from tests.analyzer.test_index import _DEFERRED

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for path, code in _DEFERRED.items():
        write(repo, path, code)
    write(repo, "pkg/models.py", "class Model:\n    def __init__(self, x):\n        self.x = x\n")
    commit_all(repo, "start")
    real = summary.summarize

    def whole(*args: Any) -> object:  # what scan._scan passes, but `partial`
        tree, src, constants, factories, imported, local_imports, _partial = args
        return real(tree, src, constants, factories, imported, local_imports, partial=False)

    with monkeypatch.context() as patched:
        patched.setattr(summary, "summarize", whole)
        reference = _jsonl(repo, jobs=1, use_cache=False)
    assert "{x} is not described" in reference and "Enter a valid value." in reference
    first = git(repo, "rev-parse", "HEAD")

    def at_head() -> str:
        return reference.replace(first, git(repo, "rev-parse", "HEAD"))

    for jobs in (2, 1):
        shutil.rmtree(_private_cache, ignore_errors=True)
        assert _jsonl(repo, jobs=jobs) == at_head()
        background.wait()
        results = cache.ResultCache.open(_private_cache, errscan.api._BUILD, 15)
        try:
            partial = {}
            for path in ("pkg/mixins.py", "pkg/forms.py", "pkg/factories.py", "pkg/models.py"):
                sha = git(repo, "rev-parse", f"HEAD:{path}")
                stored = results.summary(sha)
                assert stored is not None
                partial[path] = stored.partial
        finally:
            results.close()
        assert partial == {"pkg/mixins.py": False, "pkg/forms.py": False,
                           "pkg/factories.py": False, "pkg/models.py": True}  # fmt: skip
        assert _jsonl(repo, jobs=jobs) == at_head()  # warm: replayed
        write(repo, "pkg/models.py", "class Model:\n    pass\n")
        commit_all(repo, f"changed with {jobs} jobs")
        write(
            repo, "pkg/models.py", "class Model:\n    def __init__(self, x):\n        self.x = x\n"
        )
        commit_all(repo, f"back with {jobs} jobs")
        assert _jsonl(repo, jobs=jobs) == at_head()  # models.py relinked, the rest kept


@pytest.mark.usefixtures("pooled")
@pytest.mark.parametrize("limit", [scan._HELD_BYTES, 0])
def test_the_linking_workers_read_what_the_first_pass_held(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """The files' sites and summaries the first pass held go to the linking workers,
    which need not read them from the cache: with the cache emptied as they fork (by
    another errscan's prune, say), they link every file themselves where all were held,
    and hand them back to this process where none were. The records are the same."""
    import sqlite3

    serial = _jsonl(basic_repo, jobs=1, use_cache=False)
    monkeypatch.setattr(scan, "_HELD_BYTES", limit)
    real_hold = fanout.hold
    held_sizes: list[int] = []

    def emptied(context: fanout.Context | None) -> None:
        if context is not None:
            held_sizes.append(len(context.held))
            db = sqlite3.connect(_private_cache / "results.sqlite")
            with contextlib.closing(db), db:
                db.execute("DELETE FROM results")
        real_hold(context)

    monkeypatch.setattr(fanout, "hold", emptied)
    linked_here = _linked_here(monkeypatch)
    assert _jsonl(basic_repo, jobs=2) == serial
    assert len(held_sizes) == 1
    if limit:
        assert held_sizes[0] > 3 and linked_here == []
    else:
        assert held_sizes[0] == 0 and linked_here


def test_the_first_pass_holds_results_up_to_its_limit() -> None:
    """Past the limit, nothing more is held (what is held stays) and none is asked for."""
    held = scan.Held(limit=10)
    held.add("a", (b"abc", b"de"))
    held.add("b", (b"abcd", b""))
    assert held.wanted and set(held.results) == {"a", "b"}
    held.add("c", (b"abcd", b""))
    assert not held.wanted and set(held.results) == {"a", "b"}
    held.add("d", (b"", b""))
    assert set(held.results) == {"a", "b"}
