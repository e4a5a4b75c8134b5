"""Decoding and parsing: encodings, newer syntax through LibCST, and clear failures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import errscan
from errscan.analyzer import parse as parse_stage
from errscan.analyzer.parse import Parsed, parse
from errscan.models import FileError
from tests.support import build_repo


def message_of(code: str) -> str | None:
    (record,) = errscan.extract_source(code)
    return record.message


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ('raise E(f"{d["k"]} and {d[\'j\']}")\n', "{d[\"k\"]} and {d['j']}"),
        ('raise E(f"a {\n    b\n} c")\n', "a {b} c"),
        ('raise E(f"{x:{"<" if l else ">"}10}")\n', '{x:{"<" if l else ">"}10}'),
        ("type A = int\nraise E('after a type alias')\n", "after a type alias"),
        ("def f[T](x: T):\n    raise E(f'{x}')\n", "{x}"),
        ("class C[T, *Ts, **P]:\n    raise E('generic class')\n", "generic class"),
        ("try:\n    pass\nexcept A, B:\n    raise E('pep 758')\n", "pep 758"),
        ("try:\n    pass\nexcept* A:\n    raise E('pep 654')\n", "pep 654"),
    ],
)
def test_newer_syntax_is_extracted(code: str, message: str) -> None:
    assert message_of(code) == message


def test_rewritten_file_keeps_lines_and_shows_the_original() -> None:
    code = 'def f[T](x):\n    raise E(f"{x["k"]}")\n'
    (record,) = errscan.extract_source(code, context=1)
    assert (record.line, record.function) == (2, "f")
    assert record.context.code == code.rstrip("\n")


EXCEPT_STAR = """\
def check(items):
    try:
        run(items)
    except* ValueError as group:  raise RuntimeError(f"{len(group.exceptions)} bad")
    except *(KeyError, OSError):
        raise LookupError("missing")
    else:
        raise StopIteration("all ran")
"""


def test_except_star_reads_the_same_natively_and_rewritten() -> None:
    """Python 3.10 reads try/except* as LibCST rewrites it, `except` and a space for
    `except*`: every line as long, and every record as 3.11 on read it natively (this
    interpreter's `ast` on the rewritten text: the same as on 3.10)."""
    from errscan.analyzer.downlevel import rewrite

    rewritten = rewrite(EXCEPT_STAR)
    assert rewritten is not None and "except*" not in rewritten and "except *" not in rewritten
    assert [len(line) for line in rewritten.splitlines()] == [
        len(line) for line in EXCEPT_STAR.splitlines()
    ]

    def read(code: str) -> list[tuple[object, ...]]:
        return [
            (r.kind, r.exception, r.message, r.line, r.col, r.function, r.guards, r.trigger)
            for r in errscan.extract_source(code)
        ]

    found = read(EXCEPT_STAR)
    assert [f[1] for f in found] == ["RuntimeError", "LookupError", "StopIteration"]
    assert found[2][6] == ("the try block raised nothing",)
    assert read(rewritten) == found


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'print "x"\n', "(Python 2 code?)"),
        (b'raise E, "x"\n', "(Python 2 code?)"),
        (b"def f(:\n", "syntax error (line 1)"),
        (b"x = 1\x00\n", "null bytes"),
        (b"# -*- coding: nonsense -*-\nx = 1\n", "cannot decode"),
        (b"x = '\xff'\n", "cannot decode"),
    ],
)
def test_failures_say_why(data: bytes, reason: str) -> None:
    result = parse(data, "bad.py")
    assert isinstance(result, FileError)
    assert reason in result.reason
    assert "\n" not in result.reason


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ("# -*- coding: latin-1 -*-\nx = 'café'\n".encode("latin-1"), "café"),
        ("# coding=cp1252\nx = '€'\n".encode("cp1252"), "€"),
        ("\ufeffx = 'bom'\n".encode(), "bom"),
    ],
)
def test_encodings(data: bytes, text: str) -> None:
    result = parse(data, "enc.py")
    assert isinstance(result, Parsed)
    assert text in result.src.text


