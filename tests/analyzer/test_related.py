"""Related errors: by meaning as much as by place, errors with a message first."""

from __future__ import annotations

import gc
import json
import math
import random
import sqlite3
import subprocess
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import errscan
from errscan.analyzer import related, state
from errscan.analyzer.related import stem
from tests.support import commit_all, write


@pytest.mark.parametrize(
    ("words", "common"),
    [
        (["supported", "supports", "support"], "support"),
        (["required", "requires", "require"], "requir"),
        (["classes", "class"], "class"),
        (["entries", "entry"], "entry"),
    ],
)
def test_forms_of_a_word_stem_alike(words: list[str], common: str) -> None:
    assert {stem(w) for w in words} == {common}


def test_short_words_and_words_ending_in_s_keep_their_form() -> None:
    assert [stem(w) for w in ("this", "status", "has", "bus")] == ["this", "status", "has", "bus"]


_STREAMER = """
class OutputStreamer:
    def check(self, rust, extra, key, seen):
        if extra and rust:
            raise ValueError("customized generation output is not supported by Rust egress")
        if key in seen:
            raise KeyError(key)
        if not seen:
            raise RuntimeError(seen)
        if rust is None:
            raise TypeError(rust)
"""

_CACHE = """
def pin(op, pinned):
    if pinned:
        raise ValueError(f"{op} of model weights is not supported with Rust egress")
"""

_LORA = """
def lora(algo):
    if algo:
        raise ValueError("LoRA is only compatible with NGRAM")
"""


def _records(tmp_path: Path) -> dict[str, errscan.ErrorRecord]:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    write(repo, "pkg/streamer.py", _STREAMER)
    write(repo, "pkg/cache.py", _CACHE)
    write(repo, "pkg/lora.py", _LORA)
    commit_all(repo, "three files")
    records = errscan.extract(str(repo), use_cache=False).records
    return {r.id: r for r in records}


def test_a_message_alike_in_another_file_comes_before_messageless_neighbours(
    tmp_path: Path,
) -> None:
    by_id = _records(tmp_path)
    egress = next(r for r in by_id.values() if "Rust egress" in (r.message or "") and
                  r.file == "pkg/streamer.py")  # fmt: skip
    related = [by_id[i] for i in egress.related]
    # the same class's three errors without a message of their own are nearer by place;
    # the other "not supported with Rust egress" error, in another file, says more
    assert related[0].file == "pkg/cache.py"
    assert related[0].message is not None


_LOCKS = """
def acquire(lock, waited, limit):
    if waited > limit:
        raise TimeoutError(f"timed out after {waited}s waiting for the lock {lock}")
    if lock is None:
        raise ValueError(lock)


def release(lock, owner):
    if owner is not None:
        raise RuntimeError(f"the lock {lock} is held by process {owner}")
"""


def test_an_error_with_a_message_comes_before_a_messageless_one_in_the_same_function(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    write(repo, "locks.py", _LOCKS)
    commit_all(repo, "locks")
    by_id = {r.id: r for r in errscan.extract(str(repo), use_cache=False).records}
    timeout = next(r for r in by_id.values() if r.exception == "TimeoutError")
    assert [by_id[i].exception for i in timeout.related] == ["RuntimeError", "ValueError"]


_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "epsil", "zeta", "theta"])
_FEATURES = st.tuples(
    st.sampled_from(["f", "g", "C.m", "C.n", None]),
    st.lists(st.sampled_from(["HOME", "PATH"]), max_size=2),
    st.lists(st.sampled_from(["x", "y", "mode"]), max_size=2, unique=True).map(sorted),
    st.lists(_WORDS, max_size=4, unique=True).map(sorted),
)
_FILES = st.dictionaries(
    st.sampled_from(["a.py", "b/c.py", "b/d.py", "e.py"]), st.lists(_FEATURES, max_size=40)
)


def _added(files: dict[str, list[tuple[object, ...]]]) -> state.State:
    """A private state whose ranking has each file's records added, in path order, each
    record's id its path and place (`a.py:0`)."""
    kept = state.State.private()
    for path in sorted(files):
        ids = [f"{path}:{seq}" for seq in range(len(files[path]))]
        kept.ranking.add(path, [(i, list(f)) for i, f in zip(ids, files[path], strict=True)])
    return kept


