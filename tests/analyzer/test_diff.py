"""The Markdown of a diff fits a pull-request comment."""

from __future__ import annotations

import errscan
from errscan.analyzer import diff as diff_stage


def test_markdown_is_capped_with_the_counts_and_how_many_more() -> None:
    source = "".join(
        f"def f{i}(x):\n    raise ValueError(f'error number {i} with a long message {{x}}')\n"
        for i in range(3000)
    )
    new = errscan.extract_source(source)
    changes = diff_stage.diff([], new, "a" * 40, "b" * 40)
    assert changes.counts()["added"] == 3000
    text = diff_stage.markdown(changes)
    assert len(text) <= diff_stage.COMMENT_LIMIT
    assert "| 3000 | 0 | 0 | 0 |" in text
    shown = text.count("\n- ")
    assert 0 < shown < 3000 and f"and {3000 - shown} more changes" in text
    small = diff_stage.diff([], new[:3], "a" * 40, "b" * 40)
    assert "more changes" not in diff_stage.markdown(small)
    assert diff_stage.markdown(small).count("\n- ") == 3
