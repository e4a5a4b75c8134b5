"""A repository class's __str__ decides the text of its errors."""

from __future__ import annotations

import textwrap

import errscan
from errscan.analyzer import scan
from errscan.analyzer.parse import Parsed, parse
from errscan.extractors import bindings, sites, summary


def _messages(code: str) -> dict[int, tuple[str | None, tuple[str, ...]]]:
    found = errscan.extract_source(textwrap.dedent(code))
    return {r.line: (r.message, r.message_candidates) for r in found if r.kind == "raise"}


# a class whose __str__ adds where the data was read, on one path of two
_VALIDATION_ERROR = """
        class ValidationError(Exception):
            def __init__(self, cause, *, context=None):
                self.context = context
                self.message = str(cause)

            def __str__(self):
                if self.context:
                    return f"{self.message} in {self.context!r}"
                return self.message
"""  # indented as the tests' own code, and dedented with it


def test_a_str_on_several_paths_gives_each_path_and_the_most_general() -> None:
    found = _messages(
        _VALIDATION_ERROR
        + """
        def check(key, kind):
            raise ValidationError(f"Unexpected type {kind}", context=key)
        """
    )
    message, candidates = found[13]
    assert message == "Unexpected type {kind}{str(self)}"
    assert set(candidates[1:]) == {"Unexpected type {kind}", "Unexpected type {kind} in {key!r}"}


def test_class_constants_in_a_str_are_read() -> None:
    found = _messages(
        """
        class Error(Exception):
            code = "bhk3"

            def __init__(self, msg):
                self.msg = msg

            def __str__(self):
                return f"{self.msg} (Background on this error at: https://sqlalche.me/e/{self.code})"

        def connect(url):
            raise Error(f"cannot connect to {url}")
        """
    )
    assert found[12][0] == (
        "cannot connect to {url} (Background on this error at: https://sqlalche.me/e/bhk3)"
    )


def test_a_str_formatting_a_class_template_with_the_instance_dict_takes_the_call_keywords() -> None:
    code = """
        class Mixin:
            def __init__(self, **ctx):
                self.__dict__{store}

            def __str__(self):
                return self.msg_template.format(**self.__dict__)

        class Bound(Mixin, ValueError):
            msg_template = "must be at most {{limit}}"

        def check(value, top):
            raise Bound(limit=top)
        """
    for store in (" = ctx", ".update(ctx)"):
        assert _messages(code.format(store=store))[13][0] == "must be at most {top}"
    # a positional argument is not in the dict; a dict not the keywords' is not known
    positional = code.format(store=" = ctx").replace("Bound(limit=top)", "Bound(top)")
    assert _messages(positional)[13][0] is None
    other = code.format(store=" = dict(ctx)")
    assert _messages(other)[13][0] is None


def test_a_str_that_ignores_the_argument_is_its_own_text() -> None:
    found = _messages(
        """
        class NoneMetadataError(Exception):
            def __init__(self, dist, metadata_name):
                self.dist = dist

            def __str__(self):
                return "None metadata found"

        def load(dist):
            raise NoneMetadataError(dist, "METADATA")
        """
    )
    assert found[10][0] == "None metadata found"


def test_a_str_reading_what_init_does_not_set_from_a_parameter_keeps_it_a_placeholder() -> None:
    found = _messages(
        """
        class Odd(Exception):
            def __init__(self, msg):
                super().__init__(msg)
                self.when = now()

            def __str__(self):
                return f"{self.args[0]} at {self.when}"

        def run():
            raise Odd("stopped")
        """
    )
    # not "stopped", which str() never gives: self.when is some text at run time
    assert found[11][0] == "stopped at {self.when}"


def test_a_str_of_nothing_but_the_instance_is_unresolved() -> None:
    found = _messages(
        """
        class Odd(Exception):
            def __init__(self, msg):
                super().__init__(msg)
                self.when = now()

            def __str__(self):
                return f"{self.when}{self.describe()}"

        def run():
            raise Odd("stopped")
        """
    )
    assert found[11][0] is None  # no literal text, and a method's text: no template


