"""Standard exception classes as the interpreter has them, read only from listed modules."""

from __future__ import annotations

import sys

import pytest

import errscan
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


def test_a_standard_class_making_its_own_text_is_not_read_as_its_argument() -> None:
    import http.client
    import urllib.error

    assert stdlib.composes_text("http.client.LineTooLong")
    assert stdlib.composes_text("urllib.error.URLError")
    assert not stdlib.composes_text("queue.Empty") and not stdlib.composes_text("csv.Error")
    code = (
        "import http.client, queue, urllib.error\n"
        "def f(p):\n"
        "    raise http.client.LineTooLong('header line')\n"
        "def g(p):\n"
        "    raise urllib.error.URLError(f'bad {p}')\n"
        "def h(p):\n"
        "    raise queue.Empty(f'nothing for {p}')\n"
    )
    found = {r.line: r.message for r in errscan.extract_source(code)}
    assert found == {3: None, 5: None, 7: "nothing for {p}"}
    # what Python says, which neither argument is
    assert str(http.client.LineTooLong("header line")) != "header line"
    assert str(urllib.error.URLError("bad x")) == "<urlopen error bad x>"
