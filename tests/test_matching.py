"""Lookups stay linear whatever templates a store holds: no backtracking, no quadratic score."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import errscan
from errscan.cli import cli
from errscan.matching import _matches
from errscan.models import ErrorRecord
from tests import real_tracebacks
from tests.support import build_repo, commit_all, git, write


def _records(*messages: str) -> list[errscan.ErrorRecord]:
    source = "".join(
        f"def f{i}(a, b):\n    raise ValueError({m})\n" for i, m in enumerate(messages)
    )
    return errscan.extract_source(source)


ADJACENT = "f'" + "{a}" * 16 + "!'"  # 16 placeholders side by side
SPACED = "f'" + " ".join(["{a}"] * 30) + " end'"  # 30 placeholders among words


@pytest.mark.parametrize(
    ("parts", "message", "expected"),
    [
        ([("a", None), (None, "x"), ("b", None)], "a-b", True),
        ([("a", None), (None, "x"), ("b", None)], "ab", True),
        ([("a", None), (None, "x"), ("b", None)], "ba", False),
        ([(None, "x"), ("ab", None), (None, "y"), ("ab", None)], "abab", True),
        ([(None, "x"), ("ab", None), (None, "y"), ("ab", None)], "aba", False),
        ([("x", None), (None, "y"), ("x", None)], "x", False),  # prefix and suffix overlap
        ([("plain", None)], "plain", True),
        ([("plain", None)], "plainer", False),
        ([(None, "x")], "", True),
    ],
)
def test_a_template_matches_as_its_regular_expression_would(
    parts: list[tuple[str | None, str | None]], message: str, expected: bool
) -> None:
    assert _matches(parts, message) is expected


def test_hostile_templates_and_messages_do_not_hang_a_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Adjacent placeholders once backtracked for minutes; difflib took 24 s on 185 KB."""
    scored: list[int] = []
    real = difflib.SequenceMatcher

    def spy(isjunk: None, a: str, b: str, autojunk: bool) -> difflib.SequenceMatcher[str]:
        scored.append(max(len(a), len(b)))
        return real(isjunk, a, b, autojunk=autojunk)

    monkeypatch.setattr(difflib, "SequenceMatcher", spy)
    records = _records(ADJACENT, SPACED, repr("alpha beta " * 140 + "gamma"))
    for query in [
        "ValueError: " + "z" * 40,
        "ValueError: " + " ".join(["word"] * 40),
        "ValueError: " + "alpha beta " * 17_000,  # 187 KB
    ]:
        errscan.lookup(query, records)
    assert scored and max(scored) <= 2000
    found = errscan.lookup("ValueError: " + " ".join(["w"] * 30) + " end", records)
    assert [m.record.message for m in found if m.kind == "full"] == [SPACED[2:-1]]


TYPED = """
class AppError(Exception):
    pass

class NotThere(AppError, LookupError):  # LookupError: str() is the message as given
    pass

def a(x):
    raise ValueError(f"bad value {x}")

def b(x):
    raise AppError(f"bad value {x}")

def c(message):
    raise RuntimeError(f"{message}")

def d(path):
    raise OSError(f"cannot open {path}")

def e(key):
    raise NotThere(f"bad value {key}")
"""


def _functions(query: str) -> list[str]:
    records = errscan.extract_source(TYPED)
    return [m.record.function for m in errscan.lookup(query, records) if m.kind == "full"]


@pytest.mark.parametrize(
    ("query", "functions"),
    [
        ("ValueError: bad value 3", ["a"]),
        ("AppError: bad value 3", ["b"]),  # its subclass NotThere's site is not it
        ("NotThere: bad value 3", ["b", "e"]),  # a subclass of AppError: b could raise it
        ("Exception: bad value 3", []),  # a base of every class here, the class of none
        ("FileNotFoundError: cannot open /x", ["d"]),  # OSError(ENOENT) shows as it
        ("Unheard: bad value 3", ["a", "b", "e"]),  # an unknown type filters nothing
        ("bad value 3", ["a", "b", "e"]),
        ("RuntimeError: anything at all", ["c"]),  # `{message}`: with its type only
        ("KeyError: 'foo'", []),
        ("", []),
    ],
)
def test_the_type_is_the_record_s_class_or_a_subclass(query: str, functions: list[str]) -> None:
    assert sorted(_functions(query)) == functions


def test_templates_with_no_literal_text_come_last() -> None:
    source = TYPED + "\ndef f(message):\n    raise ValueError(f'{message}')\n"
    found = errscan.lookup("ValueError: bad value 3", errscan.extract_source(source))
    assert [m.record.function for m in found if m.kind == "full"] == ["a", "f"]


@pytest.mark.parametrize(("query", "code"), [("ValueError: bad value 3", 0), ("zzzz qqqq", 1)])
def test_lookup_exits_as_grep_does(query: str, code: int, tmp_path: Path) -> None:
    records = tmp_path / "r.jsonl"
    records.write_text(
        "".join(json.dumps(r.to_dict()) + "\n" for r in errscan.extract_source(TYPED))
    )
    result = CliRunner().invoke(cli, ["lookup", query, "--from", str(records)])
    assert result.exit_code == code
    assert CliRunner().invoke(cli, ["lookup", query, "--from", str(tmp_path / "no")]).exit_code == 2


