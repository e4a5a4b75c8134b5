"""Standard exception classes as the interpreter has them, read only from listed modules."""

from __future__ import annotations

import sys

import pytest

from errscan.analyzer import stdlib


@pytest.mark.parametrize(
    ("written", "runtime"),
    [
        ("copy.error", "copy.Error"),
        ("pickle.PicklingError", f"{__import__('pickle').PicklingError.__module__}.PicklingError"),
        ("socket.timeout", "builtins.TimeoutError"),
        ("json.JSONDecodeError", "json.decoder.JSONDecodeError"),
        ("subprocess.CalledProcessError", "subprocess.CalledProcessError"),
    ],
)
def test_a_standard_name_is_the_class_it_is_at_run_time(written: str, runtime: str) -> None:
    assert stdlib.canonical(written) == runtime


def test_the_ancestors_of_a_standard_class_end_at_exception() -> None:
    assert stdlib.ancestors("json.decoder.JSONDecodeError") == ["ValueError", "Exception"]
    canonical = stdlib.canonical("pickle.PicklingError")
    assert canonical is not None
    assert stdlib.ancestors(canonical) == ["PickleError", "Exception"]


@pytest.mark.parametrize(
    "name", ["antigravity.Error", "this.Error", "tkinter.TclError", "msgs.errors.ConfigError"]
)
def test_a_module_off_the_list_is_never_imported(name: str) -> None:
    module = name.rpartition(".")[0]
    was_loaded = module in sys.modules
    assert stdlib.canonical(name) is None
    assert (module in sys.modules) == was_loaded


def test_a_name_that_is_no_exception_class_is_none() -> None:
    assert stdlib.canonical("os.path") is None
    assert stdlib.canonical("json.dumps") is None
    assert stdlib.canonical("copy.no_such_name") is None