def test_a_str_joining_lines_that_start_with_the_message() -> None:
    found = _messages(
        """
        import typing as t

        class TemplateSyntaxError(Exception):
            def __init__(self, message, lineno, name=None):
                super().__init__(message)
                self.message = message
                self.lineno = lineno
                self.translated = False

            def __str__(self):
                if self.translated:
                    return t.cast(str, self.message)
                lines = [t.cast(str, self.message), "  " + f"line {self.lineno}"]
                return "\\n".join(lines)

        def parse(token):
            raise TemplateSyntaxError(f"unexpected {token!r}", 1)
        """
    )
    assert found[18][0] == "unexpected {token!r}{str(self)}"


def test_a_subclass_passing_its_message_on_to_a_base_str() -> None:
    found = _messages(
        _VALIDATION_ERROR
        + """
        class RequiredKeyError(ValidationError):
            def __init__(self, key):
                super().__init__("Missing required value", context=key)

        def read(name):
            raise RequiredKeyError(name)
        """
    )
    message, candidates = found[17]
    assert "Missing required value in {name!r}" in candidates
    assert message == "Missing required value{str(self)}"


def _records(code: str) -> dict[int, tuple[str | None, str | None]]:
    found = errscan.extract_source(textwrap.dedent(code))
    return {r.line: (r.message, r.exception_qualname) for r in found if r.kind == "raise"}


def test_a_factory_passes_on_its_parameter_or_composes_with_it() -> None:
    found = _records(
        """
        class Error(Exception):
            pass

        def error(msg):
            return Error(msg)

        def wrapped(name, reason):
            exc = Error(f"{name}: {reason}")
            exc.name = name
            return exc

        def check(x):
            if x:
                raise error(f"bad {x}")
            raise wrapped("cache", f"too big ({x})")
        """
    )
    assert found[15] == ("bad {x}", "mod.Error")
    assert found[16] == ("cache: too big ({x})", "mod.Error")


def test_a_factory_looking_its_message_up_leaves_it_unresolved() -> None:
    found = _records(
        """
        class Error(Exception):
            pass

        def make_error(key, messages={"invalid": "Not valid."}):
            try:
                msg = messages[key]
            except KeyError:
                raise AssertionError(key) from None
            return Error(msg)

        def check(x):
            raise make_error("invalid")
        """
    )
    # "invalid" is the key the factory looks up, not the text; the factory still
    # returns Error, whatever it raises where the key is missing
    assert found[13] == (None, "mod.Error")


def test_a_factory_method_of_a_generic_base_is_found_from_a_subclass() -> None:
    found = _records(
        """
        import typing

        T = typing.TypeVar("T")

        class Error(Exception):
            pass

        class Field(typing.Generic[T]):
            def fail(self, what):
                return Error(f"invalid {what}")

        class Text(Field[str]):
            def check(self, value):
                raise self.fail("text")
        """
    )
    assert found[15] == ("invalid text", "mod.Error")


def test_an_unknown_factory_given_a_key_is_unresolved_and_given_text_read() -> None:
    found = _records(
        """
        from elsewhere import make_error

        def check(x):
            if x:
                raise make_error("invalid_uuid")
            raise make_error("not a valid UUID")
        """
    )
    assert found[6][0] is None
    assert found[7][0] == "not a valid UUID"


_FIELDS = """
        class Error(Exception):
            pass

        class Field:
            default_error_messages = {"invalid": "Not a valid value.", "big": "{input} > {limit}"}

            def make_error(self, key, **kwargs):
                msg = self.error_messages[key]
                msg = msg.format(**kwargs)
                return Error(msg)

            def check(self, x):
                if x is None:
                    raise self.make_error("invalid")
                raise self.make_error("big", input=x, limit=10)

        class Integer(Field):
            default_error_messages = {"invalid": "Not a valid integer."}
"""


