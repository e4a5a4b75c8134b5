"""Guards, environment variables and trigger sentences, one row per form."""

from __future__ import annotations

import textwrap

import pytest

import errscan


def site(code: str, path: str = "pkg/mod.py") -> errscan.ErrorRecord:
    (record,) = [r for r in errscan.extract_source(textwrap.dedent(code), path=path)]
    return record


GUARDS = [
    ("if ok:\n    raise E('x')", ("ok",)),
    ("if not x:\n    raise E('x')", ("not x",)),
    ("if a:\n    pass\nelif b:\n    raise E('x')", ("not a", "b")),
    ("if a and b:\n    pass\nelse:\n    raise E('x')", ("not (a and b)",)),
    ("if not a:\n    pass\nelse:\n    raise E('x')", ("a",)),
    ("while busy:\n    raise E('x')", ("busy",)),
    ("for item in items:\n    raise E('x')", ("for item in items",)),
    (
        "match kind:\n    case 'a' if n > 1:\n        raise E('x')",
        ("match kind", "case 'a' if n > 1"),
    ),
    (
        "try:\n    pass\nexcept (KeyError, OSError):\n    raise E('x')",
        ("except (KeyError, OSError)",),
    ),
    ("try:\n    pass\nexcept:\n    raise E('x')", ("except",)),
    ("assert x > 0, 'positive'", ("not (x > 0)",)),
    ("with lock:\n    raise E('x')", ()),
]


@pytest.mark.parametrize(("body", "expected"), GUARDS)
def test_guards(body: str, expected: tuple[str, ...]) -> None:
    code = "def f(ok, x, a, b, busy, items, kind, n, lock):\n" + textwrap.indent(body, "    ")
    assert site(code).guards == expected


ENV = [
    ('if os.environ.get("FOO_BAR"):\n    raise E("x")', ("FOO_BAR",)),
    ('if os.environ["FOO_BAR"] == "1":\n    raise E("x")', ("FOO_BAR",)),
    ('if os.getenv("FOO_BAR"):\n    raise E("x")', ("FOO_BAR",)),
    ('if "FOO_BAR" in os.environ:\n    raise E("x")', ("FOO_BAR",)),
    ('if get_bool_env_var("FOO_BAR"):\n    raise E("x")', ("FOO_BAR",)),
    ("if envs.FOO_BAR.get():\n    raise E('x')", ("FOO_BAR",)),
    ("if settings.FOO_BAR:\n    raise E('x')", ()),  # a settings object is no environment
    ('if config["NO_CACHE"]:\n    raise E("x")', ()),
    ('DEFAULTS = {"NO_CACHE": 1}  # settings\nraise E("NO_CACHE is set")', ()),
    ("if self.FOO_BAR:\n    raise E('x')", ()),
    ("raise E(f\"home is {os.environ['HOME_DIR']}\")", ("HOME_DIR",)),
]


@pytest.mark.parametrize(("body", "expected"), ENV)
def test_environment_variables(body: str, expected: tuple[str, ...]) -> None:
    code = "import os\ndef f(self):\n" + textwrap.indent(body, "    ")
    assert site(code).env_vars == expected


def test_message_that_names_a_variable_read_elsewhere_in_the_file() -> None:
    code = """
        import os
        ENABLED = os.environ.get("SGLANG_RUST_SERVER")
        def f(flag):
            if flag:
                raise ValueError("Unset SGLANG_RUST_SERVER to use sgl.Engine; HTTP_ERROR_CODE")
        """
    assert site(code).env_vars == ("SGLANG_RUST_SERVER",)