def test_a_real_traceback_from_an_installed_package_lands_on_its_site(tmp_path: Path) -> None:
    """packaging, installed in site-packages (pytest needs it), used wrongly; its sources
    scanned in a src/ layout, as its sdist has them: the frames' paths end in
    site-packages/packaging/..., the records' in src/packaging/..."""
    import shutil
    import traceback

    import packaging.version

    repo = tmp_path / "packaging-src"
    shutil.copytree(
        Path(packaging.version.__file__).parent,
        repo / "src" / "packaging",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    git(repo, "init", "-q")
    commit_all(repo, "the installed sources")
    records = list(errscan.extract(str(repo)).records)
    try:
        packaging.version.Version("not a version at all")
    except packaging.version.InvalidVersion as exc:
        shown = "".join(traceback.format_exception(exc))
        raised_at = traceback.extract_tb(exc.__traceback__)[-1]
    (best, *_) = errscan.lookup(shown, records)
    assert best.record.file == "src/packaging/version.py"
    assert best.record.line <= (raised_at.lineno or 0) <= best.record.end_line
    installed = str(Path(packaging.version.__file__).parent)
    windows = shown.replace(installed, "C:\\Py\\Lib\\site-packages\\packaging")
    windows = windows.replace("/", "\\")
    assert errscan.lookup(windows, records)[0].record.id == best.record.id


def test_the_frame_decides_between_sites_with_one_template(tmp_path: Path) -> None:
    """Two sites raise `Invalid version: {version!r}`: the traceback's innermost frame,
    from site-packages, picks the one that raised, whichever would sort first."""
    repo = tmp_path / "r"
    body = "".join(
        f"def f{i}(version):\n    raise ValueError(f'Invalid version: {{version!r}}')\n\n"
        for i in range(6)
    )
    write(repo, "src/vers/__init__.py", "")
    write(repo, "src/vers/version.py", body)
    git(repo, "init", "-q")
    commit_all(repo, "six sites, one template")
    records = list(errscan.extract(str(repo)).records)
    for record in records:
        shown = (
            "Traceback (most recent call last):\n"
            f'  File "/venv/lib/python3.12/site-packages/vers/version.py", line {record.line},'
            f" in {record.function}\n    raise ValueError(...)\n"
            "ValueError: Invalid version: 'x'\n"
        )
        assert errscan.lookup(shown, records)[0].record.id == record.id


CHAINED = """\
def find(key):
    raise KeyError(f"no entry {key}")


def load(key):
    try:
        return find(key)
    except KeyError as err:
        raise RuntimeError(f"cannot load {key!r}") from err


def explain():
    raise ValueError("the first line\\n  and an indented second line")
"""


def _traceback_of(call: str, tmp_path: Path) -> str:
    import traceback

    path = tmp_path / "m.py"
    path.write_text(CHAINED)
    namespace: dict[str, object] = {}
    exec(compile(CHAINED, str(path), "exec"), namespace)
    try:
        eval(call, namespace)
    except Exception as exc:
        return "".join(traceback.format_exception(exc))
    raise AssertionError(f"{call} raised nothing")


def test_a_message_of_several_lines_is_read_whole(tmp_path: Path) -> None:
    records = errscan.extract_source(CHAINED, path="m.py")
    shown = _traceback_of("explain()", tmp_path)
    (best, *_) = errscan.lookup(shown, records)
    assert best.kind == "full" and best.record.function == "explain"


def test_a_chain_offers_its_last_exception_first_then_the_earlier(tmp_path: Path) -> None:
    records = errscan.extract_source(CHAINED, path="m.py")
    shown = _traceback_of("load('k')", tmp_path)
    assert "The above exception was the direct cause" in shown
    found = [(m.record.function, m.record.exception) for m in errscan.lookup(shown, records)]
    assert found[0] == ("load", "RuntimeError")
    assert ("find", "KeyError") in found[1:]


def test_a_whole_log_gives_one_annotation_per_error_and_a_summary(tmp_path: Path) -> None:
    records = errscan.extract_source(CHAINED, path="m.py")
    chained = _traceback_of("load('k')", tmp_path)
    several = _traceback_of("explain()", tmp_path)
    log = tmp_path / "app.log"
    lines = [
        "2026-12-03 10:00:00 INFO starting",
        "2026-12-03 10:00:01 ERROR job failed",
        *chained.rstrip("\n").split("\n"),
        "2026-12-03 10:00:02 WARNING RuntimeError: cannot load 'other'",
        "FAILED tests/test_x.py::test_y - KeyError: 'no entry z'",
        *several.rstrip("\n").split("\n"),
        "noise " * 20,
        "2026-12-03 10:00:03 ERROR SomethingElseError: never raised here",
    ]
    log.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["lookup", "--log", str(log), "--json", "--from",
                                      str(_records_file(records, tmp_path))])  # fmt: skip
    assert result.exit_code == 0, result.output
    out.write_text(result.stdout)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    *found, summary = rows
    functions = {r.id: r.function for r in records}
    chain_end = len(chained.rstrip("\n").split("\n")) + 2  # the log's line of its last line
    second = next(i for i, line in enumerate(lines, 1) if i > 3 and line.startswith("Traceback"))
    assert [(row["log_line"], functions.get(row["id"])) for row in found] == [
        (3, "find"),  # the chain's first traceback: KeyError in find
        (second, "load"),  # then the RuntimeError raised from it
        (chain_end + 1, "load"),  # a log line holding `RuntimeError: ...`
        (chain_end + 2, "find"),  # pytest's summary line
        (chain_end + 3, "explain"),  # a message of two lines, read whole
        (len(lines), None),
    ]
    assert summary["summary"]["errors"] == 6 and summary["summary"]["unmatched"] == 1


def _records_file(records: list[errscan.ErrorRecord], tmp_path: Path) -> Path:
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in records))
    return path


