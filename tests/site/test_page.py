"""Pages of records: Markdown parts, and the HTML page opened in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import errscan
from errscan.cli import cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def records_of(repo: Path) -> list[errscan.ErrorRecord]:
    return list(errscan.extract(str(repo), repo_name="acme/engine").records)


def the_engine_record(records: list[errscan.ErrorRecord]) -> errscan.ErrorRecord:
    return next(r for r in records if r.file == "pkg/engine.py" and r.line == 11)


def test_markdown_page_parts(basic_repo: Path) -> None:
    records = records_of(basic_repo)
    text = errscan.page(the_engine_record(records), records)
    heading = "# SGLANG\\_RUST\\_SERVER is not supported with the offline"
    assert text.startswith(f"acme/engine · error · ValueError\n\n{heading}")
    for part in ("## Error message", "Thrown at pkg/engine.py:11", "→ 11 |",
                 "[View on GitHub (pinned to ", "## When it happens", "Trigger: Raised while "
                 "constructing Engine", "`SGLANG_RUST_SERVER`", "## Related errors",
                 "## Record", '"id": "'):  # fmt: skip
        assert part in text
    section = text.split("## Related errors", 1)[1].split("## Record", 1)[0]
    related = [line for line in section.splitlines() if line.startswith("- ")]
    shown = [re.sub(r"\\(.)", r"\1", line.split(": ", 1)[1].split(" (`")[0]) for line in related]
    assert related and all(len(message) <= 61 for message in shown)  # backslash escapes read


def test_show_and_lookup_commands(basic_repo: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    records = tmp_path / "records.jsonl"
    assert runner.invoke(cli, ["extract", str(basic_repo), "-q", "-o", str(records)]).exit_code == 0
    record = the_engine_record(errscan.load_records(records))
    shown = runner.invoke(cli, ["show", record.id[:8], "--from", str(records)])
    assert shown.exit_code == 0 and "Thrown at pkg/engine.py:11" in shown.stdout
    found = runner.invoke(cli, ["lookup", "ValueError: SGLANG_RUST_SERVER is not supported with "
                                "the offline Engine API; it only replaces the HTTP server path "
                                "(`sglang serve`). Unset SGLANG_RUST_SERVER to use sgl.Engine.",
                                "--from", str(records), "--json"])  # fmt: skip
    assert found.exit_code == 0 and '"id": "' + record.id in found.stdout
    by_scan = runner.invoke(cli, ["lookup", "cannot load 'x'", "--scan", f"{basic_repo}@HEAD"])
    assert by_scan.exit_code == 0 and "pkg/engine.py:35" in by_scan.stdout
    missing = runner.invoke(cli, ["show", "ffff", "--from", str(records)])
    assert missing.exit_code == 2 and "no record with id 'ffff'" in missing.stderr
    neither = runner.invoke(cli, ["show", record.id])
    assert neither.exit_code == 2 and "--from FILE or --scan REPO@REV" in neither.stderr


@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
def test_html_page_in_headless_chromium(basic_repo: Path, tmp_path: Path) -> None:
    records = records_of(basic_repo)
    page = tmp_path / "page.html"
    html = errscan.page(the_engine_record(records), records, "html")
    # a page of its own: its style inline, no script at all, and a policy that allows none
    assert "<script" not in html and "default-src 'none'; style-src 'unsafe-inline'" in html
    assert '<meta name="viewport"' in html and "prefers-color-scheme: dark" in html
    page.write_text(html, encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    assert CHROMIUM is not None
    dom = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    ).stdout
    assert '<p class="kicker">acme/engine · error · ValueError</p>' in dom
    assert 'Thrown at <code class="where">pkg/engine.py:11</code>' in dom
    shot = tmp_path / "page.png"
    subprocess.run(
        [CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri()],
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 10_000


def test_a_default_message_is_said_to_be_one(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "check.py").write_text(
        "class Range:\n"
        "    def __init__(self, low, msg=None):\n"
        "        self.low, self.msg = low, msg\n"
        "\n"
        "    def __call__(self, value):\n"
        "        if value < self.low:\n"
        "            raise ValueError(self.msg or 'value must be at least %s' % self.low)\n"
        "        raise ValueError('not a default')\n"
    )
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    records = records_of(repo)
    default, plain = sorted(records, key=lambda r: r.line)
    assert (default.message, default.message_source) == ("value must be at least {self.low}",
                                                         "default")  # fmt: skip
    note = "The code's own text, which the project's users may replace with theirs."
    assert note in errscan.page(default, records)
    assert note not in errscan.page(plain, records)
    assert note in errscan.page(default, records, "html")