def _lists(
    files: dict[str, list[tuple[object, ...]]], ranker: bool = False
) -> dict[str, dict[str, tuple[str, ...]]]:
    """`ranker`: ranked as the pool's workers rank a first scan (Ranking.held_ranker)."""
    kept = _added(files)
    try:
        if ranker:
            held = kept.ranking.held_ranker()
            kept.ranking.settle()
            for path in sorted(files):
                kept.ranking.write_lists(held.rank([path]))
            kept.ranking.finish_held()
        else:
            kept.ranking.settle()
            kept.ranking.rank()
        return {path: kept.ranking.lists(path) for path in sorted(files)}
    finally:
        kept.close()


@settings(max_examples=60, deadline=None)
@given(_FILES, st.integers(1, 8))
def test_a_first_ranking_held_in_memory_equals_one_read_from_the_tables(
    files: dict[str, list[tuple[object, ...]]], common: int
) -> None:
    """A state's first ranking reads its one group from memory (ranked whole, or a file
    at a time as the pool's workers rank it); past related._HELD records, from the
    tables, a few files at a time: the lists are the same. A low
    related._COMMON makes keys common (passed over) as well as rare."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(related, "_COMMON", common)
        held = _lists(files)
        assert _lists(files, ranker=True) == held
        patch.setattr(related, "_PENDING", 3)  # written while held, then let go of
        patch.setattr(related, "_HELD", 5)
        assert _lists(files) == held
        patch.setattr(related, "_HELD", 0)
        patch.setattr(related, "_GROUP", 3)
        assert _lists(files) == held
    assert any(held.values()) or sum(map(len, files.values())) < 2


@settings(max_examples=30, deadline=None)
@given(_FILES)
def test_groups_ranked_here_go_as_they_are_and_those_sent_packed(
    files: dict[str, list[tuple[object, ...]]],
) -> None:
    """Groups read from the tables go to `run` packed where it sends them to other
    processes, else as they are (no pickling to unpickle in the same process): the
    lists are the same."""

    def lists(sent: bool) -> tuple[dict[str, dict[str, tuple[str, ...]]], set[type]]:
        kinds: set[type] = set()

        def run(work: Any, jobs: Any) -> Any:
            for job in jobs:
                kinds.add(type(job))
                yield work(job)

        kept = _added(files)
        try:
            kept.ranking.settle()
            for _ in kept.ranking.ranked(run, sent=sent):
                pass
            return {path: kept.ranking.lists(path) for path in sorted(files)}, kinds
        finally:
            kept.close()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(related, "_HELD", 0)
        patch.setattr(related, "_GROUP", 3)
        here, as_is = lists(sent=False)
        sent, packed = lists(sent=True)
    assert here == sent
    assert as_is <= {related.Group} and packed <= {bytes}
    assert bool(as_is) == bool(packed) == any(files.values())


def test_a_first_ranking_makes_its_keys_once_and_writes_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Held in memory, a first ranking makes its keys for its ranker alone: settle makes
    none and leaves the keys' tables empty, for a later scan to fill."""
    kept = state.State.private()
    try:
        records = [("a:0", ["f", [], [], ["alpha", "beta"]]), ("a:1", ["g", [], [], ["alpha"]])]
        kept.ranking.add("a.py", records)
        made: list[object] = []
        keys = related._keys

        def counted(*args: Any) -> list[str]:
            made.append(args)
            return keys(*args)

        monkeypatch.setattr(related, "_keys", counted)
        lists = kept.ranking.held_ranker().rank()
        kept.ranking.settle()
        assert len(made) == 2
        assert lists == [('["a:1"]', "a:0", "a.py"), ('["a:0"]', "a:1", "a.py")]
        for table in ("word", "df", "post"):
            assert kept.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0
    finally:
        kept.close()