def test_a_factory_method_looking_its_message_up_in_a_class_dict_reads_it() -> None:
    found = _messages(_FIELDS)
    # the class of the method first, the subclass that overrides the key as a candidate
    assert found[15] == ("Not a valid value.", ("Not a valid value.", "Not a valid integer."))
    # the keywords of the call fill the fields the factory formats
    assert found[16] == ("{x} > 10", ("{x} > 10",))


def test_a_key_not_in_any_class_dict_stays_unresolved() -> None:
    found = _messages(_FIELDS.replace('make_error("invalid")', 'make_error("missing")'))
    assert found[15] == (None, ())


def test_a_factory_formatting_without_the_call_keywords_keeps_the_fields() -> None:
    found = _messages(
        """
        class Error(Exception):
            pass

        class Field:
            default_error_messages = {"big": "too big ({limit})"}

            def fail(self, key):
                return Error(self.default_error_messages[key])

            def check(self, x):
                raise self.fail("big")
        """
    )
    # no .format(): the braces are literal text at run time
    assert found[12] == ("too big ({limit})", ("too big ({limit})",))


def test_a_subclass_giving_its_base_only_keywords_keeps_the_base_text() -> None:
    found = _records(
        """
        class HTTPError(Exception):
            code = 416
            description = "Cannot serve the range."

            def __init__(self, description=None):
                super().__init__()
                if description is not None:
                    self.description = description

            def __str__(self):
                return f"{self.code}: {self.description}"

        class RangeError(HTTPError):
            def __init__(self, length=None, description=None):
                super().__init__(description=description)
                self.length = length

        def check(n):
            raise RangeError(n)
        """
    )
    # length is not the description: the class constant is the text
    assert found[20] == ("416: Cannot serve the range.", "mod.RangeError")


def test_a_class_imported_inside_the_function_is_resolved() -> None:
    found = _records(
        """
        def check(n):
            from errors_elsewhere import Unknown
            from json import JSONDecodeError as Bad

            if n:
                raise Unknown(n)
            raise Bad("no", "doc", 0)
        """
    )
    assert found[8][1] == "json.decoder.JSONDecodeError"


def test_a_str_setting_the_message_above_more_lines_is_read() -> None:
    found = _messages(
        """
        class Syntax(Exception):
            def __init__(self, message, *, source):
                self.message = message
                self.source = source

            def __str__(self):
                marker = "^"
                return f"{self.message}\\n    {self.source}\\n    {marker}"

        def parse(text):
            raise Syntax("Invalid string", source=text)

        def parse_unknown(text, why):
            raise Syntax(why, source=text)
        """
    )
    assert found[12][0] == "Invalid string\n    {text}\n    ^"  # the local, read
    assert found[15][0] == "{why}\n    {text}\n    ^"


def test_a_str_local_read_of_the_instance_stays_a_placeholder() -> None:
    found = _messages(
        """
        class Syntax(Exception):
            def __init__(self, message, *, span):
                self.message = message
                self.span = span

            def __str__(self):
                marker = " " * self.span[0] + "^"
                return f"{self.message}\\n    {marker}"

        def parse(text):
            raise Syntax("Invalid string", span=(1, 2))
        """
    )
    assert found[12][0] == "Invalid string\n    {marker}"


def test_a_str_returning_a_method_with_an_optional_part_and_a_failure_path() -> None:
    found = _messages(
        """
        class ParseError(Exception):
            def __init__(self, pstr, loc=0, msg=None):
                if msg is None:
                    msg, pstr = pstr, ""
                self.loc = loc
                self.msg = msg
                self.pstr = pstr

            def formatted_message(self):
                found_phrase = f", found {self.found}" if self.found else ""
                return f"{self.msg}{found_phrase}  (at char {self.loc})"

            def __str__(self):
                try:
                    return self.formatted_message()
                except Exception as ex:
                    return f"{type(self).__name__}: {self.msg} ({ex} while formatting)"

        def parse(s, l):
            raise ParseError(s, l, "Expected end of text")

        def parse_alone(s):
            raise ParseError(s)
        """
    )
    assert found[21][0] == "Expected end of text{str(self)}  (at char {l})"
    assert list(found[21][1][1:]) == [
        "Expected end of text, found {self.found}  (at char {l})",
        "Expected end of text  (at char {l})",
        "ParseError: Expected end of text ({ex} while formatting)",
    ]
    # no msg given: pstr is the message (`msg, pstr = pstr, ""`)
    assert found[24][0] == "{s}{str(self)}  (at char {loc})"