TRIGGERS = [
    (
        """
        class OutputStreamer:
            def __post_init__(self) -> None:
                if self.has_additional_customized_info and self.rust_server is not None:
                    raise ValueError("not supported by Rust egress")
        """,
        "Raised while constructing OutputStreamer (OutputStreamer.__post_init__) when "
        "self.has_additional_customized_info and self.rust_server is not None.",
    ),
    (
        """
        class Engine:
            def start(self):
                if envs.SGLANG_RUST_SERVER.get():
                    raise ValueError("SGLANG_RUST_SERVER is not supported")
        """,
        "Raised by Engine.start when the environment variable SGLANG_RUST_SERVER is set.",
    ),
    (
        """
        import os
        def load():
            if not os.environ.get("HOME_DIR"):
                raise RuntimeError("no home")
        """,
        "Raised by load when the environment variable HOME_DIR is not set.",
    ),
    (
        """
        class Box:
            @property
            def size(self):
                raise AttributeError("no size")
        """,
        "Raised while reading Box.size.",
    ),
    ("raise ImportError('needs numpy')\n", "Raised while importing mod."),
    (
        """
        def convert(items):
            for item in items:
                try:
                    int(item)
                except ValueError:
                    raise
        """,
        "Re-raised by convert while handling ValueError when iterating item in items.",
    ),
    ("def f(x):\n    assert x, 'x needed'\n", "An assertion fails in f when not x."),
    (
        "def f(x):\n    if not (x is not None):\n        raise E('x')\n",
        "Raised by f when x is None.",
    ),
    ("def f():\n    while True:\n        raise E('x')\n", "Raised by f."),
    (
        "def f():\n    try:\n        g()\n    except:\n        raise E('x')\n",
        "Raised by f while handling any exception.",
    ),
    (
        "def f(x):\n    if x is None:\n        return\n    raise E('x')\n",
        "Raised by f when x is not None.",
    ),
    (
        "def f(xs):\n    for x in xs:\n        break\n    else:\n        raise E('x')\n",
        "Raised by f when the loop for x in xs ended without break.",
    ),
    (
        "def f():\n    try:\n        g()\n    except E:\n        pass\n"
        "    else:\n        raise E('x')\n",
        "Raised by f when the try block raised nothing.",
    ),
    ("import sys\nsys.exit('bye')\n", "Exits while importing mod."),
]


def test_a_trigger_is_capped_and_its_guards_keep_the_conditions() -> None:
    test = " and ".join(f"x.attribute_{i}" for i in range(20))  # 365 characters: a guard keeps 500
    nested = "".join("    " * i + f"if c{i}:\n" for i in range(1, 30))
    for code in (
        f"def f(x):\n    if {test}:\n        raise E('x')\n",
        f"def f(x):\n{nested}" + "    " * 30 + "raise E('x')\n",
    ):
        record = site(code)
        assert len(record.trigger) <= 205, record.trigger
        assert record.trigger.endswith(("….", "more conditions."))
    assert site(f"def f(x):\n    if {test}:\n        raise E('x')\n").guards == (test,)


@pytest.mark.parametrize(("code", "sentence"), TRIGGERS)
def test_trigger_sentences(code: str, sentence: str) -> None:
    assert site(code).trigger == sentence


def test_two_errors_of_one_function_rank_each_other_first() -> None:
    code = """
        def parse(text):
            if not text:
                raise ValueError("empty text")
            if len(text) > 10:
                raise ValueError(f"text too long: {len(text)}")

        def unrelated_one():
            raise KeyError("something else entirely")

        def unrelated_two():
            raise OSError("disk trouble")
        """
    records = errscan.extract_source(textwrap.dedent(code))
    first, second = records[0], records[1]
    assert first.related[0] == second.id
    assert second.related[0] == first.id
    assert all(r.id not in r.related for r in records)
    assert all(len(r.related) <= 5 for r in records)


def test_related_across_files_shares_environment_and_words(tmp_path: object) -> None:
    from pathlib import Path

    from tests.support import commit_all, git

    repo = Path(str(tmp_path)) / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.py").write_text(
        "import os\nif os.environ.get('TURBO_MODE'):\n    raise ValueError('turbo mode broken')\n"
    )
    (repo / "b.py").write_text(
        "import os\ndef g():\n    if os.getenv('TURBO_MODE'):\n        raise RuntimeError('x')\n"
        "def h():\n    raise KeyError('unrelated')\n"
    )
    commit_all(repo, "two files")
    records = errscan.extract(str(repo)).records
    by_file = {r.file: r for r in records if r.exception != "KeyError"}
    assert by_file["a.py"].related[0] == by_file["b.py"].id
