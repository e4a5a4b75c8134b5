"""`errscan site` and `errscan serve`: the files, incremental rebuilds, the server, and the
site in headless Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator, Sequence
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import errscan
from errscan.cli import cli
from errscan.site.build import slug
from tests.support import ROOT, build_repo, commit_all, git, write

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(os.environ.get("ERRSCAN_TEST_ARTIFACTS", ROOT / "test-artifacts"))
HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
_LIB = f"""
def load(path):
    raise ValueError(f"cannot load the weights file {{path!r}}: not supported")


def check(value):
    if value < 0:
        raise ValueError("value must be non-negative, not supported")


def hostile():
    raise RuntimeError({HOSTILE!r})
"""


class Changes:
    """What a build wrote and removed, in order, as it told them (build_site's `changed`)."""

    def __init__(self) -> None:
        self.written: list[str] = []
        self.removed: list[str] = []
        self.files = 0  # the report's

    def __call__(self, path: str, removed: bool) -> None:
        (self.removed if removed else self.written).append(path)


def build(site: Path, db: Path, repos: Sequence[str] = ()) -> Changes:
    """Build the site; what it wrote and removed, checked against the report's counts."""
    changes = Changes()
    report = errscan.build_site(site, db, repos, changed=changes)
    assert (report.written, report.removed) == (len(changes.written), len(changes.removed))
    assert len(set(changes.written)) == len(changes.written)
    changes.files = report.files
    return changes


def run(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A store of two fixture repositories (one named as on GitHub) and its site."""
    root = tmp_path_factory.mktemp("site")
    basic = build_repo(root / "basic", "basic")
    lib = root / "lib"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    write(lib, "weights/loader.py", _LIB)
    commit_all(lib, "first")
    db = root / "errscan.db"
    cache = root / "cache"
    for target, name in ((basic, "acme/engine"), (lib, "acme/weights")):
        code, _, err = run("extract", str(target), "-q", "-o", os.devnull, "--db", str(db),
                           "--repo-name", name, "--cache-dir", str(cache))  # fmt: skip
        assert code == 0, err
    site = root / "out"
    code, _, err = run("site", "--db", str(db), "-o", str(site))
    assert code == 0, err
    return {"root": root, "basic": basic, "lib": lib, "db": db, "site": site, "cache": cache}


def records(built: dict[str, Path], name: str) -> list[errscan.ErrorRecord]:
    return errscan.stored_records([name], built["db"])


def test_the_site_holds_every_page_and_the_api(built: dict[str, Path]) -> None:
    site = built["site"]
    for path in ("index.html", "404.html", "sitemap.xml", "api/index.json",
                 "repos/acme/engine/index.html", "api/repos/acme/weights.json",
                 "api/templates/acme/weights.json", "static/site.css", "static/search.js",
                 "search/meta.json"):  # fmt: skip
        assert (site / path).is_file(), path
    for record in records(built, "acme/engine") + records(built, "acme/weights"):
        page = (site / "errors" / f"{record.id}.html").read_text()
        assert 'name="viewport"' in page and "Content-Security-Policy" in page
        data = json.loads((site / "api" / "errors" / f"{record.id}.json").read_text())
        assert data["record"] == record.to_dict()
        assert data["history"][-1]["commit"] == record.commit
    text = (site / "api/repos/acme/engine.json").read_text()  # streamed, as json writes it
    summary = json.loads(text)
    assert summary["ids"] == sorted(r.id for r in records(built, "acme/engine"))
    assert text == json.dumps(summary, ensure_ascii=False, sort_keys=True,
                              separators=(",", ":")) + "\n"  # fmt: skip
    for name in ("engine", "weights"):  # each group's count is that of its items
        html = (site / f"repos/acme/{name}/index.html").read_text()
        groups = re.findall(r'<summary>[^<]*<span class="muted">\((\d+)\)</span></summary>\n'
                            r'<ul class="errors">\n(.*?)</ul>', html, re.S)  # fmt: skip
        resolved = [r for r in records(built, f"acme/{name}") if r.message is not None]
        assert groups and sum(int(n) for n, _ in groups) == len(resolved)
        assert all(int(n) == items.count("<li") for n, items in groups)
    for shard in (site / "search").rglob("*.json"):  # compact JSON, as the shards were
        text = shard.read_text()
        compact = json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
        assert text == compact + "\n"
    assert "<loc>errors/" in (site / "sitemap.xml").read_text()


def test_what_a_repository_holds_is_escaped_everywhere(built: dict[str, Path]) -> None:
    site = built["site"]
    hostile = next(r for r in records(built, "acme/weights") if r.function == "hostile")
    page = (site / "errors" / f"{hostile.id}.html").read_text()
    assert "<script>window" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in page
    for path in ("repos/acme/weights/index.html", "index.html"):
        assert "<img src=x" not in (site / path).read_text()
    # every script is a file of the site: none inline (JSON data is no script), no
    # element of a repository's text, no event handler
    for html in site.rglob("*.html"):
        tags = _Tags()
        tags.feed(html.read_text())
        assert "img" not in tags.names
        for name, attrs in tags.found:
            assert not any(key.startswith("on") for key in attrs), html
            if name == "script":
                assert "src" in attrs or attrs.get("type") == "application/json", html


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.names: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))
        self.names.add(tag)


def test_a_repository_name_is_a_safe_path() -> None:
    assert slug("acme/engine") == "acme/engine"
    for name in ("~/src/x y", "../../etc", "a/b/c", "<script>"):
        made = slug(name)
        assert "/" not in made and ".." not in made and "<" not in made


def _copies(built: dict[str, Path], into: Path) -> tuple[Path, Path]:
    """A copy of the built site and of its store, to change."""
    shutil.copytree(built["site"], into / "site")
    shutil.copy(built["db"], into / "errscan.db")
    return into / "site", into / "errscan.db"


def test_an_unchanged_store_writes_nothing_and_a_commit_rewrites_little(
    built: dict[str, Path], tmp_path: Path
) -> None:
    site, db = _copies(built, tmp_path)
    before = {p: p.stat().st_mtime_ns for p in site.rglob("*") if p.is_file()}
    report = build(site, db)
    assert report.written == [] and report.removed == []
    assert {p: p.stat().st_mtime_ns for p in site.rglob("*") if p.is_file()} == before
    # a new commit of one repository: its changed pages, and what lists them
    lib = built["lib"]
    text = (lib / "weights/loader.py").read_text()
    write(lib, "weights/loader.py", text.replace("not supported\")\n\n\ndef hostile",
                                                 "not supported!\")\n\n\ndef hostile"))  # fmt: skip
    commit_all(lib, "reword")
    code, _, err = run("extract", str(lib), "-q", "-o", os.devnull, "--db", str(db),
                       "--repo-name", "acme/weights",
                       "--cache-dir", str(built["cache"]))  # fmt: skip
    assert code == 0, err
    report = build(site, db)
    reworded = next(r for r in records({"db": db}, "acme/weights") if r.function == "check")
    assert f"errors/{reworded.id}.html" in report.written
    assert not any(p.startswith("errors/") and "acme" in p for p in report.written)
    engine_pages = {f"errors/{r.id}.html" for r in records(built, "acme/engine")}
    assert not engine_pages & set(report.written)  # the other repository's pages stand
    assert report.removed  # the old id's page and JSON
    history = json.loads((site / "api/errors" / f"{reworded.id}.json").read_text())["history"]
    assert history == [] or history[-1]["commit"] == reworded.commit


@pytest.fixture
def served(built: dict[str, Path]) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "errscan", "serve", str(built["site"]), "--port", str(port)],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None:
                    said = proc.stderr.read() if proc.stderr else ""
                    pytest.fail(f"errscan serve exited: {said}")
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.headers["Content-Type"], answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def test_serve_gives_types_extensionless_api_and_no_escape(
    built: dict[str, Path], served: str
) -> None:
    record = records(built, "acme/engine")[0]
    status, kind, body = _get(f"{served}/api/errors/{record.id}")
    assert status == 200 and kind == "application/json"
    assert json.loads(body)["record"]["id"] == record.id
    assert _get(f"{served}/static/lookup.js")[1].startswith("text/javascript")
    assert _get(f"{served}/errors/{record.id}.html")[1].startswith("text/html")
    assert _get(f"{served}/errors/{record.id}")[1].startswith("text/html")  # pretty address
    assert _get(f"{served}/search/meta.json")[1] == "application/json"
    assert (built["site"] / ".errscan-site.db").is_file()
    for path in ("/nothing", "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/static/",
                 "/.errscan-site.db"):  # fmt: skip
        status, _, body = _get(served + path)
        assert status == 404 and b"Not found" in body


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run does)")
def test_the_site_in_a_real_browser(built: dict[str, Path], served: str, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    weights = {r.function: r for r in records(built, "acme/weights")}
    load = weights["load"]
    # a real traceback: the fixture's own function, run
    script = (
        f"import sys; sys.path.insert(0, {str(built['lib'])!r})\n"
        "import weights.loader\nweights.loader.load('/tmp/w.bin')"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    traceback = ran.stderr
    assert "ValueError: cannot load the weights file '/tmp/w.bin'" in traceback
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            # search the index for a runtime message, its runtime part filled in
            page.goto(served + "/")
            page.fill("#q", "cannot load the weights file '/tmp/w.bin': not supported")
            page.wait_for_selector("#hits li a", timeout=15_000)
            page.screenshot(path=str(ARTIFACTS / "index-1280.png"), full_page=True)
            page.click(f"#hits li a[href*='{load.id}']")
            page.wait_for_url(f"**/errors/{load.id}.html")
            marked = page.inner_text(".highlight .hll")
            assert "raise ValueError" in marked
            assert str(page.get_attribute("a.pinned", "href")).startswith(
                f"https://github.com/acme/weights/blob/{load.commit}/weights/loader.py#L"
            )
            page.screenshot(path=str(ARTIFACTS / "error-1280.png"), full_page=True)
            page.set_viewport_size({"width": 400, "height": 900})
            page.screenshot(path=str(ARTIFACTS / "error-400.png"), full_page=True)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 400  # nothing wider than the screen
            page.set_viewport_size({"width": 1280, "height": 900})
            # a related error
            first = page.locator("ul.related a").first
            target = str(first.get_attribute("href"))
            first.click()
            page.wait_for_url(f"**/errors/{target.rsplit('/', 1)[-1]}")
            # the JSON API is the record
            answer = page.request.get(f"{served}/api/errors/{load.id}")
            assert answer.json()["record"] == load.to_dict()
            # the paste box, a real traceback
            page.goto(f"{served}/repos/acme/weights/")
            # grouped by exception in the page: each exception's errors, counted
            page.select_option("#group", "exception")
            shown = page.locator('section[data-grouping="exception"] summary').all_inner_texts()
            wanted = Counter(
                (r.exception or "re-raise").rsplit(".", 1)[-1]
                for r in weights.values() if r.message is not None
            )  # fmt: skip
            assert shown == [f"{name} ({n})" for name, n in sorted(wanted.items())]
            items = page.locator('section[data-grouping="exception"] li a')
            assert items.count() == sum(wanted.values())
            page.screenshot(path=str(ARTIFACTS / "repo-by-exception-1280.png"), full_page=True)
            page.select_option("#group", "file")
            page.fill("#paste", traceback)
            page.wait_for_selector("#paste-hits li a", timeout=10_000)
            page.screenshot(path=str(ARTIFACTS / "repo-1280.png"), full_page=True)
            page.click("#paste-hits li a >> nth=0")
            page.wait_for_url(f"**/errors/{load.id}.html")
            # a message holding markup shows as text and runs nothing
            page.goto(f"{served}/errors/{weights['hostile'].id}")
            assert HOSTILE in page.inner_text("pre.message")
            assert page.evaluate("window.pwned") is None
            assert page.locator("main img").count() == 0
            assert errors == []
        finally:
            browser.close()


def test_the_site_command_says_what_it_did_and_refuses_unknown_repositories(
    built: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "only-engine"
    code, _, err = run("site", "acme/engine", "--db", str(built["db"]), "-o", str(out))
    assert code == 0 and "errscan: 1 repositories, 29 errors" in err
    index = json.loads((out / "api/index.json").read_text())
    assert [repo["name"] for repo in index["repos"]] == ["acme/engine"]
    code, _, err = run("site", "acme/nothing", "--db", str(built["db"]), "-o", str(out))
    assert code == 2 and err == "errscan: error: no stored scan of acme/nothing\n"
    code, _, err = run("site", "--db", str(tmp_path / "none.db"), "-o", str(out))
    assert code == 2 and "no store at" in err


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*")
            if p.is_file() and p.name != ".errscan-site.db"}  # fmt: skip


def test_a_rebuild_after_a_commit_is_byte_for_byte_a_fresh_build(
    built: dict[str, Path], tmp_path: Path
) -> None:
    from errscan.analyzer.store import Store, StoredEnrichment
    from errscan.enrichment import digest, facts

    site, db = _copies(built, tmp_path)
    lib = tmp_path / "lib"
    shutil.copytree(built["lib"], lib)
    # reworded, moved down, one removed, one added: then a scan, an enrichment, a rebuild
    text = (lib / "weights/loader.py").read_text()
    text = text.replace("non-negative", "zero or more").replace("def hostile():", "def gone():")
    added = "\n\ndef save(path):\n    raise OSError(f'cannot save the weights file {path!r}')\n"
    write(lib, "weights/loader.py", "import os\n\n" + text + added)
    commit_all(lib, "reword, move, add")
    code, _, err = run("extract", str(lib), "-q", "-o", os.devnull, "--db", str(db), "--repo-name",
                       "acme/weights", "--cache-dir", str(built["cache"]))  # fmt: skip
    assert code == 0, err
    engine = records({"db": db}, "acme/engine")
    store = Store.open(db)
    by_id = {r.id: r for r in engine}
    store.save_enrichment(StoredEnrichment(
        engine[0].id, digest(facts(engine[0], by_id.get)), "model-x", "1",
        {"what_it_means": "It means <b>this</b>.", "solutions": [], "common_situations": ""},
        1, 1, 1.0))  # fmt: skip
    store.close()
    report = build(site, db)
    fresh = build(tmp_path / "fresh", db)
    assert _files(site) == _files(tmp_path / "fresh")
    assert report.files == fresh.files and len(report.written) < len(fresh.written) / 2
    # the enriched page, and not the other pages of its repository
    assert f"errors/{engine[0].id}.html" in report.written
    engine_pages = {f"errors/{r.id}.html" for r in engine[1:]}
    assert not engine_pages & set(report.written)
    assert "It means &lt;b&gt;this&lt;/b&gt;." in (site / f"errors/{engine[0].id}.html").read_text()
    # a page deleted from the site is made again; a damaged state, a full build that
    # writes only what differs
    (site / f"errors/{engine[1].id}.html").unlink()
    shard = next((site / "search/words").iterdir())
    shard.unlink()
    shard_path = shard.relative_to(site).as_posix()
    assert build(site, db).written == [f"errors/{engine[1].id}.html", shard_path]
    (site / ".errscan-site.db").write_bytes(b"not a database" * 64)
    report = build(site, db)
    assert report.written == [] and _files(site) == _files(tmp_path / "fresh")
    assert build(site, db).written == []
    # a state of another format: the page of an error no more that it knew is removed,
    # and the search files the index has no more (format 3's docs shards)
    gone = "errors/0123456789abcdef.html"
    docs = "search/docs/01.json"
    (site / gone).write_text("an error no more")
    (site / "search/docs").mkdir()
    (site / docs).write_text('{"0123456789abcdef":["acme/engine"]}')
    with sqlite3.connect(site / ".errscan-site.db") as held:
        held.execute("INSERT INTO files VALUES (?, 'k', 'acme/engine')", (gone,))
        held.execute("INSERT INTO files VALUES (?, 'k', '*search')", (docs,))
        held.execute("UPDATE meta SET value = 'old' WHERE key = 'format'")
    held.close()
    report = build(site, db)
    assert report.written == [] and sorted(report.removed) == [gone, docs]
    assert _files(site) == _files(tmp_path / "fresh")


def test_a_site_of_one_repository_removes_the_others(
    built: dict[str, Path], tmp_path: Path
) -> None:
    site = tmp_path / "site"
    shutil.copytree(built["site"], site)
    weights = records(built, "acme/weights")
    report = build(site, built["db"], ["acme/engine"])
    assert f"errors/{weights[0].id}.html" in report.removed
    assert not (site / "repos/acme/weights/index.html").exists()
    assert _files(site) == _files(_fresh(built, tmp_path / "fresh", ["acme/engine"]))


def _fresh(built: dict[str, Path], out: Path, repos: list[str]) -> Path:
    errscan.build_site(out, built["db"], repos)
    return out


@given(st.sets(st.text("0123456789abcdef", min_size=1, max_size=3)),
       st.sets(st.text("0123456789abcdef", min_size=1, max_size=3)))  # fmt: skip
def test_the_errors_no_more_are_found_by_merging_two_ordered_reads(
    held: set[str], kept: set[str]
) -> None:
    from errscan.site.build import _missing

    assert _missing(iter(sorted(held)), iter(sorted(kept))) == sorted(held - kept)


@given(st.dictionaries(st.from_regex(r"[a-z0-9]{1,4}", fullmatch=True),
                       st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=2100,
                                unique=True).map(sorted), max_size=4))  # fmt: skip
def test_a_shards_posting_lists_are_json_as_json_writes_it(lists: dict[str, list[str]]) -> None:
    from errscan.site.search import _posting_lists

    rows = [(word, i) for word in sorted(lists) for i in lists[word]]
    text = "{" + "".join(_posting_lists(rows)) + "}"
    assert text == json.dumps(lists, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def test_the_highlighting_stylesheet_is_made_again_only_for_other_pygments(
    built: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pygments

    from errscan.site import build as site_build
    from errscan.site.render import pygments_css

    site, db = _copies(built, tmp_path)
    css = (site / "static/pygments.css").read_text()
    made: list[str] = []

    def counted() -> str:
        made.append("css")
        return pygments_css()

    monkeypatch.setattr(site_build, "pygments_css", counted)
    (site / "static/pygments.css").unlink()
    assert build(site, db).written == ["static/pygments.css"] and made == []  # as kept
    monkeypatch.setattr(pygments, "__version__", "0.0-other")
    assert build(site, db).written == [] and made == ["css"]
    assert (site / "static/pygments.css").read_text() == css