def test_a_log_read_in_small_blocks_gives_the_same_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block never cuts a traceback in two, however small the blocks."""
    import io

    from errscan import logs
    from errscan.matching import TemplateIndex

    records = errscan.extract_source(CHAINED, path="m.py")
    text = ("INFO x\n" + _traceback_of("load('k')", tmp_path) + "KeyError: 'no entry q'\n") * 5
    text += _traceback_of("explain()", tmp_path)
    index = TemplateIndex(records)

    def found() -> list[tuple[int, str, str | None]]:
        stream = io.BytesIO(text.encode())
        return [(f.line, f.text, f.match.record.id if f.match else None)
                for f in logs.scan_log(stream, index)]  # fmt: skip

    whole = found()
    assert len(whole) == 5 * 3 + 1
    for size in (16, 64, 333):
        monkeypatch.setattr(logs, "_BLOCK", size)
        assert found() == whole, size


def test_the_index_finds_every_full_match_a_scan_of_all_records_would() -> None:
    """The index only narrows which templates are tried: on random templates and
    messages (long ones too), its full matches are those of trying every record."""
    import random

    from errscan.matching import TemplateIndex, _matches, templates_of

    rng = random.Random(3)
    words = [f"w{i:02d}x" for i in range(40)]

    def text() -> str:
        picked = rng.choices([*words, "{x}", "{y}"], k=rng.randint(1, 8))
        return " ".join(picked) + rng.choice(["", "!", "{z}"])

    source = "".join(f"def f{i}(x, y, z):\n    raise ValueError(f'{text()}')\n" for i in range(300))
    records = errscan.extract_source(source)
    index = TemplateIndex(records)
    total = 0
    for _ in range(300):
        message = " ".join(rng.choices([*words, "7", "abc"], k=rng.randint(1, 90)))
        expected = {
            r.id for r in records
            if r.message is not None and any(p.text and p.text.strip() for p in r.message_parts)
            and any(_matches(t, message) for t in templates_of(r))
        }  # fmt: skip
        found = {m.record.id for m in index.lookup(message) if m.kind == "full"}
        assert found == expected, message
        total += len(expected)
    assert total > 50  # the messages do match templates, some of them


def _queries(records: list[errscan.ErrorRecord]) -> list[str]:
    """Messages of every template (placeholders filled), with and without the type."""
    found = []
    for record in records:
        if record.message is not None:
            text = "".join(p.text if p.text is not None else "7" for p in record.message_parts)
            found += [text, f"{record.exception}: {text}"]
    return [*found, "", "KeyError: 'nothing'"]


def _answers(index: errscan.TemplateIndex, queries: list[str]) -> list[list[tuple[str, str]]]:
    return [[(m.record.id, m.kind) for m in index.lookup(q)] for q in queries]


def test_a_compiled_index_loaded_back_answers_as_the_one_compiled(tmp_path: Path) -> None:
    records = list(errscan.extract(str(build_repo(tmp_path / "repo", "messages"))).records)
    queries = _queries(records)
    built = errscan.TemplateIndex(records)
    loaded = errscan.TemplateIndex.load(records, built.compiled())
    assert loaded is not None
    assert _answers(loaded, queries) == _answers(built, queries)
    assert sum(1 for a in _answers(built, queries) if a) > len(records)  # the queries find
    assert errscan.TemplateIndex.load(records[1:], built.compiled()) is None  # other records
    assert errscan.TemplateIndex.load(records, b"\x00garbage") is None


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the indexes compiled (not loaded from the cache), in order."""
    sizes: list[int] = []
    real = errscan.TemplateIndex._build

    def counted(self: errscan.TemplateIndex) -> tuple[object, ...]:
        sizes.append(len(self.records))
        return real(self)

    monkeypatch.setattr(errscan.TemplateIndex, "_build", counted)
    return sizes


def test_the_cache_reuses_a_compiled_index_and_recompiles_a_damaged_one(
    tmp_path: Path, compiled: list[int]
) -> None:
    records = list(errscan.extract(str(build_repo(tmp_path / "repo", "messages"))).records)
    queries = _queries(records)
    cache = tmp_path / "cache"
    first = errscan.lookup_index(records, "k1", cache)
    again = errscan.lookup_index(records, "k1", cache)
    assert compiled == [len(records)]  # the second came from the cache
    assert _answers(again, queries) == _answers(first, queries)
    assert errscan.cache_info(cache).indexes == 1
    (stored,) = (cache / "indexes").iterdir()
    data = bytearray(stored.read_bytes())
    data[-3] ^= 0xFF
    stored.write_bytes(bytes(data))
    damaged = errscan.lookup_index(records, "k1", cache)
    assert compiled == [len(records)] * 2  # compiled again, not read wrong
    assert _answers(damaged, queries) == _answers(first, queries)
    errscan.lookup_index(records[:5], "k2", cache)
    assert compiled == [len(records)] * 2 + [5]
    dropped, info = errscan.prune_cache(cache, 0)
    assert info.indexes == 0 and dropped >= 2


def test_lookup_from_a_store_compiles_once_per_stored_scan(
    tmp_path: Path, compiled: list[int]
) -> None:
    repo = build_repo(tmp_path / "repo", "messages")
    db = tmp_path / "errscan.db"
    runner = CliRunner()
    assert runner.invoke(cli, ["extract", str(repo), "--db", str(db)]).exit_code == 0
    query = ["lookup", "--db", str(db), "ValueError: no"]
    outputs = [runner.invoke(cli, query).output for _ in range(2)]
    assert len(compiled) == 1 and outputs[0] == outputs[1]
    write(repo, "pkg/more.py", "def g():\n    raise KeyError('a new key')\n")
    commit_all(repo, "more")
    assert runner.invoke(cli, ["extract", str(repo), "--db", str(db)]).exit_code == 0
    found = runner.invoke(cli, ["lookup", "--db", str(db), "KeyError: 'a new key'"])
    assert len(compiled) == 2 and "pkg/more.py" in found.output  # a new scan: compiled anew
    scanned = runner.invoke(cli, ["lookup", "--scan", str(repo), "KeyError: 'a new key'"])
    runner.invoke(cli, ["lookup", "--scan", str(repo), "KeyError: 'a new key'"])
    assert len(compiled) == 3 and "pkg/more.py" in scanned.output


@pytest.fixture(scope="module")
def library_records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[ErrorRecord]]:
    """Records of each installed library's own files, committed into a repository."""
    return real_tracebacks.library_records(tmp_path_factory.mktemp("libraries"))


# the message is a property of the Undefined object and the class an attribute of it,
# and jinja2 rewrites the traceback so no frame names the raise: nothing to go on
_UNREADABLE = {("jinja2", "undefined")}


@pytest.mark.parametrize(
    ("library", "name", "call"),
    [
        pytest.param(*case, marks=pytest.mark.xfail(strict=True))
        if case[:2] in _UNREADABLE
        else case
        for case in real_tracebacks.CASES
    ],
    ids=[f"{library}-{name}" for library, name, _ in real_tracebacks.CASES],
)
def test_a_real_traceback_of_an_installed_library_finds_the_site_that_raised(
    library: str,
    name: str,
    call: Callable[[], object],
    library_records: dict[str, list[ErrorRecord]],
) -> None:
    """The library installed in site-packages raises; its traceback, pasted whole, is
    looked up against the records of its files in a src/, lib/ or flat repository."""
    raised = real_tracebacks.run(library, call)
    records = library_records[library]
    origin = raised.origin(records)
    assert origin is not None, raised.places
    matches = errscan.lookup(raised.text, records)
    assert matches and matches[0].record.id == origin.id, (
        f"raised at {origin.file}:{origin.line}; first "
        + (f"{matches[0].record.file}:{matches[0].record.line}" if matches else "none")
    )


