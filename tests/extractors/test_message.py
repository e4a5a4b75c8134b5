"""Message templates, one row per form: the snippet's first raise and what its record says."""

from __future__ import annotations

import pytest

import errscan

CASES = [
    # (message expression, message, message_source)
    ('"plain"', "plain", "literal"),
    ('"a" "b" \'c\'', "abc", "literal"),
    ('"tab\\there\\n"', "tab\there\n", "literal"),
    ('"""multi\nline"""', "multi\nline", "literal"),
    ('f"x {a} y"', "x {a} y", "fstring"),
    ('f"{a!r}{b!s}{c!a}"', "{a!r}{b!s}{c!a}", "fstring"),
    ('f"{ratio:.2f}"', "{ratio:.2f}", "fstring"),
    ('f"{v:>{width}}"', "{v:>{width}}", "fstring"),
    ("f\"{p.pid} {d['k']} {f(x, y)}\"", "{p.pid} {d['k']} {f(x, y)}", "fstring"),
    ('"lit " f"{a}" " tail"', "lit {a} tail", "fstring"),
    ('f"{{literal braces}} {a}"', "{literal braces} {a}", "fstring"),
    ('"%s and %r" % (a, b)', "{a} and {b!r}", "percent"),
    ('"only %s" % a', "only {a}", "percent"),
    ('"%(x)s-%(y)r" % {"x": a, "y": b}', "{a}-{b!r}", "percent"),
    ('"%(x)s" % kw', "{kw['x']}", "percent"),
    ('"%s %s" % args', "{args[0]} {args[1]}", "percent"),
    ('"100%% of %d" % n', "100% of {n:d}", "percent"),
    ('"{} {}".format(a, b)', "{a} {b}", "format"),
    ('"{1} {0}".format(a, b)', "{b} {a}", "format"),
    ('"{name!r:>10}".format(name=a)', "{a!r:>10}", "format"),
    ('"{0.x} {k[1]}".format(a, k=b)', "{a.x} {b[1]}", "format"),
    ('"{a}".format(**kw)', "{kw['a']}", "format"),
    ('"{0:{w}}".format(a, w=3)', "{a:{3}}", "format"),
    ('"a" + b + "c"', "a{b}c", "concat"),
    ('"a" + str(b) + repr(c)', "a{b}{c!r}", "concat"),
    ('"a" + f"{b}"', "a{b}", "concat"),
]


@pytest.mark.parametrize(("expr", "message", "source"), CASES)
def test_message_template(expr: str, message: str, source: str) -> None:
    (record,) = errscan.extract_source(f"raise ValueError({expr})\n")
    assert (record.message, record.message_source) == (message, source)


UNRESOLVED = [
    "name",
    "a + b",
    "obj.message",
    "get_message()",
    '"{} {}".format(a)',  # an IndexError at run time, not a message
    '"{0} {}".format(a, b)',  # manual and automatic numbering mixed
    '"%s %s" % (a,)',  # too few values
    "b'bytes'",
    "42",
]


@pytest.mark.parametrize("expr", UNRESOLVED)
def test_unresolved_message_is_null(expr: str) -> None:
    (record,) = errscan.extract_source(f"raise ValueError({expr})\n")
    assert record.message is None
    assert record.message_parts == ()
    assert record.message_source == "unresolved"


def test_parts_keep_expression_conversion_and_spec() -> None:
    (record,) = errscan.extract_source('raise E(f"pid={p.pid!r:>8} {{x}}")\n')
    parts = [part.to_dict() for part in record.message_parts]
    assert parts == [
        {"text": "pid="},
        {"expr": "p.pid", "conversion": "r", "format_spec": ">8"},
        {"text": " {x}"},
    ]


def test_multiline_placeholder_expression_is_unparsed_on_one_line() -> None:
    code = 'raise E(f"""a {x +\n    1} b""")\n'
    (record,) = errscan.extract_source(code)
    assert record.message == "a {x + 1} b"


def test_no_message() -> None:
    records = errscan.extract_source("raise E\nraise E()\nraise m.E\nassert x\n")
    assert [(r.message, r.message_source) for r in records] == [(None, "none")] * 4
