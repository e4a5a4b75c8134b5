"""`@frozen`: `@dataclass(frozen=True)` made in a fifth of the time.

On Python 3.10 to 3.12, `dataclass` compiles Python source for each method it writes: a
frozen class costs six `exec` calls (`__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__`, `__delattr__`), 0.4 ms for five fields and 1.2 ms for thirty. errscan
defines some thirty such classes before a scan's first worker starts, while one CPU
waits: 17 ms of a cold scan's start went to them. Here `dataclass` itself only reads
the fields (so `dataclasses.fields`, `replace` and `asdict` work as ever); `__init__` is
compiled (its speed counts: a scan makes a record for every site), and the other
methods are closures over the field names. Those compare and hash more slowly than
compiled ones (0.67 against 0.29 us for two equal sites), which costs nothing here:
a first scan of Django compares 263 pairs, and hashes none.

The classes behave as `@dataclass(frozen=True)` makes them (tests/test_frozen.py
holds the two to each other): the same `__init__` signature, equality and hash over the
compared fields, repr, FrozenInstanceError on assignment, pickling, `__post_init__`.
A method the class body defines is kept, as `dataclass` keeps it. Not supported:
InitVar and keyword-only fields, and the repr of an instance that holds itself (which
dataclass writes as `...`), none of which errscan has.
"""

from __future__ import annotations

import dataclasses
import operator
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:  # (typing's own from Python 3.11)
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10: only type checkers read it

    def dataclass_transform(**_kwargs: Any) -> Callable[[Any], Any]:
        return lambda decorated: decorated


__all__ = ["frozen"]

_T = TypeVar("_T")


@overload
@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: type[_T], /) -> type[_T]: ...
@overload
def frozen(*, slots: bool = False) -> Callable[[type[_T]], type[_T]]: ...


def frozen(cls: type[_T] | None = None, /, *, slots: bool = False) -> Any:
    """The class as `@dataclass(frozen=True, slots=slots)` would make it."""

    def wrap(cls: type[_T]) -> type[_T]:
        return _make(cls, slots)

    return wrap if cls is None else wrap(cls)


def _make(cls: type[_T], slots: bool) -> type[_T]:
    for name in ("__setattr__", "__delattr__"):
        if name in cls.__dict__:  # as dataclass(frozen=True) refuses it
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    undocumented = cls.__doc__ is None
    if undocumented:  # dataclass would write a signature of the __init__ not yet made
        cls.__doc__ = "-"
    # the fields, __dataclass_fields__, __match_args__ and the slots; no method compiled
    # (so __dataclass_params__ says init, repr and eq are not dataclass's own)
    made: Any = dataclasses.dataclass(init=False, repr=False, eq=False, slots=slots)(cls)
    fields = dataclasses.fields(made)
    for field in fields:
        if field.kw_only is True:
            raise TypeError(f"{cls.__name__}.{field.name}: keyword-only fields are not supported")
    own = dict(made.__dict__)  # what the class body defines is kept, as dataclass keeps it
    methods: dict[str, Callable[..., Any]] = {}
    if "__init__" not in own:
        methods["__init__"] = _init(made, fields, slots)
    if "__repr__" not in own:
        methods["__repr__"] = _repr(tuple(f.name for f in fields if f.repr))
    if "__eq__" not in own:
        methods["__eq__"] = _eq(_key(tuple(f.name for f in fields if f.compare)))
    body_hash = own.get("__hash__", dataclasses.MISSING)
    if body_hash is dataclasses.MISSING or (body_hash is None and "__eq__" in own):
        # frozen and compared by value: hashed by value (the fields compared, unless a
        # field says otherwise), where the body defines no __hash__ of its own
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        methods["__hash__"] = _hash(_key(hashed))
    methods["__setattr__"], methods["__delattr__"] = _refusals(
        made, frozenset(f.name for f in fields)
    )
    if slots:  # no __dict__ for pickle to fill: the state methods dataclass gives them
        methods["__getstate__"], methods["__setstate__"] = _slot_state(
            tuple(f.name for f in fields)
        )
    for name, method in methods.items():
        method.__qualname__ = f"{made.__qualname__}.{name}"
        setattr(made, name, method)
    if undocumented:  # as dataclass writes it: the signature
        import inspect

        made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(" -> None", "")
    return made  # type: ignore[no-any-return]


def _init(
    cls: type, fields: tuple[dataclasses.Field[Any], ...], slots: bool
) -> Callable[..., None]:
    """`__init__`, compiled as dataclass compiles it: each field set through
    object.__setattr__, a default factory called where its argument was not given."""
    scope: dict[str, Any] = {"__errscan_set": object.__setattr__, "__errscan_made": _FACTORY}
    params, lines = ["self"], []
    for field in fields:
        name = field.name
        if field.default is not dataclasses.MISSING:
            scope[f"__errscan_default_{name}"] = field.default
            value = f"__errscan_default_{name}"
        elif field.default_factory is not dataclasses.MISSING:
            scope[f"__errscan_factory_{name}"] = field.default_factory
            value = f"__errscan_factory_{name}()"
        else:
            value = ""
        if not field.init:
            # a plain default is the class attribute's, but where slots took it away
            factory = field.default_factory is not dataclasses.MISSING
            if factory or (value and slots):
                lines.append(f"__errscan_set(self, {name!r}, {value})")
            continue
        if field.default_factory is not dataclasses.MISSING:
            params.append(f"{name}=__errscan_made")
            value = f"{value} if {name} is __errscan_made else {name}"
        else:
            params.append(f"{name}={value}" if value else name)
            value = name
        lines.append(f"__errscan_set(self, {name!r}, {value})")
    if hasattr(cls, "__post_init__"):
        lines.append("self.__post_init__()")
    body = "\n".join(f"    {line}" for line in lines) or "    pass"
    exec(f"def __init__({', '.join(params)}):\n{body}\n", scope)
    init: Callable[..., None] = scope["__init__"]
    init.__annotations__ = {**{f.name: f.type for f in fields if f.init}, "return": None}
    return init


class _Factory:
    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()  # the default of a field made by a factory, as dataclass shows it


def _key(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The tuple of the named attributes (a one-tuple for one name, as dataclass makes)."""
    if not names:
        return lambda _self: ()
    if len(names) == 1:
        name = names[0]
        return lambda self: (getattr(self, name),)
    return operator.attrgetter(*names)


def _eq(key: Callable[[object], tuple[Any, ...]]) -> Callable[[object, object], Any]:
    def __eq__(self: object, other: object) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[object], tuple[Any, ...]]) -> Callable[[object], int]:
    def __hash__(self: object) -> int:
        return hash(key(self))

    return __hash__


def _repr(names: tuple[str, ...]) -> Callable[[object], str]:
    def __repr__(self: object) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _refusals(
    cls: type[Any], names: frozenset[str]
) -> tuple[Callable[[object, str, object], None], Callable[[object, str], None]]:
    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


def _slot_state(
    names: tuple[str, ...],
) -> tuple[Callable[[object], list[Any]], Callable[[object, list[Any]], None]]:
    def __getstate__(self: object) -> list[Any]:
        return [getattr(self, name) for name in names]

    def __setstate__(self: object, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=False):
            object.__setattr__(self, name, value)

    return __getstate__, __setstate__