RERAISED = """\
def convert(text):
    try:
        return int(text)
    except ValueError as err:
        kept = err
    raise kept.with_traceback(kept.__traceback__)


def parse(text):
    raise ValueError(f"invalid literal for int() with base 10: {text!r}")
"""


def test_a_re_raise_in_the_traceback_comes_first_only_where_the_error_began_in_view() -> None:
    """The traceback shows a frame of the repository below the re-raise (int() called in
    convert): the re-raise is the way in, before a template matching elsewhere. Where no
    such frame is shown (jinja2 rewrites its tracebacks), the template elsewhere first."""
    records = errscan.extract_source(RERAISED, path="m.py")
    reraise = next(r for r in records if r.kind == "reraise")
    elsewhere = next(r for r in records if r.function == "parse")
    head = "Traceback (most recent call last):\n"
    at_reraise = '  File "/app/m.py", line 6, in convert\n    raise kept.with_traceback(...)\n'
    message = "ValueError: invalid literal for int() with base 10: 'x'\n"
    began = '  File "/app/m.py", line 3, in convert\n    return int(text)\n'
    assert errscan.lookup(head + at_reraise + began + message, records)[0].record == reraise
    rewritten = '  File "<template>", line 1, in top-level template code\n'
    assert errscan.lookup(head + at_reraise + rewritten + message, records)[0].record == elsewhere


TEMPLATE_PARSER = """\
class TemplateSyntaxError(Exception):
    pass


class IfParser:
    error_class = ValueError

    def end(self):
        raise self.error_class("Unexpected end of expression in if tag.")


class TemplateIfParser(IfParser):
    error_class = TemplateSyntaxError


class Parser:
    def error(self, token, e):
        if not isinstance(e, Exception):
            e = TemplateSyntaxError(e)
        e.token = token
        return e

    def parse(self, token):
        try:
            TemplateIfParser().end()
        except Exception as e:
            raise self.error(token, e)
"""


def test_a_site_whose_class_is_unresolved_is_not_ruled_out_by_the_type_seen() -> None:
    """Django's template parser: `raise self.error_class(...)` names no class errscan can
    resolve, and the error passes a resolved `raise self.error(token, e)` on its way out.
    The type the user saw (TemplateSyntaxError, a class of the records) rules out sites of
    other classes, not a site whose class is unknown: the innermost frame, whose template
    matches, comes first, before the re-raise further out whose message is unread."""
    records = errscan.extract_source(TEMPLATE_PARSER, path="tpl.py")
    origin = next(r for r in records if r.function.endswith("end"))
    assert origin.exception_qualname is None  # the premise: its class is unresolved
    shown = (
        "Traceback (most recent call last):\n"
        '  File "/app/tpl.py", line 27, in parse\n    raise self.error(token, e)\n'
        '  File "/app/tpl.py", line 25, in parse\n    TemplateIfParser().end()\n'
        '  File "/app/tpl.py", line 9, in end\n    raise self.error_class(...)\n'
        "tpl.TemplateSyntaxError: Unexpected end of expression in if tag.\n"
    )
    assert errscan.lookup(shown, records)[0].record == origin
    # a message its template does not match (the re-raise may reword it): the frames
    # decide, the innermost first, as for sites of the type
    reworded = shown.replace("Unexpected end", "Early end")
    found = [m.record for m in errscan.lookup(reworded, records)]
    assert found[0] == origin and found[1].function == "Parser.parse"
    # where no frame names it, a site of an unknown class is not offered for the type
    elsewhere = shown.replace("/app/tpl.py", "/app/other.py")
    assert origin not in [m.record for m in errscan.lookup(elsewhere, records)]


ABORTER = """\
class NotFound(Exception):
    def __init__(self):
        super().__init__("404 Not Found: nothing is at this address.")


def serve(path):
    if path is None:
        raise NotFound()


class Aborter:
    mapping = {404: NotFound}

    def __call__(self, code):
        raise self.mapping[code]()
"""


def test_an_unread_site_of_an_unresolved_class_the_innermost_frame_names_comes_first() -> None:
    """werkzeug's `abort(404)`: `raise self.mapping[code]()` names no class errscan can
    resolve, nor a message it can read; the innermost frame names it, and it comes before
    the sites elsewhere whose template matches (any NotFound's text)."""
    records = errscan.extract_source(ABORTER, path="exc.py")
    aborter = next(r for r in records if r.function == "Aborter.__call__")
    elsewhere = next(r for r in records if r.function == "serve")
    assert aborter.exception_qualname is None and aborter.message is None  # the premise
    message = "exc.NotFound: 404 Not Found: nothing is at this address.\n"
    shown = (
        "Traceback (most recent call last):\n"
        '  File "/app/exc.py", line 15, in __call__\n    raise self.mapping[code]()\n' + message
    )
    assert [m.record for m in errscan.lookup(shown, records)][:2] == [aborter, elsewhere]
    assert errscan.lookup(message, records)[0].record == elsewhere  # no frame: the template


WRAPPED = """\
class InvalidRequestError(Exception):
    pass


def is_(a, b, msg=None):
    assert a is b, msg or "%r is %r" % (a, b)


def construct_params(key, message):
    raise InvalidRequestError(message % key)
"""


