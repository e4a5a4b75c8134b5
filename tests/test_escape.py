"""Text from a scanned repository shown in Markdown, HTML, terminals and CSV acts as text.

The pages are rendered by Python-Markdown (MkDocs' renderer, which lets HTML through)
and by markdown-it with HTML on: nothing the repository wrote becomes a tag, a heading,
an image or a link, and no control character reaches a terminal.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import markdown as python_markdown
import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

import errscan
from errscan import escape
from errscan.cli import cli
from tests.support import commit_all, git, write

EVIL_NAME = "pkg/<img src=x onerror=alert(1)>.py"
EVIL_SOURCE = """\
import os


def run(x):
    if x == "``": # a guard with backticks
        raise ValueError("```\\n<script>alert(1)</script>\\n# Heading\\n![t](https://t.invalid/p.png)")
    if os.environ.get("A`B"):
        raise RuntimeError("\\x1b]0;pwned\\x07\\x1b[2J\\x1b]8;;https://evil.invalid\\x07click\\x1b]8;;\\x07")
    raise TypeError("=HYPERLINK(\\"https://evil.invalid\\")")
"""


@pytest.fixture
def evil(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose messages and file names attack each output; its records file."""
    repo = tmp_path / "evil"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, EVIL_NAME, EVIL_SOURCE)
    commit_all(repo, "one")
    write(repo, EVIL_NAME, EVIL_SOURCE.replace("alert(1)</script>", "alert(2)</script>"))
    commit_all(repo, "two")
    records = tmp_path / "records.jsonl"
    done = CliRunner().invoke(cli, ["extract", f"{repo}@main", "-q", "-o", str(records)])
    assert done.exit_code == 0, done.output
    return repo, records


def _renders(markdown_text: str) -> list[str]:
    return [
        python_markdown.markdown(markdown_text, extensions=["fenced_code", "tables", "attr_list"]),
        MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown_text),
    ]


def _tags(html_text: str) -> set[str]:
    return {tag.lower() for tag in re.findall(r"<\s*([a-zA-Z][a-zA-Z0-9]*)", html_text)}


_SAFE_TAGS = {"h1", "h2", "h3", "h4", "p", "pre", "code", "ul", "li", "a", "table", "thead",
              "tbody", "tr", "th", "td", "em", "strong"}  # fmt: skip


def test_show_markdown_survives_html_allowing_renderers(evil: tuple[Path, Path]) -> None:
    _, records = evil
    for record in errscan.load_records(records):
        page = CliRunner().invoke(cli, ["show", record.id, "--from", str(records)])
        assert page.exit_code == 0
        assert "\x1b" not in page.stdout and "\x07" not in page.stdout
        for html_text in _renders(page.stdout):
            assert _tags(html_text) <= _SAFE_TAGS, _tags(html_text) - _SAFE_TAGS
            assert "onerror" not in re.sub(r"&lt;.*?&gt;", "", html_text)
            headings = re.findall(r"<h(\d)>(.*?)</h\1>", html_text)
            assert [h for h, _ in headings] == ["1", "2", "2", "2", "2", "2"], headings
            assert "evil.invalid" not in " ".join(re.findall(r'href="([^"]*)"', html_text))


def test_diff_markdown_survives_renderers_and_text_outputs_show_no_control(
    evil: tuple[Path, Path],
) -> None:
    repo, _ = evil
    runner = CliRunner()
    markdown_diff = runner.invoke(cli, ["diff", f"{repo}@main~1", "main", "--format", "markdown"])
    assert markdown_diff.exit_code == 0 and "reworded" in markdown_diff.stdout.lower()
    for html_text in _renders(markdown_diff.stdout):
        assert _tags(html_text) <= _SAFE_TAGS, _tags(html_text) - _SAFE_TAGS
        assert len(re.findall(r"<h\d>", html_text)) == 2  # the title and "Reworded"
    text_diff = runner.invoke(cli, ["diff", f"{repo}@main~1", "main"])
    pasted = (
        "RuntimeError: \x1b]0;pwned\x07\x1b[2J\x1b]8;;https://evil.invalid\x07click\x1b]8;;\x07"
    )
    lookup = runner.invoke(cli, ["lookup", pasted, "--scan", f"{repo}@main"])
    assert lookup.exit_code == 0 and lookup.stdout
    for shown in (text_diff.stdout, lookup.stdout):
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown), shown
        assert "\\x1b]0;pwned" in shown or "<script>" in shown


def test_csv_cells_are_never_formulas(evil: tuple[Path, Path], tmp_path: Path) -> None:
    repo, _ = evil
    db = tmp_path / "s.db"
    runner = CliRunner()
    assert runner.invoke(cli, ["extract", f"{repo}@main", "-q", "--db", str(db), "-o", "/dev/null"])
    out = tmp_path / "x.csv"
    done = runner.invoke(
        cli, ["export", f"{repo}@main", "--db", str(db), "--format", "csv", "-o", str(out)]
    )
    assert done.exit_code == 0, done.output
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    cells = [cell for row in rows for cell in row]
    assert any(cell.startswith("'=HYPERLINK") for cell in cells)
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in cells)


def test_only_http_urls_become_links(evil: tuple[Path, Path], tmp_path: Path) -> None:
    _, records = evil
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    rows = [row for row in rows if "id" in row]
    for row in rows:
        row["url"] = "javascript:alert(document.cookie)//"
    forged = tmp_path / "forged.jsonl"
    forged.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for fmt in ("markdown", "html"):
        page = CliRunner().invoke(
            cli, ["show", rows[0]["id"], "--from", str(forged), "--format", fmt]
        )
        assert page.exit_code == 0
        html_text = page.stdout if fmt == "html" else _renders(page.stdout)[0]
        assert not re.findall(r'href="([^"]*)"', html_text)
        assert "View on GitHub" not in html_text


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("plain", "`plain`"),
        ("a `b` c", "``a `b` c``"),
        ("``", "``` `` ```"),
        ("`x", "`` `x ``"),
        ("line\nbreak", "`line\\nbreak`"),
        ("\x1b[2J", "`\\x1b[2J`"),
    ],
)
def test_code_span(text: str, span: str) -> None:
    assert escape.code_span(text) == span


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("a\rb", "a\\rb"),
        ("tab\there", "tab\\there"),
        ("\u202eevil", "\\u202eevil"),
        ("\ud800", "\\ud800"),
        ("\x9b31m", "\\x9b31m"),
        ("café ✓", "café ✓"),
    ],
)
def test_visible(text: str, shown: str) -> None:
    assert escape.visible(text) == shown


def test_fence_is_longer_than_any_run_inside() -> None:
    assert escape.fence("a\n````\nb", "text") == "`````text\na\n````\nb\n`````"
    assert escape.fence("x") == "```\nx\n```"


def test_inline_neutralises_markup() -> None:
    assert escape.inline("![t](u) <b>&") == "\\!\\[t\\](u) &lt;b&gt;&amp;"
    assert escape.inline("a\n# b") == "a\\\\n\\# b"  # shown as a\n# b
    assert escape.csv_cell("-1+2") == "'-1+2" and escape.csv_cell("ok=1") == "ok=1"
    assert escape.link_url("javascript:alert(1)") is None
    assert escape.link_url("https://github.com/o/n/blob/x/a.py#L1") is not None
