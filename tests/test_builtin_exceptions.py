"""The built-in exception table: Python 3.13's classes, whatever Python errscan runs on."""

from __future__ import annotations

import builtins
import sys

from errscan.builtin_exceptions import BUILTIN_EXCEPTIONS, is_builtin_subclass


def test_the_table_holds_this_interpreter_s_classes_in_their_order() -> None:
    """Every public built-in exception class of the running interpreter is in the table,
    with its method resolution order: only a newer Python's own classes are extra."""
    own = {
        name: tuple(c.__name__ for c in value.__mro__ if c is not object)
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException) and name[0] != "_"
    }
    assert {name: BUILTIN_EXCEPTIONS[name] for name in own} == own
    extra = set(BUILTIN_EXCEPTIONS) - set(own)
    newer = {
        (3, 11): {"ExceptionGroup", "BaseExceptionGroup"},
        (3, 13): {"PythonFinalizationError"},
    }
    assert extra == {n for since, names in newer.items() if sys.version_info < since for n in names}


def test_subclasses_are_told_by_name() -> None:
    assert is_builtin_subclass("FileNotFoundError", "OSError")
    assert is_builtin_subclass("KeyError", "KeyError")
    assert is_builtin_subclass("ExceptionGroup", "BaseExceptionGroup")
    assert not is_builtin_subclass("KeyboardInterrupt", "Exception")
    assert not is_builtin_subclass("MyError", "Exception")