def test_a_message_init_makes_where_the_call_gives_none() -> None:
    found = _messages(
        """
        class NotFound(Exception):
            def __init__(self, name, message=None):
                if message is None:
                    message = f"{name!r} not found"
                super().__init__(message)

        class OrDefault(Exception):
            def __init__(self, name, message=None):
                message = message or "no " + name
                super().__init__(message)

        def a(x):
            raise NotFound(x)

        def b(x):
            raise NotFound(x, None)

        def c(x):
            raise NotFound(x, message=f"{x} is gone")

        def d(x):
            raise OrDefault(x)
        """
    )
    assert found[14][0] == "{x!r} not found"
    assert found[17][0] == "{x!r} not found"  # None given: the default too
    assert found[20][0] == "{x} is gone"
    assert found[23][0] == "no {x}"


def test_a_default_errscan_cannot_stand_behind_is_no_default() -> None:
    found = _messages(
        """
        class UsedFirst(Exception):
            def __init__(self, name, message=None):
                self.raw = message
                if message is None:
                    message = f"{name} not found"
                super().__init__(message)

        class SetTwice(Exception):
            def __init__(self, name, message=None):
                if message is None:
                    message = f"{name} not found"
                if name.startswith("_"):
                    message = "private"
                super().__init__(message)

        class Otherwise(Exception):
            def __init__(self, name, message=None):
                if message is None:
                    message = f"{name} not found"
                else:
                    name = "?"
                super().__init__(message)

        def a(x):
            raise UsedFirst(x)

        def b(x):
            raise SetTwice(x)

        def c(x):
            raise Otherwise(x)
        """
    )
    assert found[26][0] is None and found[29][0] is None and found[32][0] is None


def test_a_str_of_the_message_and_subclasses_passing_it_on() -> None:
    found = _messages(
        """
        class Missing(Exception):
            def __init__(self, name, message=None):
                if message is None:
                    from .runtime import Undefined
                    message = name
                self.message = message

            def __str__(self):
                return str(self.message)

        class MissingAll(Missing):
            def __init__(self, names=(), message=None):
                if message is None:
                    message = f"none of the templates given were found: {names}"
                super().__init__(names[-1] if names else None, message)

        class Quiet(Missing):
            def __init__(self, name, message=None):
                super().__init__(name, message)

        def a(name, paths):
            raise Missing(name, f"{name!r} not found in search path: {paths!r}")

        def b(name):
            raise Missing(name)

        def c(names):
            raise MissingAll(names)

        def d(name):
            raise Quiet(name, "gone")
        """
    )
    assert found[23][0] == "{name!r} not found in search path: {paths!r}"
    assert found[26][0] is None  # the name alone: a placeholder, not a template
    # an __init__ errscan cannot read (its first argument) stands between the call and
    # the base's: the base's default is not what the call leaves out
    assert found[29][0] is None
    assert found[32][0] == "gone"


def test_an_init_errscan_cannot_read_leaves_the_call_argument_unread() -> None:
    found = _messages(
        """
        class Unread(Exception):
            def __init__(self, msg, **details):
                super().__init__(" / ".join([msg, *map(str, details.values())]).upper())

        class Below(Unread):
            pass

        def a():
            raise Unread(msg="low", code=3)

        def b():
            raise Below("low")
        """
    )
    assert found[10][0] is None and found[13][0] is None  # neither says "low"


