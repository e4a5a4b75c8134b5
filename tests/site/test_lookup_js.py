"""The paste box's lookup (errscan/site/static/lookup.js, run by Node) gives what
`errscan lookup` gives, in the same order, on real tracebacks of installed libraries."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import errscan
from errscan.models import ErrorRecord
from errscan.site.build import templates
from tests import real_tracebacks

NODE = shutil.which("node")
_RUNNER = """
import { lookup, makeIndex } from "./lookup.mjs";
import { readFileSync } from "node:fs";
const input = JSON.parse(readFileSync(0, "utf8"));
const indexes = Object.fromEntries(
  Object.entries(input.indexes).map(([name, data]) => [name, makeIndex(data)]));
const out = input.cases.map(([name, text]) => lookup(text, indexes[name]).map(
  (match) => [match.record.id, match.kind]));
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def library_records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[ErrorRecord]]:
    """Records of each installed library's own files, committed into a repository."""
    return real_tracebacks.library_records(tmp_path_factory.mktemp("libraries"))


def _in_node(tmp_path: Path, indexes: dict[str, Any], cases: list[tuple[str, str]]) -> object:
    assert NODE is not None
    source = resources.files("errscan.site") / "static" / "lookup.js"
    (tmp_path / "lookup.mjs").write_bytes(source.read_bytes())
    (tmp_path / "run.mjs").write_text(_RUNNER)
    done = subprocess.run(
        [NODE, "run.mjs"], cwd=tmp_path, input=json.dumps({"indexes": indexes, "cases": cases}),
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_browser_lookup_ranks_as_errscan_lookup(
    library_records: dict[str, list[ErrorRecord]], tmp_path: Path
) -> None:
    cases: list[tuple[str, str]] = []
    calls: list[tuple[str, Callable[[], object]]] = [
        (library, call) for library, _name, call in real_tracebacks.CASES
    ]
    for library, call in calls:
        raised = real_tracebacks.run(library, call)
        cases.append((library, raised.text))
        cases.append((library, raised.text.strip().splitlines()[-1]))  # `Type: message` alone
        cases.append((library, raised.message))  # the message alone
    indexes = {name: templates(records) for name, records in library_records.items()}
    found = _in_node(tmp_path, indexes, cases)
    assert isinstance(found, list)
    agreed = 0
    for (library, text), answer in zip(cases, found, strict=True):
        expected = [
            [m.record.id, m.kind]
            for m in errscan.lookup(text, library_records[library])
            if m.kind != "close"  # similarity, the last resort, is errscan lookup's alone
        ]
        assert answer == expected, (library, text)
        agreed += bool(expected)
    assert agreed >= len(cases) * 0.8  # most cases find something: the test is not empty


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_browser_lookup_finds_an_empty_message_as_errscan_lookup(tmp_path: Path) -> None:
    """Python prints the class alone for an exception with no text; the site that
    raises it has the empty template, which matches the empty message alone."""
    from tests.support import build_repo

    repo = build_repo(tmp_path / "repo", "messages")
    records = list(errscan.extract(str(repo), use_cache=False).records)
    site = next(r for r in records if r.function == "case_super_init_without_arguments")
    assert site.message == ""
    traceback = (
        "Traceback (most recent call last):\n"
        f'  File "/srv/app/{site.file}", line {site.line}, in {site.function}\n'
        '    raise errs.RequestPath(f"{path}/")\n'
        "msgs.errors.RequestPath"
    )
    cases = [("messages", traceback), ("messages", "RequestPath: "), ("messages", "ValueError: ")]
    found = _in_node(tmp_path, {"messages": templates(records)}, cases)
    expected = [
        [[m.record.id, m.kind] for m in errscan.lookup(text, records) if m.kind != "close"]
        for _, text in cases
    ]
    assert found == expected
    assert expected[0][0] == [site.id, "full"]
    assert expected[1][0] == [site.id, "full"]
    assert site.id not in [i for i, _ in expected[2]]  # another class: not it


_WORDS = """
import { words } from "./search.mjs";
import { readFileSync } from "node:fs";
const texts = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(texts.map((text) => words(text).sort())));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_query_is_split_into_words_as_the_index_is(tmp_path: Path) -> None:
    from errscan.site.search import words

    texts = ["cannot load {path!r}: not supported", "Engine.__init__ x 7 y_z",
             "Ünïcödé naïve—ok", "ValueError: bad 'v2.1' (id=3f9a)", "日本語のメッセージ",
             "a b c 1 2 33", ""]  # fmt: skip
    assert NODE is not None
    source = resources.files("errscan.site") / "static" / "search.js"
    (tmp_path / "search.mjs").write_bytes(source.read_bytes())
    (tmp_path / "words.mjs").write_text(_WORDS)
    done = subprocess.run([NODE, "words.mjs"], cwd=tmp_path, input=json.dumps(texts),
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    assert json.loads(done.stdout) == [sorted(words(text)) for text in texts]


_SHOWN = """
import { cut, simpleName } from "./search.mjs";
import { readFileSync } from "node:fs";
const [texts, names] = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify([texts.map((text) => cut(text)), names.map(simpleName)]));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_hit_shows_the_message_cut_and_the_exception_as_the_pages_do(tmp_path: Path) -> None:
    from errscan.site.page import simple_name
    from errscan.site.render import cut

    texts = ["short", "a  b\tc\n d", "x" * 59 + " y" * 5, "é" * 70, "😀" * 61,
             "word " * 11 + "end", "\x1cx\x85y\u3000z\ufeff", "a" * 59 + " \ufeff" + "b" * 9,
             "", None]  # fmt: skip
    names = ["ValueError", "pkg.mod.Error", None, "a.b."]
    assert NODE is not None
    source = resources.files("errscan.site") / "static" / "search.js"
    (tmp_path / "search.mjs").write_bytes(source.read_bytes())
    (tmp_path / "shown.mjs").write_text(_SHOWN)
    done = subprocess.run([NODE, "shown.mjs"], cwd=tmp_path, input=json.dumps([texts, names]),
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    assert json.loads(done.stdout) == [[cut(t) for t in texts], [simple_name(n) for n in names]]
