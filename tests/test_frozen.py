"""@frozen behaves as @dataclass(frozen=True) on any class of the shapes errscan uses."""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from errscan.frozen import frozen

_VALUES = st.one_of(
    st.none(), st.integers(-3, 3), st.text(max_size=3), st.tuples(st.integers(0, 2))
)


@st.composite
def _specs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Fields: a name, a default (none, a value or a factory), compare, repr, hash, init;
    those without a default come first, as a dataclass requires."""
    names = draw(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=6))
    fields = []
    defaulted = False
    for name in names:
        kind = draw(st.sampled_from(["none", "value", "factory"]))
        if defaulted and kind == "none":
            kind = "value"
        defaulted = defaulted or kind != "none"
        fields.append(
            {
                "name": name,
                "kind": kind,
                "value": draw(_VALUES),
                "compare": draw(st.booleans()),
                "repr": draw(st.booleans()),
                "hash": draw(st.sampled_from([None, True, False])),
                "init": kind == "none" or draw(st.booleans()),
            }
        )
    return fields


def _class(spec: list[dict[str, Any]], make: Any, post_init: bool, doc: bool) -> Any:
    namespace: dict[str, Any] = {"__annotations__": {}}
    for f in spec:
        namespace["__annotations__"][f["name"]] = "Any"
        options = {"compare": f["compare"], "repr": f["repr"], "hash": f["hash"], "init": f["init"]}
        if f["kind"] == "value":
            namespace[f["name"]] = dataclasses.field(default=f["value"], **options)
        elif f["kind"] == "factory":
            namespace[f["name"]] = dataclasses.field(default_factory=list, **options)
        else:
            namespace[f["name"]] = dataclasses.field(**options)
    if post_init:

        def __post_init__(self: Any) -> None:
            object.__setattr__(self, "seen", len(vars(self)) if hasattr(self, "__dict__") else 0)

        namespace["__post_init__"] = __post_init__
    if doc:
        namespace["__doc__"] = "A class."
    namespace["__module__"] = __name__
    namespace["__qualname__"] = "Made"
    return make(type("Made", (), namespace))


def _arguments(spec: list[dict[str, Any]], data: st.DataObject) -> tuple[list[Any], dict[str, Any]]:
    """Arguments for the fields that take one: the required ones, some of the others;
    the first few positionally."""
    taken = [f for f in spec if f["init"]]
    given_ = [f for f in taken if f["kind"] == "none" or data.draw(st.booleans())]
    # positional only up to the first one left out
    cut = 0
    while cut < len(taken) and taken[cut] in given_:
        cut += 1
    positional = data.draw(st.integers(0, cut))
    values = {f["name"]: data.draw(_VALUES) for f in given_}
    args = [values[f["name"]] for f in taken[:positional]]
    kwargs = {f["name"]: values[f["name"]] for f in given_ if f not in taken[:positional]}
    return args, kwargs


def _facts(instance: Any) -> dict[str, Any]:
    return {
        "values": {f.name: getattr(instance, f.name) for f in dataclasses.fields(instance)},
        "repr": repr(instance),
        "astuple": dataclasses.astuple(instance),
        "match_args": type(instance).__match_args__,
        "seen": getattr(instance, "seen", None),
    }


@settings(max_examples=300, deadline=None)
@given(
    spec=_specs(), slots=st.booleans(), post_init=st.booleans(), doc=st.booleans(), data=st.data()
)
def test_frozen_is_a_frozen_dataclass(
    spec: list[dict[str, Any]], slots: bool, post_init: bool, doc: bool, data: st.DataObject
) -> None:
    if slots and post_init:
        post_init = False  # a slotted class holds no "seen" attribute for it to set
    ours = _class(spec, frozen(slots=slots), post_init, doc)
    theirs = _class(spec, dataclasses.dataclass(frozen=True, slots=slots), post_init, doc)
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    assert ours.__doc__ == theirs.__doc__
    assert [f.name for f in dataclasses.fields(ours)] == [
        f.name for f in dataclasses.fields(theirs)
    ]
    assert hasattr(ours, "__slots__") == hasattr(theirs, "__slots__")
    pairs = []
    for _ in range(3):
        args, kwargs = _arguments(spec, data)
        a, b = ours(*args, **kwargs), theirs(*args, **kwargs)
        assert _facts(a) == _facts(b)
        pairs.append((a, b))
    for (a1, b1), (a2, b2) in itertools.pairwise(pairs):
        assert (a1 == a2) == (b1 == b2)
        assert _hash(a1) == _hash(b1)  # the same tuple hashed, or the same error
        assert (a1 == b1) is False  # another class
    a, b = pairs[0]
    # (not another name on slots: Python 3.10-3.11's frozen slotted dataclass fails on it
    # with a TypeError of super(), a bug of theirs)
    for name in [*(f["name"] for f in spec), *([] if slots else ["other"])]:
        with pytest.raises(dataclasses.FrozenInstanceError) as ours_error:
            setattr(a, name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError) as their_error:
            setattr(b, name, 1)
        assert str(ours_error.value) == str(their_error.value)
        with pytest.raises(dataclasses.FrozenInstanceError) as ours_error:
            delattr(a, name)
        with pytest.raises(dataclasses.FrozenInstanceError) as their_error:
            delattr(b, name)
        assert str(ours_error.value) == str(their_error.value)
    changes = {f["name"]: "changed" for f in spec if f["init"]}
    assert _facts(dataclasses.replace(a, **changes)) == _facts(dataclasses.replace(b, **changes))


def _hash(instance: Any) -> int | str:
    try:
        return hash(instance)
    except TypeError as error:  # a list among the fields hashed
        return str(error)


@frozen
class _Base:
    """A base."""

    x: int
    y: tuple[int, ...] = ()


@frozen
class _Derived(_Base):
    """A subclass adding a field."""

    z: str = "z"


@frozen(slots=True)
class _Slotted:
    """Slots."""

    a: str
    b: int = 0


@frozen
class _OwnMethods:
    """Its own repr and hash, kept."""

    a: int

    def __repr__(self) -> str:
        return "own"

    def __hash__(self) -> int:
        return 7


def test_subclasses_pickling_and_a_body_s_own_methods() -> None:
    derived = _Derived(1, (2,), "w")
    assert repr(derived) == "_Derived(x=1, y=(2,), z='w')"
    assert derived != _Base(1, (2,)) and derived == _Derived(1, (2,), "w")
    assert hash(derived) == hash((1, (2,), "w"))
    for value in (derived, _Slotted("a", 2), _Base(3)):
        copied = pickle.loads(pickle.dumps(value))
        assert copied == value and type(copied) is type(value)
    slotted = _Slotted("a")
    assert not hasattr(slotted, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        slotted.a = "b"  # type: ignore[misc]
    own = _OwnMethods(1)
    assert repr(own) == "own" and hash(own) == 7 and own == _OwnMethods(1)
    assert _Derived.__init__.__qualname__ == "_Derived.__init__"


def test_what_a_frozen_dataclass_refuses_is_refused() -> None:
    with pytest.raises(TypeError, match="__setattr__"):

        @frozen
        class _Settable:
            a: int

            def __setattr__(self, name: str, value: object) -> None: ...