def test_a_class_passing_its_argument_on_keeps_what_the_site_read_of_it() -> None:
    found = _messages(
        """
        NOT_IN_NODE = "only works in a browser"

        class RequestError(Exception):
            def __init__(self, message=None, *, request=None):
                self.request = request
                self.message = message
                super().__init__(self.message)

        class Pooled(Exception):
            def __init__(self, pool, message):
                super().__init__(pool)

        def a(r):
            raise RequestError(message=NOT_IN_NODE, request=r)

        def b(p):
            raise Pooled(p, NOT_IN_NODE)
        """
    )
    assert found[15][0] == "only works in a browser"
    assert found[18][0] == "{p}"  # the pool is the text: not what the site read


def test_a_str_not_read_is_no_fallback_where_what_else_it_reads_is_set() -> None:
    # SQLAlchemy's: str() is the message, plus "(Background on this error at: ...)"
    # where a code is set, by keyword or by a class constant
    found = _messages(
        """
        class HasDescriptionCode:
            code = None
            def __init__(self, *arg, **kw):
                code = kw.pop("code", None)
                if code is not None:
                    self.code = code
                super().__init__(*arg, **kw)

        class SQLAlchemyError(HasDescriptionCode, Exception):
            def __str__(self):
                return self._sql_message()

        class InvalidRequestError(SQLAlchemyError):
            pass

        class MissingGreenlet(InvalidRequestError):
            code = "xd2s"

        def a():
            raise MissingGreenlet("greenlet_spawn has not been called")

        def b():
            raise InvalidRequestError("provisioning", code="isce")

        def c():
            raise InvalidRequestError("plain")
        """
    )
    assert found[21][0] is None and found[24][0] is None
    assert found[27][0] == "plain"  # no code: the message given, as it was


def test_a_str_not_read_is_no_fallback_for_a_call_of_several_arguments() -> None:
    found = _messages(
        """
        class InvalidSchemeCombination(Exception):
            def __str__(self):
                before = ", ".join(str(a) for a in self.args[:-1])
                return f"Cannot set {before} and {self.args[-1]} together"

        def a():
            raise InvalidSchemeCombination("--user", "--prefix")
        """
    )
    assert found[8][0] is None  # pip's: not "--user"


def test_a_builtin_base_second_in_line_still_decides_str() -> None:
    found = _messages(
        """
        class AppError(Exception):
            pass

        class NotThere(AppError, KeyError):
            pass

        def e(key):
            raise NotThere(f"bad value {key}")
        """
    )
    assert found[9][0] == "'bad value {key}'"  # KeyError's quotes, as Python prints it


def test_a_signed_number_class_constant_is_the_class_raised_own() -> None:
    found = _messages(
        """
        class BrokerResponseError(Exception):
            errno = None

            def __str__(self):
                return "[Error {0}] {1}".format(self.errno, self.args[0])

        class UnknownError(BrokerResponseError):
            errno = -1

        def f():
            raise UnknownError("Future not done")
        """
    )
    assert found[12][0] == "[Error -1] Future not done"  # kafka-python's, not the base's None


# imports inside functions at every depth the sites walk goes: blocks, handlers, match
# cases, a class inside a function, a one-line def; and module-level ones, left out
_LOCAL_IMPORTS = """
import os
if os.name:
    from a import outer
def f(x):
    from b import B
    if x:
        import c.d as cd
    try:
        pass
    except ValueError:
        from e import E
    else:
        from g import G
    finally:
        from h import H
    match x:
        case 1:
            from i import I
    class Inner:
        from j import J
        def m(self):
            from k import K
    for _ in x:
        with open(x):
            while x:
                from l import L
def g(): from m import M
class C:
    from n import N
    def method(self):
        async def inner():
            from o import O
"""


def test_the_sites_walk_finds_the_imports_inside_functions_a_walk_of_its_own_would() -> None:
    parsed = parse(_LOCAL_IMPORTS.encode(), "m.py")
    assert isinstance(parsed, Parsed)
    constants = bindings.Constants(parsed.tree)
    found = sites.extract(parsed.tree, parsed.src, 3, constants)
    lines = [stmt.lineno for stmt in found.local_imports]
    assert lines == [6, 8, 12, 14, 16, 19, 21, 23, 27, 28, 33]
    alone = summary.summarize(parsed.tree, parsed.src, constants, found.factories)
    shared = summary.summarize(
        parsed.tree, parsed.src, constants, found.factories, None, found.local_imports
    )
    assert shared == alone
    bound = [i.local for i in shared.imports]
    assert bound == ["os", "outer", "B", "cd", "E", "G", "H", "I", "J", "K", "L", "M", "O"]


