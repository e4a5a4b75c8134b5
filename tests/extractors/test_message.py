"""Message templates, one row per form: the snippet's first raise and what its record says."""

from __future__ import annotations

import pytest

import errscan
from errscan.extractors import message

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
    # the code's text where its user sets none: a default
    ('msg or "value is not allowed"', "value is not allowed", "default"),
    ('self.msg or "at least %s" % self.min', "at least {self.min}", "default"),
    ('msg or default_msg or f"bad {v}"', "bad {v}", "default"),
    ('"closed file." if msg is None else msg', "closed file.", "default"),
    ('self.msg if self.msg is not None else f"bad {v}"', "bad {v}", "default"),
    ('__("console text %s") % name', "console text {name}", "percent"),  # Sphinx's gettext
    # str() of a tuple: each item's repr, a literal's as it prints, a lone one's comma
    ('("root", name, 1, None)', "('root', {name!r}, 1, None)", "format"),
    ("(node, self.stack)", "({node!r}, {self.stack!r})", "format"),
    ("('say \"hi\"',)", "('say \"hi\"',)", "format"),
    ("()", "()", "format"),
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
    'msg or ""',  # no text of its own
    "msg or other",  # no default written
    '"a" or msg',  # the literal is never false: an expression not read
    '"a" if strict else msg',  # a choice the test does not make of msg
    "(*names,)",  # how many items, unknown
]


@pytest.mark.parametrize("expr", UNRESOLVED)
def test_unresolved_message_is_null(expr: str) -> None:
    (record,) = errscan.extract_source(f"raise ValueError({expr})\n")
    assert record.message is None
    assert record.message_parts == ()
    assert record.message_source == "unresolved"


def test_an_assert_s_tuple_prints_as_a_tuple() -> None:
    """`assert ok, (node, stack)`: AssertionError's text is str() of the tuple."""
    (record,) = errscan.extract_source('def f(node, stack):\n    assert ok, ("in", node)\n')
    assert (record.message, record.message_source) == ("('in', {node!r})", "format")


def test_a_tuple_among_several_arguments_is_no_text() -> None:
    """Only as the one argument is a tuple the text: among others, a string is."""
    (record,) = errscan.extract_source('raise CheckedError(("int",), "not an int")\n')
    assert (record.message, record.message_source) == ("not an int", "literal")


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


@pytest.mark.parametrize("plural", ["ngettext", "ungettext", "translation.ngettext_lazy"])
def test_a_plural_message_is_a_candidate_of_its_own(plural: str) -> None:
    """ngettext's singular is the message, its plural a candidate too; a file that never
    names ngettext is not searched for it (message.templates asks the source first)."""
    code = (
        f'def f(n):\n    raise ValueError({plural}("%(n)d item", "%(n)d items", n) % {{"n": n}})\n'
    )
    (record,) = errscan.extract_source(code)
    assert record.message == "{n:d} item"
    assert record.message_candidates == ("{n:d} item", "{n:d} items")
    (single,) = errscan.extract_source(
        'def f(n):\n    raise ValueError(_("%(n)d item") % {"n": n})\n'
    )
    assert single.message_candidates == ("{n:d} item",)
    assert all("ngettext" in name for name in message._NGETTEXT)


def test_no_message() -> None:
    code = "class E(Exception): pass\nraise E\nraise E()\nraise KeyError\nassert x\n"
    records = errscan.extract_source(code)
    assert [(r.message, r.message_source) for r in records] == [(None, "none")] * 4


def test_no_arguments_to_a_class_errscan_cannot_read_is_unresolved() -> None:
    code = (
        "from dep import BadRequest\n"
        "class Sub(BadRequest): pass\n"
        "raise BadRequest()\nraise Sub\nraise m.E\n"
    )
    records = errscan.extract_source(code)
    # its __str__ may say something ("400 Bad Request: ..."): not read as no text
    assert [(r.message, r.message_source) for r in records] == [(None, "unresolved")] * 3