def test_libcst_is_not_imported_for_files_ast_reads(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "messages", "messages")  # every file parses with ast
    probe = (
        "import sys, errscan\n"
        f"assert errscan.extract({str(repo)!r}, use_cache=False).stats.sites > 40\n"
        "print('libcst' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("text", "newer_than"),  # asked of LibCST on Pythons older than this
    [
        ("x = = 1\n", (3, 0)),
        ("\n" * 10_000 + "print 'python 2'\n", (3, 0)),
        ('x = f"{"a"}"\n', (3, 12)),
        ("type X = int\n", (3, 12)),
        ("def f[T](x: T) -> T: ...\n", (3, 12)),
        ("try:\n    pass\nexcept A, B:\n    pass\n", (3, 14)),
        ("try:\n    pass\nexcept *A:\n    pass\n", (3, 11)),
    ],
)
def test_libcst_is_asked_only_where_newer_syntax_may_stand(
    text: str, newer_than: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(parse_stage, "downlevel", lambda t: calls.append(t))
    parse_stage.parse(text, "m.py")
    assert bool(calls) == (sys.version_info < newer_than)


UNSPELLABLE = """\
def a(items):
    raise ValueError(f"joined: {'\\n'.join(items)}")


def b(x):
    raise TypeError(f"commented {
        x  # the value
    }")


def c():
    raise RuntimeError(f"still {'read'}")
"""


def test_an_f_string_no_older_python_can_spell_costs_only_its_own_message() -> None:
    """PEP 701: a backslash or a comment inside the braces. The file once became one
    file error; now every site stays, and only those messages may be unresolved."""
    records = errscan.extract_source(UNSPELLABLE, path="m.py")
    assert [(r.function, r.line) for r in records] == [("a", 2), ("b", 6), ("c", 12)]
    assert records[2].message == "still read"
    if sys.version_info < (3, 12):
        assert [r.message for r in records[:2]] == [None, None]
        assert records[0].message_expr == "f\"joined: {'\\n'.join(items)}\""
        assert records[1].message_expr == 'f"commented { x # the value }"'
    else:
        assert records[0].message == "joined: {'\\n'.join(items)}"


@pytest.mark.parametrize(
    ("raised", "reason", "transient"),
    [
        # Python 3.12 and later, past the parser's depth: the file's own, kept
        (MemoryError("Parser stack overflowed - Python source too complex to parse"),
         "cannot parse: too deeply nested for Python's parser", False),
        # out of memory (and, on 3.10 and 3.11, a bare stack overflow): never kept
        (MemoryError(), "cannot parse: out of memory", True),
    ],
)  # fmt: skip
def test_a_parser_stack_overflow_is_the_file_s_error_and_memory_running_out_is_not(
    monkeypatch: pytest.MonkeyPatch, raised: MemoryError, reason: str, transient: bool
) -> None:
    def failing(_text: str, _path: str) -> None:
        raise raised

    monkeypatch.setattr(parse_stage, "_ast_parse", failing)
    assert parse(b"x = 1\n", "m.py") == FileError("m.py", reason, transient)


def test_a_file_nested_past_the_parser_s_depth_is_an_error_of_its_own() -> None:
    """`not not ... x` 10,000 deep: what this Python's parser says, one file's error."""
    found = parse(("y = " + "not " * 10_000 + "z\n").encode(), "deep.py")
    assert isinstance(found, FileError)
    if sys.version_info >= (3, 12):
        assert found == FileError("deep.py", "cannot parse: too deeply nested for Python's parser")
    else:  # a bare MemoryError, which may as well be the machine's
        assert found == FileError("deep.py", "cannot parse: out of memory", transient=True)


def _decoded_by_tokenize(data: bytes) -> str:
    """What decode gave before its quick path: tokenize's encoding, or the error."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        return "cannot decode: " + " ".join(str(exc).split())


_PIECES = st.sampled_from(
    [b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-", b"# coding=utf-8", b"# vim: coding: cp1252",
     b"# coding: bogus-9", b"#!/usr/bin/env python", b"x = 1", b"\n", b"\r\n", b"\r", b"",
     "caf\u00e9 = '\u20ac'".encode(), b"\xe9\xff", b"coding", b"  ", b"\x00"]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES | st.binary(max_size=6), max_size=8).map(b"".join))
def test_decode_says_what_tokenize_says(data: bytes) -> None:
    """The quick path (no `coding` on the first two lines, no BOM: UTF-8) gives the text,
    or the error, that tokenize's encoding gives, cookies, BOMs and bad bytes alike."""
    found = parse_stage.decode(data, "m.py")
    expected = _decoded_by_tokenize(data)
    assert (found.reason if isinstance(found, FileError) else found) == expected


def test_a_file_of_more_statements_than_parsed_is_a_file_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parse_stage, "MAX_STATEMENTS", 10)
    found = parse("x=1;" * 11, "m.py")
    assert isinstance(found, FileError)
    assert (
        found.reason
        == "too many lines to parse: 11 lines and semicolons; errscan parses at most 10"
    )
    assert isinstance(parse("x=1;" * 10, "m.py"), Parsed)  # as many as it takes
    assert isinstance(parse("x = 1\n" * 10, "m.py"), Parsed)