def test_two_letters_of_literal_text_match_elsewhere_only_for_the_type() -> None:
    """SQLAlchemy wraps the error `construct_params` raises in a StatementError (a class no
    record raises), reusing its traceback: `{a!r} is {b!r}` (a testing helper's) matches the
    message by its " is ", but two letters of literal text say nothing; the site the
    innermost frame names comes first. For a type of its own it is still offered."""
    records = errscan.extract_source(WRAPPED, path="sa.py")
    helper = next(r for r in records if r.function == "is_")
    raised = next(r for r in records if r.function == "construct_params")
    assert helper.message == "{a!r} is {b!r}" and raised.message is None  # the premise
    message = "A value is required for bind parameter 'x'"
    shown = (
        "Traceback (most recent call last):\n"
        '  File "/app/sa.py", line 10, in construct_params\n    raise InvalidRequestError(...)\n'
        f"sa.StatementError: (sa.InvalidRequestError) {message}\n"
    )
    found = [m.record for m in errscan.lookup(shown, records)]
    assert found[0] == raised and helper not in found
    assert errscan.lookup(f"AssertionError: {message}", records)[0].record == helper


GROUPED = """\
def inner(v):
    raise KeyError(f"no entry {v}")


def run(values):
    errors = []
    for v in values:
        try:
            inner(v)
        except KeyError as e:
            errors.append(e)
    errors.append(ValueError("bad value"))
    group = ExceptionGroup("inner group", errors)
    raise ExceptionGroup("outer group", [group, TypeError("wrong type")])
"""

# what Python 3.11 to 3.13 print of `run(["a"])` (traceback.format_exception), the code
# in m.py: the groups' boxes behind their margins, a nested group's inside its own
GROUP_SHOWN = """\
  + Exception Group Traceback (most recent call last):
  |   File "main.py", line 3, in <module>
  |   File "/srv/app/m.py", line 14, in run
  |     raise ExceptionGroup("outer group", [group, TypeError("wrong type")])
  | ExceptionGroup: outer group (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | ExceptionGroup: inner group (2 sub-exceptions)
    +-+---------------- 1 ----------------
      | Traceback (most recent call last):
      |   File "/srv/app/m.py", line 9, in run
      |     inner(v)
      |   File "/srv/app/m.py", line 2, in inner
      |     raise KeyError(f"no entry {v}")
      | KeyError: 'no entry a'
      +---------------- 2 ----------------
      | ValueError: bad value
      +------------------------------------
    +---------------- 2 ----------------
    | TypeError: wrong type
    +------------------------------------
"""


def test_an_exception_group_offers_the_group_then_its_exceptions_in_order() -> None:
    """Each box of the group's traceback read as the exception it shows: the outer
    group first (the one raised), then the nested group and its exceptions, in the
    order printed; the frames of a box are its own."""
    from errscan.matching import Seen, parse_chain

    seen = list(reversed(parse_chain(GROUP_SHOWN)))
    assert [(s.exception, s.message) for s in seen] == [
        ("ExceptionGroup", "outer group (2 sub-exceptions)"),
        ("ExceptionGroup", "inner group (2 sub-exceptions)"),
        ("KeyError", "'no entry a'"),
        ("ValueError", "bad value"),
        ("TypeError", "wrong type"),
    ]
    assert seen[0].frames == (("main.py", 3, "<module>"), ("/srv/app/m.py", 14, "run"))
    assert seen[2].frames == (("/srv/app/m.py", 9, "run"), ("/srv/app/m.py", 2, "inner"))
    # a message's own ruled lines are no group's
    table = "ValueError: bad rows\n+-------+-------+\n| a | b |\n+------------"
    shown = 'Traceback (most recent call last):\n  File "m.py", line 3, in f\n' + table
    assert parse_chain(shown) == [Seen("ValueError", table[12:], (("m.py", 3, "f"),))]
    records = errscan.extract_source(GROUPED, path="m.py")
    found = [(m.record.line, m.kind) for m in errscan.lookup(GROUP_SHOWN, records)]
    # the raises: the outer group's, then the KeyError's (the rest are built, not raised)
    assert found[:2] == [(14, "full"), (2, "full")]


def test_a_log_holds_an_exception_group_s_traceback_as_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Up to its last ruled line, in blocks of any size: the log's next line is an
    error of its own."""
    import io

    from errscan import logs
    from errscan.matching import TemplateIndex

    index = TemplateIndex(errscan.extract_source(GROUPED, path="m.py"))
    text = "INFO start\n" + GROUP_SHOWN + "ERROR KeyError: 'no entry b'\nINFO done\n"

    def found() -> list[tuple[int, int | None, str]]:
        stream = io.BytesIO(text.encode())
        return [(f.line, f.match.record.line if f.match else None, f.text.split("\n")[-1].strip())
                for f in logs.scan_log(stream, index)]  # fmt: skip

    whole = found()
    assert whole == [
        (2, 14, "+------------------------------------"),
        (2 + len(GROUP_SHOWN.splitlines()), 2, "KeyError: 'no entry b'"),
    ]
    for size in (16, 100, 333):
        monkeypatch.setattr(logs, "_BLOCK", size)
        assert found() == whole, size


PYTESTED = """\
def find(key):
    raise KeyError(f"no entry {key}")


def load(key):
    if not key:
        raise ValueError(f"empty key given: {key!r}")
    return find(key)
