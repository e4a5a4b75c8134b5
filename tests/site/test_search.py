"""The search index's words shards: a shard patched with what changed of its words is
the shard made whole from the state, byte for byte."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from errscan.site.search import _patched, _posting_lists

# record ids as errscan makes them (16 hex digits), plain ids of other lengths, and ids
# JSON escapes or that hold what delimits a shard's entries
_IDS = st.one_of(
    st.text("0123456789abcdef", min_size=16, max_size=16),
    st.text("0123456789abcdef", min_size=16, max_size=16),
    st.text("0123456789abcdefXYZ", min_size=1, max_size=6),
    st.text('ab",[]\\:{}\n\u00e9', min_size=1, max_size=4),
)
_WORDS = st.from_regex(r"[a-z0-9\u00e9]{1,4}", fullmatch=True)


def _shard(lists: dict[str, set[str]]) -> str:
    rows = [(word, i) for word in sorted(lists) for i in sorted(lists[word])]
    return "{" + "".join(_posting_lists(rows)) + "}\n"


class _Site:
    def __init__(self, text: str) -> None:
        self.text = text

    def read(self, path: str, digest: str) -> str | None:
        found = hashlib.sha256(self.text.encode()).hexdigest()
        return self.text if found == digest else None

    def put(self, path: str, data: str | bytes, last: str | None = None) -> str:
        raise AssertionError("a patch writes nothing")

    def stream(self, path: str, chunks: Iterable[str | bytes], last: str | None = None) -> str:
        raise AssertionError("a patch writes nothing")


@given(
    st.dictionaries(_WORDS, st.sets(_IDS, min_size=1, max_size=40), min_size=1, max_size=5),
    st.dictionaries(_WORDS, st.dictionaries(_IDS, st.booleans(), max_size=12), max_size=5),
    st.data(),
)
def test_a_patched_shard_is_the_shard_made_whole(
    lists: dict[str, set[str]], patch: dict[str, dict[str, bool]], data: st.DataObject
) -> None:
    # changes of ids the shard holds as well as of others
    for word, ids in lists.items():
        held = data.draw(st.dictionaries(st.sampled_from(sorted(ids)), st.booleans()))
        patch[word] = {**patch.get(word, {}), **held}
    text = _shard(lists)
    wanted = {word: set(ids) for word, ids in lists.items()}
    for word, changes in patch.items():
        for error_id, has in changes.items():
            ids = wanted.setdefault(word, set())
            (ids.add if has else ids.discard)(error_id)
    wanted = {word: ids for word, ids in wanted.items() if ids}
    digest = hashlib.sha256(text.encode()).hexdigest()
    parts = _patched(_Site(text), "search/words/ab.json", digest, patch)
    assert parts is not None
    made = "{" + "".join(parts) + "}\n"
    assert made == (_shard(wanted) if wanted else "{}\n")


def test_a_list_of_ids_of_several_lengths_is_patched_as_it_is() -> None:
    # as many characters as three 16-character ids, commas where theirs would be
    ids = {"0000000000000000", "9386997084109238", "94", "X0", "X00000"}
    text = _shard({"j": ids})
    digest = hashlib.sha256(text.encode()).hexdigest()
    parts = _patched(_Site(text), "p", digest, {"j": {"X0": False}})
    assert parts is not None
    assert "{" + "".join(parts) + "}\n" == _shard({"j": ids - {"X0"}})


def test_a_shard_not_as_the_last_build_wrote_it_is_made_whole() -> None:
    text = _shard({"load": {"0123456789abcdef"}})
    digest = hashlib.sha256(text.encode()).hexdigest()
    patch = {"load": {"fedcba9876543210": True}}
    assert _patched(_Site(text), "p", digest, patch) is not None
    assert _patched(_Site(text), "p", "0" * 64, patch) is None  # another file
    assert _patched(_Site(text), "p", None, patch) is None  # no digest kept
    assert _patched(_Site(text), "p", digest, None) is None  # too much changed
    damaged = text.replace("]", "", 1)
    digest = hashlib.sha256(damaged.encode()).hexdigest()
    assert _patched(_Site(damaged), "p", digest, patch) is None


@pytest.mark.parametrize(("there", "data", "written"), [
    ("old", b"old", 0),  # as last written: not written
    ("tampered", b"old", 1),  # the digest last written, yet other bytes there: read, written
    (None, b"old", 1),
    ("old", b"new", 1),  # another digest: written without reading what is there
    ("new", b"new", 1),  # ... even where it holds those bytes already (changed since)
    (None, b"new", 1),
])  # fmt: skip
def test_a_file_is_written_where_its_bytes_change_from_the_digest_last_written(
    tmp_path: Path, there: str | None, data: bytes, written: int
) -> None:
    from errscan.site.writer import FileWriter

    if there is not None:
        (tmp_path / "f.json").write_bytes(there.encode())
    writer = FileWriter(tmp_path)
    digest = writer.stream("f.json", [data], hashlib.sha256(b"old").hexdigest())
    assert (tmp_path / "f.json").read_bytes() == data
    assert digest == hashlib.sha256(data).hexdigest()
    assert writer.written == written
    assert writer.put("f.json", data, digest) == digest and writer.written == written