FOLLOWED = [
    # (function body or module, message, message_source, candidates)
    ('msg = "m"\nraise E(msg)', "m", "variable", ("m",)),
    ('msg = f"a {x}"\nmsg += "b"\nmsg += str(y)\nraise E(msg)', "a {x}b{y}", "variable", None),
    (
        'if c:\n    msg = "one"\nelse:\n    msg = "two"\nraise E(msg)',
        "one",
        "variable",
        ("one", "two"),
    ),
    ('if c:\n    msg = "one"\nelse:\n    msg = compute()\nraise E(msg)', None, "unresolved", ()),
    ('msg = "m"\nfor msg in items:\n    pass\nraise E(msg)', None, "unresolved", ()),
    ('raise E("a" if c else "b")', "a", "literal", ("a", "b")),
    ('raise E("a" if c else other)', None, "unresolved", ()),
    # a message looked up in a literal dict: each value a candidate, the general first
    (
        'msg = {1: f"bad {x}", 2: f"bad {x}, really"}[c]\nraise E(msg)',
        "bad {x}{msg}",
        "variable",
        ("bad {x}{msg}", "bad {x}", "bad {x}, really"),
    ),
    ('raise E({1: "a", 2: "b"}.get(c, "none"))', "a", "literal", ("a", "b", "none")),
    ('raise E({1: "a", 2: other}[c])', None, "unresolved", ()),
    ('raise E({1: "a"}.get(c))', None, "unresolved", ()),  # None where c is not a key
    ('raise E({1: "a", **more}[c])', None, "unresolved", ()),
    ('raise E(" ".join(["x", str(n), "y"]))', "x {n} y", "concat", None),
    ('raise E("\\n".join(("a", "b")))', "a\nb", "concat", None),
    ('raise E(", ".join(names))', None, "unresolved", ()),
    ('raise E(textwrap.dedent("""\\n    a\\n      b\\n"""))', "\na\n  b\n", "concat", None),
    ('raise E(f"  padded {x}  ".strip())', "padded {x}", "concat", None),
    ('raise E("%s of %d" % ("lit", 3))', "lit of 3", "percent", None),
    ("raise E(status_code=404, detail=f'no {item}')", "no {item}", "keyword", None),
    ('raise E(errno.ENOENT, "gone", path)', "gone", "literal", None),
    ('raise self._error("from a factory")', "from a factory", "factory", None),
    ('err = ValueError("built first")\nraise err', "built first", "literal", None),
    ('sys.exit("bye")', "bye", "literal", None),
    ("sys.exit(2)", None, "none", ()),
    ('warnings.warn("old", DeprecationWarning)', "old", "literal", None),
    ('warnings.warn(FutureWarning("soon"))', "soon", "literal", None),
]


@pytest.mark.parametrize(("body", "message", "source", "candidates"), FOLLOWED)
def test_messages_followed_through_names_and_calls(
    body: str, message: str | None, source: str, candidates: tuple[str, ...] | None
) -> None:
    code = "import sys, textwrap, warnings, errno\ndef f(self, c, x, y, n, items, names):\n"
    code += "".join(f"    {line}\n" for line in body.splitlines())
    (record,) = errscan.extract_source(code)
    assert (record.message, record.message_source) == (message, source)
    if candidates is not None:
        assert record.message_candidates == candidates


def test_constants_of_module_and_class() -> None:
    code = (
        'LIMIT = "limit reached"\nTWICE = "a"\nTWICE = "b"\n'
        "class C:\n"
        '    TEMPLATE = "service {name} failed"\n'
        "    def f(self):\n"
        "        raise E(LIMIT)\n"
        '        raise E(self.TEMPLATE.format(name="db"))\n'
        "        raise E(C.TEMPLATE)\n"
        "        raise E(TWICE)\n"
    )
    found = [(r.message, r.message_source) for r in errscan.extract_source(code)]
    assert found == [
        ("limit reached", "constant"),
        ("service db failed", "constant"),
        ("service {name} failed", "constant"),
        (None, "unresolved"),  # assigned twice: not a constant
    ]


_TEXT_FUNCTIONS = '''
def located(message, where="the top", *, line=0):
    """The message, with where it happened."""
    return f"{message} (at {where}, line {line:>3})"

def shadowed(message):
    return f"shadowed: {message}"

def check(path, located_elsewhere):
    shadowed = str
    if path == 1:
        raise ValueError(located(f"no {path!r}", line=4))
    if path == 2:
        raise ValueError(located("no key", path))
    if path == 3:
        raise ValueError(located(*path))
    if path == 4:
        raise ValueError(located())
    if path == 5:
        raise ValueError(shadowed("x"))

    def _error(msg):
        return msg + " at " + path

    def inner():
        raise ValueError(_error("empty segment"))
'''


def test_a_function_returning_a_text_of_its_arguments_is_read_with_the_call_in() -> None:
    found = {r.line: r.message for r in errscan.extract_source(_TEXT_FUNCTIONS)}
    assert found[12] == "no {path!r} (at the top, line   4)"  # keyword and default
    assert found[14] == "no key (at {path}, line   0)"
    assert found[16] is None and found[18] is None  # `*path`, a parameter not given
    assert found[20] is None  # a local of that name hides the module's function
    assert found[26] == "empty segment at {path}"  # defined in the function around


_MESSAGE_ATTRIBUTE = """
class Check:
    def __init__(self, message=None):
        self.message = message

    def unset(self, value):
        message = self.message
        if message is None:
            message = f"Invalid value {value!r}."
        raise ValueError(message)

    def built(self, mode):
        message = self.message
        if mode:
            message = f"built {mode}"
        raise ValueError(message)
"""


def test_a_message_attribute_given_a_text_where_it_is_none_is_read_as_a_default() -> None:
    found = {
        r.line: (r.message, r.message_source) for r in errscan.extract_source(_MESSAGE_ATTRIBUTE)
    }
    assert found[10] == ("Invalid value {value!r}.", "default")
    assert found[16] == (None, "unresolved")  # set on another condition: not a default
