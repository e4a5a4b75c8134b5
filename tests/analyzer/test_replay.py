"""Packed values: what the stored outputs' counts and the launch notes are kept as."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from errscan.analyzer.replay import pack, unpack

_SCALARS = st.none() | st.booleans() | st.integers() | st.text()
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


@given(_VALUES)
def test_a_packed_value_unpacks_as_it_was(value: object) -> None:
    assert unpack(pack(value)) == value


def test_a_note_with_lone_surrogates_unpacks_as_it_was() -> None:
    """A path read with surrogateescape (a file name that is not UTF-8) stays itself."""
    note = {"output": "/tmp/\udcff.jsonl", "configs": [["/a", [1, 2, 3, 4, 5]]], "quiet": True}
    assert unpack(pack(note)) == note


@given(_VALUES, st.data())
def test_damaged_or_foreign_bytes_are_refused(value: object, data: st.DataObject) -> None:
    packed = bytearray(pack(value))
    at = data.draw(st.integers(0, len(packed) - 1))
    packed[at] ^= data.draw(st.integers(1, 255))
    with pytest.raises(ValueError):
        unpack(bytes(packed))
    with pytest.raises(ValueError):
        unpack(bytes(packed[: data.draw(st.integers(0, len(packed) - 1))]))


@pytest.mark.parametrize("data", [b"", b'{"version": 3}', b"errscan packed 1\n"])
def test_bytes_never_packed_are_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        unpack(data)
