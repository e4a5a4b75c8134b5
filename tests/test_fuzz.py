"""Property tests: whatever the input, extract_source returns, and what it says holds.

The default run is short for CI; ERRSCAN_FUZZ_EXAMPLES=20000 makes a long one.
"""

from __future__ import annotations

import os

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import errscan
from errscan.models import MESSAGE_SOURCES, SITE_KINDS

# hypothesmith compiles what it generates; Python's warnings about that code are not ours
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

EXAMPLES = int(os.environ.get("ERRSCAN_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def check(code: str | bytes) -> None:
    records = errscan.extract_source(code)
    text = code.decode("utf-8", "replace") if isinstance(code, bytes) else code
    lines = max(1, len(text.splitlines()) + 1)
    for record in records:
        assert record.kind in SITE_KINDS and record.message_source in MESSAGE_SOURCES
        assert 1 <= record.line <= record.end_line <= lines
        assert record.context.start_line <= record.line <= record.context.end_line
        if record.message is not None:
            assert record.message == "".join(p.placeholder for p in record.message_parts)
        if record.message_source == "literal" and record.message:
            # plain pieces of a literal message stand in the source as they are
            for piece in record.message.split("\n"):
                if piece and piece.isalnum():
                    assert piece in text


@FUZZ
@given(st.binary(max_size=2_000))
def test_any_bytes(data: bytes) -> None:
    check(data)


@FUZZ
@given(st.text(max_size=2_000))
def test_any_text(code: str) -> None:
    check(code)


@FUZZ
@given(hypothesmith.from_grammar())
def test_grammatical_programs(code: str) -> None:
    check(code)


@FUZZ
@given(
    st.lists(
        st.sampled_from(
            [
                'raise ValueError("a literal message")',
                "raise ValueError(f'{x!r:>{w}} of {y}')",
                'msg = "start"\nmsg += f" {z}"\nraise KeyError(msg)',
                'assert cond, "%s and %d" % (a, b)',
                'raise E("{} {name}".format(p, name=q)) from exc',
                "try:\n    pass\nexcept (A, B) as e:\n    raise",
                'import sys\nsys.exit("bye")',
                'import warnings\nwarnings.warn("old", DeprecationWarning)',
                "def f():\n    raise NotImplementedError",
                "class C:\n    T = 'tmpl {a}'\n"
                "    def m(self):\n        raise E(self.T.format(a=1))",
            ]
        ),
        max_size=12,
    )
)
def test_programs_of_raise_forms(snippets: list[str]) -> None:
    check("\n".join(snippets) + "\n")