def test_a_first_ranking_held_at_its_bound_stays_within_its_memory() -> None:
    """Up to related._HELD records, a first ranking is held in memory (its records and
    the ranker's weights and pair scores): measured on 2,000 records of a dozen words
    each from a 4,000-word vocabulary, about 4.1 KB a record, so the bound holds some
    80 MB; 150 MB would take 7.9 KB a record or a bound past 37,000."""
    rng = random.Random(5)
    vocabulary = [f"w{i}x" for i in range(4000)]
    count = 2000
    kept = state.State.private()
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for file in range(count // 10):
            records = [
                (
                    f"{file:04x}{seq:012x}",
                    [f"C.m{seq}", [], ["value", "key"], rng.sample(vocabulary, 12)],
                )
                for seq in range(10)
            ]
            kept.ranking.add(f"pkg/m{file}.py", records)
        lists = kept.ranking.held_ranker().rank()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
        kept.close()
    assert len(lists) == count  # every record ranked, from memory
    assert peak / count * related._HELD < 150 * 2**20


def _tables(db: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {
        table: sorted(db.execute(f"SELECT * FROM {table}").fetchall())
        for table in ("rec", "word", "df", "post")
    }


@settings(max_examples=40, deadline=None)
@given(_FILES)
def test_keys_a_first_ranking_left_out_are_made_as_it_would_have(
    files: dict[str, list[tuple[object, ...]]],
) -> None:
    """The scan after a first ranking held in memory, once it changes a record, finds
    the keys' tables as a first ranking that wrote them (past related._HELD records)
    left them; a scan that changes nothing leaves them empty."""

    def first(held: int) -> state.State:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(related, "_HELD", held)
            kept = _added(files)
            kept.ranking.settle()
            kept.ranking.rank()
            return kept

    held, written = first(related._HELD), first(0)
    try:
        unchanged = related.Ranking(held.db, fresh=False)
        unchanged.remove([])
        unchanged.settle()
        assert held.db.execute("SELECT COUNT(*) FROM post").fetchone()[0] == 0
        assert held.db.execute("SELECT COUNT(*) FROM unkeyed").fetchone()[0] == 1
        changing = related.Ranking(held.db, fresh=False)
        changing.remove(["nowhere.py"])  # no record: nothing to make yet
        changing.add("new.py", [])
        assert _tables(held.db) == _tables(written.db)
        assert held.db.execute("SELECT COUNT(*) FROM unkeyed").fetchone()[0] == 0
        # made into empty tables, their indexes built after the rows, as the same
        indexes = "SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name"
        assert held.db.execute(indexes).fetchall() == written.db.execute(indexes).fetchall()
    finally:
        held.close()
        written.close()


@given(st.lists(st.text(max_size=20), max_size=6))
def test_a_list_is_written_as_json_dumps_writes_it(ids: list[str]) -> None:
    assert related._json_list(ids) == json.dumps(ids)
    assert related._json_list(["0123456789abcdef", "fedcba9876543210"]) == json.dumps(
        ["0123456789abcdef", "fedcba9876543210"]
    )


def test_a_record_s_weights_are_the_same_on_every_python() -> None:
    """Its norm is summed exactly (math.fsum): a plain sum() drops the small squares
    here on Python 3.11 and keeps them on 3.12, and a last bit of difference reorders a
    list whose candidates score alike."""
    words = ["a", "b", "c", "d", "e"]
    weights = {"a": 1.0, "b": 1e-8, "c": 1e-8, "d": 1e-8, "e": 1e-8}
    norm = math.sqrt(math.fsum(weights[w] ** 2 for w in words))
    assert norm != 1.0  # what a plain left-to-right sum gives
    assert related._weights(words, weights) == {w: v / norm for w, v in weights.items()}


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.tuples(st.text(), st.lists(st.text()), st.lists(st.text()), st.lists(st.text())),
        st.lists(st.one_of(st.text(), st.integers(), st.none(), st.lists(st.text())), max_size=5),
    )
)
def test_a_feature_s_text_is_what_json_writes(feature: Any) -> None:
    """The tables keep each record's features as JSON: written directly for features as
    related.features makes them, as json.dumps would for any other shape."""
    assert related.feature_text(feature) == json.dumps(list(feature))