"""


@pytest.mark.parametrize("color", ["no", "yes"])
@pytest.mark.parametrize("tb", ["long", "short", "line"])
def test_a_pasted_pytest_failure_lands_on_its_site(tb: str, color: str, tmp_path: Path) -> None:
    """What pytest reports of a failure, as a CI log holds it, with `--tb` long (its
    default), short or line, in colour or not, pytest run for real: its `E` lines are
    the exception, the places of its entries (`m.py:8: in load`) the frames; a
    terminal's escape sequences are no part of them. A log of it finds the same."""
    import io
    import os
    import re
    import subprocess
    import sys

    from errscan.logs import scan_log
    from errscan.matching import ANSI, TemplateIndex

    (tmp_path / "m.py").write_text(PYTESTED)
    (tmp_path / "test_m.py").write_text(
        "from m import load\n\ndef test_load():\n    load('')\n\ndef test_find():\n    load('k')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    shown = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--tb={tb}",
         f"--color={color}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    assert ("\x1b[" in shown) == (color == "yes")
    # the report cut up where the plain text says, the lines as the terminal showed them
    lines, plain = shown.split("\n"), ANSI.sub("", shown).split("\n")
    first = next(i for i, line in enumerate(plain) if " FAILURES " in line) + 1
    last = next(i for i, line in enumerate(plain) if "short test summary" in line)
    if tb == "line":  # `E   Type: text`, then `/path/m.py:2: Type: text`, a failure each
        pairs = range(first, last, 2)
        failures = ["\n".join(lines[i : i + 2]) for i in pairs] + [lines[i + 1] for i in pairs]
    else:
        heads = [i for i in range(first, last) if re.fullmatch(r"_+ test_\w+ _+", plain[i])]
        failures = [
            "\n".join(lines[a + 1 : b]) for a, b in zip(heads, [*heads[1:], last], strict=True)
        ]
    records = errscan.extract_source(PYTESTED, path="m.py")
    found = [errscan.lookup(failure, records)[0] for failure in failures]
    expected = [7, 2] if tb != "line" else [7, 2, 7, 2]
    assert [(m.record.line, m.kind) for m in found] == [(line, "full") for line in expected]
    index = TemplateIndex(records)
    logged = [(f.match.record.line, f.match.kind) if f.match else None
              for f in scan_log(io.BytesIO(shown.encode()), index)]  # fmt: skip
    assert set(logged) == {(7, "full"), (2, "full")}


def test_a_warning_s_place_in_a_log_tells_which_site_warned() -> None:
    """Python prints a warning as `/srv/app/m.py:8: UserWarning: text` (pytest's
    --tb=line a failure so): the place before the name is the frame that tells two sites
    of one template apart, a Windows path too."""
    import io

    from errscan import logs
    from errscan.matching import TemplateIndex

    code = (
        "import warnings\n\ndef a():\n    warnings.warn('deprecated thing')\n\n\n"
        "def b():\n    warnings.warn('deprecated thing')\n"
    )
    index = TemplateIndex(errscan.extract_source(code, path="m.py"))
    log = (
        "INFO x\n/srv/app/m.py:8: UserWarning: deprecated thing\n"
        "  warnings.warn('deprecated thing')\n"
        "2026-12-03 WARNING C:\\app\\m.py:4: UserWarning: deprecated thing\n"
        "at m.py:4:UserWarning: deprecated thing\n"  # no place: `:` then no space
    )
    found = [(f.line, f.text.split(": ")[0], f.match.record.line if f.match else None)
             for f in logs.scan_log(io.BytesIO(log.encode()), index)]  # fmt: skip
    assert found[:2] == [(2, "/srv/app/m.py:8", 8), (4, "C:\\app\\m.py:4", 4)]
    assert found[2][:2] == (5, "UserWarning")


# what Python 3.13 prints of `m.load("k")` on a terminal (PYTHON_COLORS=1), the places
# and the exception's name in colours
COLOURED = (
    "Traceback (most recent call last):\n"
    '  File \x1b[35m"<string>"\x1b[0m, line \x1b[35m3\x1b[0m, in \x1b[35m<module>\x1b[0m\n'
    "    \x1b[31mm.load\x1b[0m\x1b[1;31m('k')\x1b[0m\n"
    '  File \x1b[35m"/srv/m.py"\x1b[0m, line \x1b[35m8\x1b[0m, in \x1b[35mload\x1b[0m\n'
    "    return find(key)\n"
    '  File \x1b[35m"/srv/m.py"\x1b[0m, line \x1b[35m2\x1b[0m, in \x1b[35mfind\x1b[0m\n'
    '    raise KeyError(f"no entry {key}")\n'
    "\x1b[1;35mKeyError\x1b[0m: \x1b[35m'no entry k'\x1b[0m\n"
)


def test_a_traceback_in_a_terminal_s_colours_is_read_as_without_them() -> None:
    """Pasted, and in a log: the colour sequences between a name and its `:` hide
    neither the exception nor the frames."""
    import io

    from errscan.logs import scan_log
    from errscan.matching import TemplateIndex, parse_chain

    (seen,) = parse_chain(COLOURED)
    assert (seen.exception, seen.message) == ("KeyError", "'no entry k'")
    assert seen.frames[-1] == ("/srv/m.py", 2, "find")
    index = TemplateIndex(errscan.extract_source(PYTESTED, path="m.py"))
    log = "INFO x\n" + COLOURED + "\x1b[31mERROR\x1b[0m \x1b[1;35mValueError\x1b[0m: empty\n"
    found = [(f.line, f.text.split("\n")[-1]) for f in scan_log(io.BytesIO(log.encode()), index)]
    assert found == [(2, "KeyError: 'no entry k'"), (10, "ValueError: empty")]


@pytest.mark.parametrize(
    "prefix",
    [
        "2026-12-03T10:00:0{n}.1234567Z ",  # GitHub Actions: a timestamp of one width
        "2026-12-03T10:00:00.{nanos}Z ",  # kubectl --timestamps: its zeros trimmed
        "web-1  | ",  # docker compose
        "Dec 03 10:00:0{n} host app[4242]: ",  # journald
    ],
)
def test_a_log_that_puts_something_before_each_line_holds_whole_tracebacks(
    prefix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each line of the log behind a timestamp or a name, a chain's tracebacks and an
    exception group's among them: the errors are those of the same log without it, read
    without what comes before their lines, in blocks of any size; a line of another
    source ends one."""
    import io

    from errscan import logs
    from errscan.matching import TemplateIndex

    chained = _traceback_of("load('k')", tmp_path)
    lines = ["starting", *chained.rstrip("\n").split("\n"), "next request",
             *GROUP_SHOWN.rstrip("\n").split("\n"), "done"]  # fmt: skip
    index = TemplateIndex(errscan.extract_source(CHAINED + GROUPED, path="m.py"))

    def found(before: str) -> list[tuple[int, str, str | None, str | None, str]]:
        log = (
            "".join(
                before.format(n=i % 10, nanos=str(i * 7919)[: 1 + i % 9]) + line + "\n"
                for i, line in enumerate(lines)
            )
            + "another source: ValueError: the first line\n"
        )
        return [(f.line, f.text.split("\n")[0], f.match.record.function if f.match else None,
                 f.match.kind if f.match else None, f.text.split("\n")[-1].strip())
                for f in logs.scan_log(io.BytesIO(log.encode()), index)]  # fmt: skip

    plain = found("")
    chain_end = len(chained.rstrip("\n").split("\n")) + 1
    second = next(i for i, line in enumerate(lines, 1) if i > 2 and line.startswith("Trace"))
    assert plain == [
        (2, "Traceback (most recent call last):", "find", "full", "KeyError: 'no entry k'"),
        (second, "Traceback (most recent call last):", "load", "full",
         "RuntimeError: cannot load 'k'"),
        (chain_end + 2, "+ Exception Group Traceback (most recent call last):", "run", "full",
         "+------------------------------------"),
        (len(lines) + 1, "ValueError: the first line", None, None, "ValueError: the first line"),
    ]  # fmt: skip
    assert found(prefix) == plain
    for size in (64, 333):
        monkeypatch.setattr(logs, "_BLOCK", size)
        assert found(prefix) == plain, size


def test_a_traceback_whose_header_alone_follows_a_text_is_read_whole() -> None:
    """`print(f"{ts} ERROR {traceback.format_exc()}")`: the header after a text of its
    line, the rest of the traceback without it: the lines as they are."""
    import io

    from errscan import logs
    from errscan.matching import TemplateIndex

    index = TemplateIndex(errscan.extract_source(CHAINED, path="m.py"))
    log = (
        "2026-12-03 10:00:00 ERROR Traceback (most recent call last):\n"
        '  File "m.py", line 2, in find\n    raise KeyError(f"no entry {key}")\n'
        "KeyError: 'no entry z'\n2026-12-03 10:00:01 INFO next\n"
    )
    (found,) = logs.scan_log(io.BytesIO(log.encode()), index)
    assert found.text.split("\n")[-1] == "KeyError: 'no entry z'"
    assert found.match is not None and found.match.record.function == "find"


def test_a_json_log_s_fields_hold_whole_errors(tmp_path: Path) -> None:
    """structlog's, python-json-logger's lines: a traceback in a string field, its
    newlines escaped, is the string's; a `Type: message` in one ends with the string,
    its escapes read (an escaped quote before it is no end); a name outside the line's
    strings is read as on any line."""
    import io
    import json as json_module

    from errscan import logs
    from errscan.matching import TemplateIndex

    index = TemplateIndex(errscan.extract_source(CHAINED, path="m.py"))
    shown = _traceback_of("load('k')", tmp_path)
    lines = [
        {"ts": "2026-12-03T10:00:00Z", "event": "request failed", "exc_info": shown},
        {"level": "error", "error": "KeyError: 'no entry z'", "path": "/x"},
        {"event": "said \"hi\", then RuntimeError: cannot load 'q'", "n": 1},
    ]
    log = "".join(json_module.dumps(line) + "\n" for line in lines)
    log += '{"a": "b"} KeyError: \'no entry w\'\n'
    found = [(f.line, f.text.split("\n")[-1], f.match.record.function if f.match else None,
              f.match.kind if f.match else None)
             for f in logs.scan_log(io.BytesIO(log.encode()), index)]  # fmt: skip
    assert found == [
        (1, "RuntimeError: cannot load 'k'", "load", "full"),
        (2, "KeyError: 'no entry z'", "find", "full"),
        (3, "RuntimeError: cannot load 'q'", "load", "full"),
        (4, "KeyError: 'no entry w'", "find", "full"),
    ]


# what IPython 8 prints of `m.load('k')` in a notebook's cell, m.py being CHAINED's
IPYTHON_SHOWN = """\
---------------------------------------------------------------------------
KeyError                                  Traceback (most recent call last)
File /srv/app/m.py:7, in load(key)
      6 try:
----> 7     return find(key)
      8 except KeyError as err:

File /srv/app/m.py:2, in find(key)
      1 def find(key):
----> 2     raise KeyError(f"no entry {key}")

KeyError: 'no entry k'

The above exception was the direct cause of the following exception:

RuntimeError                              Traceback (most recent call last)
Cell In[1], line 1
----> 1 import m; m.load('k')

File /srv/app/m.py:9, in load(key)
      7     return find(key)
      8 except KeyError as err:
----> 9     raise RuntimeError(f"cannot load {key!r}") from err

RuntimeError: cannot load 'k'
"""


def test_a_notebook_s_traceback_is_read_as_python_s() -> None:
    """IPython's and Jupyter's format: each frame's place above its numbered code, the
    exception after the last; a chain's last exception first."""
    from errscan.matching import parse_chain

    assert [(s.exception, s.message, s.frames) for s in parse_chain(IPYTHON_SHOWN)] == [
        ("KeyError", "'no entry k'", (("/srv/app/m.py", 7, "load"), ("/srv/app/m.py", 2, "find"))),
        ("RuntimeError", "cannot load 'k'", (("/srv/app/m.py", 9, "load"),)),
    ]
    records = errscan.extract_source(CHAINED, path="m.py")
    found = [(m.record.function, m.record.exception, m.kind)
             for m in errscan.lookup(IPYTHON_SHOWN, records)]  # fmt: skip
    assert found[:2] == [("load", "RuntimeError", "full"), ("find", "KeyError", "full")]


# what rich 15 prints of `m.load('k')` (rich.traceback, 100 columns), m being CHAINED
RICH_SHOWN = """\
╭─────────────────────────────── Traceback (most recent call last) ────────────────────────────────╮
│ /srv/app/mod3.py:7 in load                                                                       │
│                                                                                                  │
│    4                                                                                             │
│    5 def load(key):                                                                              │
│    6 │   try:                                                                                    │
│ ❱  7 │   │   return find(key)                                                                    │
│    8 │   except KeyError as err:                                                                 │
│    9 │   │   raise RuntimeError(f"cannot load {key!r}") from err                                 │
│   10                                                                                             │
│                                                                                                  │
│ /srv/app/mod3.py:2 in find                                                                       │
│                                                                                                  │
│    1 def find(key):                                                                              │
│ ❱  2 │   raise KeyError(f"no entry {key}")                                                       │
│    3                                                                                             │
│    4                                                                                             │
│    5 def load(key):                                                                              │
╰──────────────────────────────────────────────────────────────────────────────────────────────────╯
KeyError: 'no entry k'

The above exception was the direct cause of the following exception:

╭─────────────────────────────── Traceback (most recent call last) ────────────────────────────────╮
│ in <module>:5                                                                                    │
│                                                                                                  │
│ /srv/app/mod3.py:9 in load                                                                       │
│                                                                                                  │
│    6 │   try:                                                                                    │
│    7 │   │   return find(key)                                                                    │
│    8 │   except KeyError as err:                                                                 │
│ ❱  9 │   │   raise RuntimeError(f"cannot load {key!r}") from err                                 │
│   10                                                                                             │
╰──────────────────────────────────────────────────────────────────────────────────────────────────╯
RuntimeError: cannot load 'k'
"""


def test_a_rich_traceback_is_read_as_python_s() -> None:
    """rich's boxes (Typer's tracebacks): each frame's place above its code, the
    exception below the box; a chain's last exception first."""
    from errscan.matching import parse_chain

    assert [(s.exception, s.message, s.frames) for s in parse_chain(RICH_SHOWN)] == [
        ("KeyError", "'no entry k'",
         (("/srv/app/mod3.py", 7, "load"), ("/srv/app/mod3.py", 2, "find"))),
        ("RuntimeError", "cannot load 'k'", (("/srv/app/mod3.py", 9, "load"),)),
    ]  # fmt: skip
    records = errscan.extract_source(CHAINED, path="mod3.py")
    found = [(m.record.function, m.record.exception, m.kind)
             for m in errscan.lookup(RICH_SHOWN, records)]  # fmt: skip
    assert found[:2] == [("load", "RuntimeError", "full"), ("find", "KeyError", "full")]


def test_an_exception_shown_as_its_repr_is_read() -> None:
    """asyncio's `exception=ValueError('...')`, Celery's `raised unexpected:
    KeyError('...')`: the class, and the text its literal arguments make (a KeyError's
    repr of its key), pasted or in a log; arguments that are not literals, or a call of
    a class not named as an exception, are no exception."""
    import io

    from errscan import logs
    from errscan.matching import TemplateIndex, parse_chain

    def seen(text: str) -> tuple[str | None, str]:
        (one,) = parse_chain(text)
        return one.exception, one.message

    assert seen("Task t[1a] raised unexpected: KeyError('no entry k')") == (
        "KeyError", "'no entry k'")  # fmt: skip
    assert seen('exception=ValueError("a (b) c")>') == ("ValueError", "a (b) c")
    assert seen("err: errors.BadError('x', 2)") == ("errors.BadError", "('x', 2)")
    assert seen("err: ValueError(name)")[0] is None
    assert seen("Task('x') done")[0] is None
    index = TemplateIndex(errscan.extract_source(CHAINED, path="m.py"))
    log = (
        "Task exception was never retrieved\n"
        "future: <Task finished name='Task-1' coro=<main() done, defined at x.py:3> "
        "exception=RuntimeError(\"cannot load 'q'\")>\n"
        "[2026-12-03 10:00:00,000: ERROR/ForkPoolWorker-1] Task t[1a] raised unexpected: "
        "KeyError('no entry z')\n"
    )
    # lines of code, as pytest's report shows them, hold no repr
    log += (
        ">       raise KeyError('no entry z')\n    errors.append(KeyError('no entry z'))\n"
        "    return KeyError('no entry z')\n    err = KeyError('no entry z')\n"
    )
    found = [(f.line, f.match.record.function if f.match else None, f.match and f.match.kind)
             for f in logs.scan_log(io.BytesIO(log.encode()), index)]  # fmt: skip
    assert found == [(2, "load", "full"), (3, "find", "full")]


def test_reprs_that_do_not_read_are_tried_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """20,000 `ValueError(x)` in a pasted text: at most 8 reprs, 8 closing parentheses
    each, are given to literal_eval (it took 1.6 s when every one was)."""
    import ast

    from errscan.matching import parse_chain

    calls: list[str] = []
    real = ast.literal_eval

    def counted(text: str) -> object:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(ast, "literal_eval", counted)
    (seen,) = parse_chain("ValueError(x) " * 20_000)
    assert seen.exception is None and 0 < len(calls) <= 64


def test_a_text_copied_on_windows_reads_as_its_lines() -> None:
    """CRLF line ends are no part of a message: `KeyError: 'k'` copied on Windows
    matches in full, and a traceback's exception of several lines keeps its lines."""
    from errscan.matching import parse_chain

    records = errscan.extract_source(CHAINED, path="m.py")
    (best, *_) = errscan.lookup("KeyError: 'no entry z'\r\n", records)
    assert (best.record.function, best.kind) == ("find", "full")
    shown = 'Traceback (most recent call last):\r\n  File "m.py", line 9, in explain\r\n'
    (seen,) = parse_chain(shown + "ValueError: the first line\r\n  and an indented second line\r\n")
    assert seen.message == "the first line\n  and an indented second line"


NAMING_STR = """\
class KafkaError(RuntimeError):
    def __str__(self):
        return f"{type(self).__name__}: {super().__str__()}"


def connect(broker):
    raise KafkaError(f"cannot reach broker {broker}")


def send(topic):
    raise RuntimeError(f"KafkaError: no leader for {topic}")
"""


def test_a_line_read_as_type_and_message_is_also_tried_whole() -> None:
    """`KafkaError: cannot reach broker b1`, pasted alone, is what str() gives of an
    error whose __str__ names its class: where no KafkaError's template matches
    `cannot reach broker b1`, the line is matched whole. A line whose message part does
    match keeps that match first."""
    records = errscan.extract_source(NAMING_STR, path="kafka.py")
    named = next(r for r in records if r.function == "connect")
    assert named.message == "KafkaError: cannot reach broker {broker}"  # the premise
    found = errscan.lookup("KafkaError: cannot reach broker b1", records)
    assert found and found[0].record == named and found[0].kind == "full"
    plain = next(r for r in records if r.function == "send")
    # a RuntimeError whose message is `KafkaError: no leader for t`: send's, as before
    found = errscan.lookup("RuntimeError: KafkaError: no leader for t", records)
    assert found and found[0].record == plain
    # no type and message to split: nothing changes
    assert errscan.lookup("cannot reach broker b1", records)[0].record == named