_FACTORIES = """
def top(msg):
    return Error(msg)
class Holder:
    def method(self, code):
        return Error(code)
    class Nested:
        def deep(self, why):
            raise Error(why)
def outer():
    def helper(text):
        return Error(text)
    class Local:
        def build(self, detail):
            return Error(detail)
    return helper
if TYPE_CHECKING:
    def typed(name):
        return Error(name)
else:
    def typed(name, extra=None):
        return Error(name, extra)
with context():
    def hidden(value):
        return Error(value)
"""


def test_each_factory_is_found_at_any_depth_of_definitions() -> None:
    """Methods, nested classes, functions in functions, both branches of an `if`; not
    a definition under `with` (the summary reads definitions, not every block)."""
    result = scan.scan_file("m.py", _FACTORIES, 3)
    assert result.summary is not None
    calls = [(name, params) for name, params, _ in result.summary.factory_calls]
    assert calls == [
        ("top", ("msg",)),
        ("Holder.method", ("code",)),
        ("Holder.Nested.deep", ("why",)),
        ("outer.<locals>.helper", ("text",)),
        ("outer.<locals>.Local.build", ("detail",)),
        ("typed", ("name",)),
        ("typed", ("name", "extra")),
    ]


_LINES = """
class SuspiciousOperation(Exception): pass
class DisallowedHost(SuspiciousOperation): pass
class Below(DisallowedHost): pass
class Described:
    def __init__(self, thing):
        super().__init__(f"{thing} is not described")
class Undescribed(Described, errors.Base): pass
class Model: pass
class Person(Model):
    def __init__(self, name):
        self.name = name
class Generic(typing.Generic[T]): pass
def local():
    class Done(StopIteration): pass
    class Step: pass
"""


def test_exception_like_classes_are_those_on_the_lines_of_classes_named_as_exceptions() -> None:
    """Named as an exception, or with a base so named; classes of the file deriving from
    those, and those of the file they derive from (a mixin), by the names their bases are
    written with; no other class."""
    tree = parse(_LINES.encode(), "m.py")
    assert isinstance(tree, Parsed)
    assert summary.exception_like_classes(tree.tree) == {
        "SuspiciousOperation", "DisallowedHost", "Below", "local.<locals>.Done",
    }  # fmt: skip
    mixed = parse((_LINES + "class Wrong(Undescribed, ValueError): pass\n").encode(), "m.py")
    assert isinstance(mixed, Parsed)
    found = summary.exception_like_classes(mixed.tree)
    assert {"Wrong", "Undescribed", "Described"} <= found
    assert not {"Model", "Person", "Generic", "local.<locals>.Step"} & found


def test_a_partial_summary_defers_details_of_other_classes_only() -> None:
    """Deferred: a class off every exception's line, and the call of a factory building
    what is not named as an exception (a class, or another factory's); their names,
    bases, docstring and constants are read all the same. Nothing deferred: the summary
    is whole (not partial)."""
    code = _LINES + (
        "def build(thing):\n    return Person(thing)\n"
        "def fail(thing):\n    return DisallowedHost(thing)\n"
        "def again(thing):\n    return self.fail(thing)\n"
    )
    whole = scan.scan_file("m.py", code, 3).summary
    partial = scan.scan_file("m.py", code, 3, partial=True).summary
    assert not whole.partial and partial.partial
    assert [c.qualname for c in whole.classes] == [c.qualname for c in partial.classes]
    for full, part in zip(whole.classes, partial.classes, strict=True):
        assert (full.bases, full.doc, full.constants) == (part.bases, part.doc, part.constants)
        if part.deferred:
            assert part.init_params is None and not part.super_args and not part.caller_set
        else:
            assert part == full
    deferred = {c.qualname for c in partial.classes if c.deferred}
    assert deferred == {"Described", "Undescribed", "Model", "Person", "Generic",
                        "local.<locals>.Step"}  # fmt: skip
    assert next(c for c in whole.classes if c.qualname == "Described").init_params == ("thing",)
    assert [f for f, _, _ in whole.factory_calls] == ["build", "fail", "again"]
    assert [f for f, _, _ in partial.factory_calls] == ["fail"]
    assert partial.factories == whole.factories
    only_errors = scan.scan_file("e.py", "class Bad(ValueError):\n    pass\n", 3, partial=True)
    assert not only_errors.summary.partial


