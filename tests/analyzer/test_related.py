"""Related errors: by meaning as much as by place, errors with a message first."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import errscan
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
