"""Stable ids: the same error keeps its id when code moves or a new commit is scanned."""

from __future__ import annotations

from pathlib import Path

import errscan
from tests.support import commit_all, git, write


def _new_repo(tmp_path: Path) -> Path:
    """An empty git repository, `r` under `tmp_path`."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    return repo


def ids_by_message(result: errscan.ScanResult) -> dict[tuple[str, str | None, int], str]:
    seen: dict[tuple[str, str | None], int] = {}
    out = {}
    for record in result.records:
        key = (record.file, record.message)
        n = seen.get(key, 0)
        seen[key] = n + 1
        out[(record.file, record.message, n)] = record.id
    return out


def test_ids_survive_moved_lines_and_new_commits(basic_repo: Path) -> None:
    before = errscan.extract(f"{basic_repo}@HEAD")
    engine = (basic_repo / "pkg" / "engine.py").read_text()
    write(basic_repo, "pkg/engine.py", "# a new header\n\n\n" + engine)
    write(basic_repo, "pkg/new.py", 'raise ValueError("new")\n')
    commit_all(basic_repo, "move lines")
    after = errscan.extract(f"{basic_repo}@HEAD")
    assert before.commit != after.commit
    old, new = ids_by_message(before), ids_by_message(after)
    assert all(new[key] == value for key, value in old.items())
    moved = [r for r in after.records if r.file == "pkg/engine.py"]
    assert moved[0].line == next(r for r in before.records if r.id == moved[0].id).line + 3


def test_ids_are_16_hex_and_unique() -> None:
    records = errscan.extract_source(
        'def f():\n    raise ValueError("same")\n    raise ValueError("same")\n'
        'def g():\n    raise ValueError("same")\n'
    )
    ids = [r.id for r in records]
    assert len(set(ids)) == 3
    assert all(len(i) == 16 and int(i, 16) >= 0 and i == i.lower() for i in ids)


def test_first_identical_site_keeps_its_id_when_a_twin_is_added() -> None:
    one = errscan.extract_source('def f():\n    raise ValueError("same")\n')
    two = errscan.extract_source(
        'def f():\n    raise ValueError("same")\n    raise ValueError("same")\n'
    )
    assert one[0].id == two[0].id


def test_id_changes_with_message_exception_function_and_repo() -> None:
    base = errscan.extract_source('def f():\n    raise ValueError("a")\n')[0].id
    variants = [
        'def f():\n    raise ValueError("b")\n',
        'def f():\n    raise TypeError("a")\n',
        'def g():\n    raise ValueError("a")\n',
    ]
    assert all(errscan.extract_source(code)[0].id != base for code in variants)
    assert (
        errscan.extract_source('def f():\n    raise ValueError("a")\n', path="other.py")[0].id
        != base
    )


def test_unresolved_messages_are_told_apart_by_their_expression() -> None:
    a, b = errscan.extract_source("raise ValueError(x)\nraise ValueError(y)\n")
    c, d = errscan.extract_source("raise ValueError(y)\nraise ValueError(x)\n")
    assert (a.id, b.id) == (d.id, c.id)


def test_module_names_in_src_and_lib_layouts_are_import_names(tmp_path: Path) -> None:
    """Issue family 8: `requests`, not `src.requests`; `sqlalchemy`, not `lib.sqlalchemy`,
    in exception classes and in the module a trigger names."""
    repo = _new_repo(tmp_path)
    for root, package in (("src", "acme"), ("lib", "other")):
        write(repo, f"{root}/{package}/__init__.py", "")
        write(repo, f"{root}/{package}/errors.py",
              "class E(Exception):\n    pass\n\nraise E('at import')\n")  # fmt: skip
    commit_all(repo, "layouts")
    records = {r.file: r for r in errscan.extract(str(repo)).records}
    for path, module in (("src/acme/errors.py", "acme"), ("lib/other/errors.py", "other")):
        assert records[path].exception_qualname == f"{module}.errors.E"
        assert records[path].trigger == f"Raised while importing {module}.errors."


def test_raise_of_a_factory_giving_back_the_exception_being_handled_is_a_reraise(
    tmp_path: Path,
) -> None:
    """jinja2's rewrite_traceback_stack, in another module: what it returns was raised
    before, so raising it (or calling a helper that does) re-raises what is handled."""
    repo = _new_repo(tmp_path)
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/debug.py", (
        "import sys\nimport typing as t\n\n"
        "def rewrite_traceback_stack(source=None):\n"
        "    _, exc_value, tb = sys.exc_info()\n"
        "    exc_value = t.cast(BaseException, exc_value)\n"
        "    return exc_value.with_traceback(tb)\n\n"
        "def make(source=None):\n"
        "    exc_value = ValueError(source)\n"
        "    return exc_value.with_traceback(None)\n"
    ))  # fmt: skip
    write(repo, "pkg/env.py", (
        "class Environment:\n"
        "    def handle_exception(self, source=None):\n"
        "        from .debug import rewrite_traceback_stack\n\n"
        "        raise rewrite_traceback_stack(source=source)\n\n"
        "    def compile(self, source):\n"
        "        try:\n"
        "            return self._parse(source)\n"
        "        except (TemplateSyntaxError, KeyError):\n"
        "            self.handle_exception(source=source)\n\n"
        "    def other(self, source):\n"
        "        from .debug import make\n\n"
        "        raise make(source)\n"
    ))  # fmt: skip
    commit_all(repo, "factories")
    found = [
        (r.function, r.kind, r.reraises, r.exception_qualname, r.trigger)
        for r in errscan.extract(str(repo)).records
        if r.file == "pkg/env.py"
    ]
    assert found == [
        ("Environment.handle_exception", "reraise", (), None,
         "Re-raised by Environment.handle_exception."),
        ("Environment.compile", "reraise", ("TemplateSyntaxError", "KeyError"), None,
         "Re-raised by Environment.compile while handling (TemplateSyntaxError, KeyError)."),
        # built here, its traceback cleared: a ValueError, not a re-raise
        ("Environment.other", "raise", (), "builtins.ValueError", "Raised by Environment.other."),
    ]  # fmt: skip


def test_a_factory_returning_another_factory_s_error_makes_its_class(tmp_path: Path) -> None:
    """docutils's Directive.error returns self.directive_error(3, message), which
    returns DirectiveError(level, message): raise self.error(...) in a subclass elsewhere
    raises a DirectiveError."""
    repo = _new_repo(tmp_path)
    write(repo, "pkg/__init__.py", (
        "class DirectiveError(Exception):\n"
        "    def __init__(self, level, message):\n"
        "        Exception.__init__(self)\n"
        "        self.msg = message\n\n"
        "class Directive:\n"
        "    def directive_error(self, level, message):\n"
        "        return DirectiveError(level, message)\n\n"
        "    def error(self, message):\n"
        "        return self.directive_error(3, message)\n\n"
        "    def loop(self):\n"
        "        return self.loop()\n\n"
        "class Composed(Exception):\n"
        "    def __init__(self, level, msg):\n"
        "        super().__init__(f'{msg} (level {level})')\n\n"
        "class Other:\n"
        "    def make(self, level, msg):\n"
        "        return Composed(level, msg)\n\n"
        "    def error(self, msg):\n"
        "        return self.make(msg, 3)\n"
    ))  # fmt: skip
    write(repo, "pkg/body.py", (
        "from . import Directive, Other\n\n"
        "class Topic(Directive):\n"
        "    def run(self):\n"
        "        raise self.error('may not be used within topics')\n\n"
        "    def again(self):\n"
        "        raise self.loop()\n\n"
        "class Other2(Other):\n"
        "    def run(self):\n"
        "        raise self.error('bad thing')\n\n"
        "    def direct(self):\n"
        "        raise self.make(2, 'worse thing')\n"
    ))  # fmt: skip
    commit_all(repo, "factories of factories")
    found = {
        r.function: (r.exception_qualname, r.message)
        for r in errscan.extract(str(repo)).records
        if r.file == "pkg/body.py"
    }
    assert found == {
        # DirectiveError's text is empty whatever it is given
        "Topic.run": ("pkg.DirectiveError", ""),
        "Topic.again": (None, None),
        # error's arguments are make's, not Composed's (msg and level swapped): no text
        "Other2.run": ("pkg.Composed", None),
        "Other2.direct": ("pkg.Composed", "worse thing (level 2)"),
    }


def test_a_factory_building_the_class_its_table_holds_for_a_code_makes_that_class(
    tmp_path: Path,
) -> None:
    """elementpath's xpath_error looks its class up by the code it is given in a dict of
    its module (`error_class, default = XPATH_ERROR_CODES[code]`, another class where the
    code is missing); Token.error passes its code on: each call giving a code the table
    holds raises that entry's class (through a factory that returns `cast(Base,
    self.error(code))` too). A code passed by a variable, a code not in the
    table, an entry that is no exception class and a lookup bound two ways are left
    unknown."""
    repo = _new_repo(tmp_path)
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/errors.py", (
        "class PathError(Exception):\n"
        "    pass\n\n"
        "class PathTypeError(PathError, TypeError):\n"
        "    pass\n\n"
        "class PathValueError(PathError, ValueError):\n"
        "    pass\n\n"
        "CODES = {\n"
        "    'XPTY0004': (PathTypeError, 'type is not appropriate'),\n"
        "    'FORG0001': (PathValueError, 'invalid value for cast'),\n"
        "    'NOTCLASS': (len, 'a function'),\n"
        "}\n"
        "KINDS = {'a': PathTypeError, 'b': PathValueError}\n\n"
        "def path_error(code, message=None, token=None):\n"
        "    try:\n"
        "        error_class, default = CODES[code]\n"
        "    except KeyError:\n"
        "        error_class, default = PathError, 'custom error'\n"
        "    return error_class(message or default, code, token)\n\n"
        "def kind_error(kind, message):\n"
        "    cls = KINDS[kind]\n"
        "    return cls(message)\n\n"
        "def either_error(kind, message):\n"
        "    cls = KINDS[kind]\n"
        "    if message:\n"
        "        cls = PathError\n"
        "    return cls(message)\n"
    ))  # fmt: skip
    write(repo, "pkg/tokens.py", (
        "from typing import cast\n"
        "from .errors import PathError, path_error, kind_error, either_error\n\n"
        "class Token:\n"
        "    def error(self, code, message=None):\n"
        "        return path_error(code, message, self)\n\n"
        "    def wrong_value(self, message):\n"
        "        return self.error('FORG0001', message)\n\n"
        "    def missing(self, message=None):\n"
        "        return cast(PathError, self.error('XPTY0004', message))\n\n"
        "    def evaluate(self, value, code):\n"
        "        if value is None:\n"
        "            raise self.error('XPTY0004', 'no value')\n"
        "        if value == 1:\n"
        "            raise self.wrong_value(f'bad {value!r}')\n"
        "        if value == 2:\n"
        "            raise path_error('FORG0001')\n"
        "        if value == 3:\n"
        "            raise self.error(code)\n"
        "        if value == 4:\n"
        "            raise self.error('XPST9999')\n"
        "        if value == 5:\n"
        "            raise self.error('NOTCLASS')\n"
        "        if value == 6:\n"
        "            raise kind_error('b', 'kind b')\n"
        "        if value == 7:\n"
        "            raise self.missing()\n"
        "        raise either_error('a', 'either')\n"
    ))  # fmt: skip
    commit_all(repo, "a table of error classes")
    found = [
        (r.line, r.exception_qualname)
        for r in errscan.extract(str(repo)).records
        if r.file == "pkg/tokens.py"
    ]
    assert found == [
        (16, "pkg.errors.PathTypeError"),
        (18, "pkg.errors.PathValueError"),  # the code wrong_value gives
        (20, "pkg.errors.PathValueError"),
        (22, None),  # a variable's code
        (24, None),  # no entry: path_error's own fallback class, which errscan leaves
        (26, None),  # an entry that is no exception class
        (28, "pkg.errors.PathValueError"),
        # cast() tells the type checker a class: what is raised is what error() builds,
        # the message it passes on not given (not read, nor needed for the code)
        (30, "pkg.errors.PathTypeError"),
        (31, None),  # bound by the table and otherwise
    ]


def test_a_parameter_annotated_with_a_class_calls_that_class_s_factory(tmp_path: Path) -> None:
    """elementpath's module functions, given to token classes at run time, annotate
    `self` with the class (`def evaluate(self: XPathFunction, ...)`): `raise
    self.error(...)` is that class's factory (its base's here). So is an annotated
    parameter's; not one the function binds again, nor `self` in a class's own method,
    which is that class's, nor a method that raises NotImplementedError."""
    repo = _new_repo(tmp_path)
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/tokens.py", (
        "class TokenError(Exception):\n"
        "    pass\n\n"
        "class OtherError(Exception):\n"
        "    pass\n\n"
        "class Token:\n"
        "    def error(self, message):\n"
        "        return TokenError(message)\n\n"
        "class Function(Token):\n"
        "    pass\n\n"
        "class Other:\n"
        "    def error(self, message):\n"
        "        return OtherError(message)\n\n"
        "    def run(self: 'Function'):\n"
        "        raise self.error('its own')\n\n"
        "class Abstract:\n"
        "    def error(self, message):\n"
        "        raise NotImplementedError('subclasses make their errors')\n"
    ))  # fmt: skip
    write(repo, "pkg/functions.py", (
        "from .tokens import Abstract, Function, Other\n\n"
        "def evaluate(self: Function, context=None):\n"
        "    raise self.error('no context')\n\n"
        "def check(token: 'Function', other: Other):\n"
        "    if token:\n"
        "        raise token.error('bad token')\n"
        "    raise other.error('bad other')\n\n"
        "def rebound(token: Function):\n"
        "    token = token.parent\n"
        "    raise token.error('bad parent')\n\n"
        "def plain(self):\n"
        "    raise self.error('unknown')\n\n"
        "def abstract(token: Abstract):\n"
        "    raise token.error('overridden')\n"
    ))  # fmt: skip
    commit_all(repo, "annotated parameters")
    found = {
        (r.function, r.message): r.exception_qualname for r in errscan.extract(str(repo)).records
    }
    assert found == {
        ("Other.run", "its own"): "pkg.tokens.OtherError",
        ("Abstract.error", "subclasses make their errors"): "builtins.NotImplementedError",
        ("evaluate", "no context"): "pkg.tokens.TokenError",
        ("check", "bad token"): "pkg.tokens.TokenError",
        ("check", "bad other"): "pkg.tokens.OtherError",
        ("rebound", "bad parent"): None,
        ("plain", None): None,  # no class known, nor its text
        # an abstract method, which the class passed overrides: no factory of its error
        ("abstract", None): None,
    }


def test_a_builtin_subclass_s_text_has_no_candidate_of_another_rule() -> None:
    """A SyntaxError subclass reads `msg (file, line N)`; the tuple of its arguments, in
    either quotes, is no other text it may have (the other quoting is offered only for a
    template that a `{x!r}` part quotes)."""
    (record,) = errscan.extract_source(
        "class BadSyntax(SyntaxError):\n    pass\n\n"
        "def f():\n    raise BadSyntax('bad token', ('f.py', 1, 2, 'x'))\n"
    )
    assert record.message_candidates == ("bad token (f.py, line 1)",)


def test_a_classmethod_s_text_holds_the_class_constants_of_the_class_it_makes() -> None:
    """hypothesis's `raise FlakyStrategyDefinition.with_detail("...")`, a classmethod
    returning `cls(f"{cls._BASE_MESSAGE}\\n\\n{detail}")`: the constant as the class it is
    called on has it."""
    records = errscan.extract_source(
        "class Flaky(Exception):\n"
        "    _BASE = 'Inconsistent data generation!'\n\n"
        "    @classmethod\n"
        "    def with_detail(cls, detail):\n"
        "        return cls(f'{cls._BASE}\\n\\n{detail}')\n\n"
        "class Sub(Flaky):\n"
        "    _BASE = 'Other.'\n\n"
        "def f():\n"
        "    raise Flaky.with_detail('The second run drew more data.')\n\n"
        "def g(n):\n"
        "    raise Sub.with_detail(f'{n} more')\n",
        path="flaky.py",
    )
    assert [(r.exception_qualname, r.message, r.message_source) for r in records] == [
        ("flaky.Flaky", "Inconsistent data generation!\n\nThe second run drew more data.",
         "factory"),
        ("flaky.Sub", "Other.\n\n{n} more", "factory"),
    ]  # fmt: skip


_READS_ARGS = """
class Failed(ValueError):
    def notes(self):
        return []

    def __str__(self):
        return "failed: %s (%s)" % (self.args[0], ", ".join(self.notes()))


def given(x):
    raise Failed(x)


def bare():
    raise Failed
"""


def test_a_str_of_one_path_reading_the_instance_and_args() -> None:
    """The text around what a method of the instance gives, with the call's argument in;
    none where the call gives no argument, whose args[0] fails (sympy's `raise
    ArgumentIndexError`): str() itself raises, so no template stands for it."""
    records = {r.function: r for r in errscan.extract_source(_READS_ARGS)}
    assert records["given"].message == "failed: {x} ({str(self)})"
    assert records["bare"].message is None
    assert records["bare"].message_source == "unresolved"