def test_a_partial_summary_reads_a_classmethod_making_its_exception_class() -> None:
    """Django's `DeserializationError.WithData`, `return cls(...)` in a class that may be
    an exception's: its call is read, so linking need not summarize the file again; the
    same classmethod of a model is deferred."""
    code = (
        "class DeserializationError(Exception):\n"
        "    @classmethod\n"
        "    def WithData(cls, exc, pk):\n"
        "        return cls('%s: pk=%s' % (exc, pk))\n\n"
        "class Model:\n"
        "    @classmethod\n"
        "    def make(cls, pk):\n"
        "        return cls(pk)\n"
    )
    partial = scan.scan_file("m.py", code, 3, partial=True).summary
    assert partial.factories == (("DeserializationError.WithData", "cls"), ("Model.make", "cls"))
    assert partial.factory_calls == (
        ("DeserializationError.WithData", ("exc", "pk"), ((None, "'%s: pk=%s' % (exc, pk)"),)),
    )
    assert partial.partial  # Model's details and its factory's call are deferred


def test_an_init_passing_on_the_arguments_it_was_called_with_keeps_their_str() -> None:
    found = _messages(
        """
        class AsCalled(Exception):
            def __init__(self, fmt, *args):
                super().__init__(fmt, *args)

        class Explicit(Exception):
            def __init__(self, fmt, *args):
                Exception.__init__(self, fmt, *args)

        class Other(Exception):
            extra = ()

            def __init__(self, fmt, *args):
                super().__init__(fmt, *self.extra)

        def one():
            raise AsCalled("alone")

        def two(target):
            raise AsCalled("{0!r} not truthy", target)

        def three(target):
            raise Explicit("{0!r} not truthy", target)

        def four(target):
            raise Other("{0!r} not truthy", target)
        """
    )
    assert found[17][0] == "alone"
    # several arguments: BaseException's str() is their tuple, not the first
    assert found[20][0] == "('{0!r} not truthy', {target!r})"
    assert found[23][0] == "('{0!r} not truthy', {target!r})"
    # `*self.extra` is not what the call gave: the first argument's text, as before
    assert found[26][0] == "{0!r} not truthy"


def test_a_factory_errscan_cannot_read_handed_a_code_leaves_the_text_unresolved() -> None:
    found = _messages(
        """
        def evaluate_name(self):  # elementpath's: a function a class is given at run time
            raise self.error("XPTY0004")

        def evaluate_key(self):
            raise self.error("NOT_FOUND")

        def evaluate_text(self):
            raise self.error("Type is not appropriate")
        """
    )
    # an uppercase identifier holding a digit or an underscore is a code, not the text
    assert found[3][0] is None and found[6][0] is None
    # a text, as the site reads it (a factory outside the repository may pass it on)
    assert found[9][0] == "Type is not appropriate"


def test_a_factory_called_without_arguments_gives_its_own_text() -> None:
    found = _messages(
        """
        def end_of_source():
            return SyntaxError("unexpected end of source")

        def parse(text):
            if not text:
                raise end_of_source()
        """
    )
    # not a call without a text: the factory's (the fixture's case_factory_called_without_
    # arguments_giving_a_text_of_its_own has one of several texts)
    assert found[7][0] == "unexpected end of source"


