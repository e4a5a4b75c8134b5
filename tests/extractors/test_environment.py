"""Where a file speaks of the environment."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from errscan.extractors import environment

_LINE = st.lists(
    st.sampled_from(
        [
            *("env", "ENV", "Env", "eNv", "_env", "env_", "environ", "GETENV", "envs"),
            *("x", " ", "#", "E", "NV"),
            # letters whose lowering or case folding is not plain: dotted capital I (two
            # letters lowered), long s, the Kelvin sign, e acute
            *("\u0130", "\u017f", "\u212a", "\u00e9"),
        ]
    ),
    max_size=6,
).map("".join)


@given(st.lists(_LINE, max_size=12))
def test_the_lines_found_in_one_search_are_those_a_search_a_line_finds(lines: list[str]) -> None:
    found = environment.Mentions(lines)._environment_lines()
    assert found == [n for n, line in enumerate(lines, 1) if environment._ENV_LINE.search(line)]