def test_a_factory_errscan_cannot_read_is_not_known_to_make_its_text_of_a_later_argument() -> None:
    found = _messages(
        """
        def misplaced(s, prefix, example, e):  # bitstring's: returns e, or a new error
            if prefix not in s:
                return e
            return ValueError(f"A {prefix!r} prefix can only come at the start of {s!r}")

        def from_bin(s, e):
            raise misplaced(s, "0b", "0101", e)

        def from_text(s, e):
            raise misplaced("cannot convert", s, "0101", e)
        """
    )
    assert found[8][0] is None  # "0b" is an argument, not the text
    assert found[11][0] == "cannot convert"  # the first argument, as the site reads it


def _tables(code: str) -> dict[str, tuple[str, dict[str, str]]]:
    parsed = parse(textwrap.dedent(code), "m.py")
    assert isinstance(parsed, Parsed)
    constants = bindings.Constants(parsed.tree)
    found = sites.extract(parsed.tree, parsed.src, 3, constants)
    made = summary.summarize(parsed.tree, parsed.src, constants, found.factories)
    return {name: (param, dict(entries)) for name, param, entries in made.tables}


def test_a_factory_building_what_a_module_dict_holds_for_its_parameter_has_its_table() -> None:
    """`cls = TABLE[code]`, `cls = TABLE[code][0]`, `cls, text = TABLE[code]` (rebound
    only where the key is missing): the table's entries keyed by strings, each the name
    at that place; not a dict bound twice, a parameter the lookup is not by, a name
    bound again elsewhere (in a nested target, a loop), nor one looked up twice (in
    another mapping where the key is missing)."""
    found = _tables(
        """
        import errors
        PLAIN = {"a": ErrorA, "b": errors.ErrorB, 1: ErrorC, "c": "not a name"}
        PAIRS = {"a": (ErrorA, "text a"), "b": [ErrorB, "text b"], "c": ("x", ErrorC)}
        TWICE = {"a": ErrorA}
        TWICE = {"a": ErrorB}

        def plain(code, message):
            cls = PLAIN[code]
            return cls(message)

        def first(code):
            cls = PAIRS[code][0]
            return cls(code)

        def unpacked(code, message=None):
            try:
                cls, default = PAIRS[code]
            except (KeyError):
                cls, default = Fallback, "unknown"
            return cls(message or default)

        def fallback_elsewhere(code):
            cls, default = PAIRS[code]
            if not code:
                cls = Fallback
            return cls(default)

        def bound_twice(code):
            cls = TWICE[code]
            return cls(code)

        def by_local(code):
            key = code.upper()
            cls = PLAIN[key]
            return cls(code)

        def nested_too(code, pair):
            cls = PLAIN[code]
            first, (cls, second) = pair
            return cls(code)

        def looped_too(code, classes):
            cls = PLAIN[code]
            for cls in classes:
                pass
            return cls(code)

        def two_lookups(code):
            try:
                cls = PLAIN[code]
            except KeyError:
                cls = REGISTRY[code]
            return cls(code)

        class Token:
            def error(self, code):
                cls = PLAIN[code]
                return cls(code)
        """
    )
    assert found == {
        "plain": ("code", {"a": "ErrorA", "b": "errors.ErrorB"}),
        "first": ("code", {"a": "ErrorA", "b": "ErrorB"}),
        "unpacked": ("code", {"a": "ErrorA", "b": "ErrorB"}),
        "Token.error": ("code", {"a": "ErrorA", "b": "errors.ErrorB"}),
    }


def test_a_module_without_a_dict_at_its_top_level_has_no_table() -> None:
    """A lookup of anything but a dict display the module binds once gives no table."""
    found = _tables(
        """
        REGISTRY = make_registry()

        def build():
            TABLE = {"a": ErrorA}
            return TABLE

        def lookup(code):
            cls = REGISTRY[code]
            return cls(code)

        def local(code):
            table = {"a": ErrorA}
            cls = table[code]
            return cls(code)
        """
    )
    assert found == {}
