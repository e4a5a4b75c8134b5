"""Which statements become sites, of which kind, in which function, with which extras."""

from __future__ import annotations

import textwrap

import errscan


def records(code: str) -> list[errscan.ErrorRecord]:
    return errscan.extract_source(textwrap.dedent(code))


def test_kinds_and_exception_as_written() -> None:
    found = records(
        """
        raise ValueError("a")
        raise errors.ConfigError("b")
        raise StopIteration
        assert x, "c"
        try:
            pass
        except (KeyError, OSError) as e:
            raise
        except Exception as e:
            raise e
        except BaseException as e:
            raise other
        """
    )
    assert [(r.kind, r.exception) for r in found] == [
        ("raise", "ValueError"),
        ("raise", "errors.ConfigError"),
        ("raise", "StopIteration"),
        ("assert", "AssertionError"),
        ("reraise", None),
        ("reraise", None),
        ("raise", "other"),
    ]


def test_raise_of_outer_caught_exception_inside_inner_handler_is_a_reraise() -> None:
    (record,) = records(
        """
        try:
            pass
        except A as outer:
            try:
                pass
            except B:
                raise outer
        """
    )
    assert record.kind == "reraise"


def test_raise_of_a_local_holding_what_was_caught_is_a_reraise() -> None:
    found = records(
        """
        def unsign(self, value):
            try:
                result = self.check(value)
                sig_error = None
            except (BadSignature, BadData) as e:
                sig_error = e
                result = b""
            if sig_error:
                raise sig_error

        def other(self, error):
            try:
                error = None
            except BuildError as e:
                error = e
            raise error

        def built(self):
            error = None
            try:
                pass
            except BuildError as e:
                error = make(e)
            raise error
        """
    )
    assert [(r.kind, r.reraises) for r in found] == [
        ("reraise", ("BadSignature", "BadData")),
        ("reraise", ("BuildError",)),
        ("raise", ()),  # it holds what make() returns, not what was caught
    ]


def test_raise_of_a_cast_of_what_was_caught_is_a_reraise() -> None:
    found = records(
        """
        import typing as t

        def loads(self, s):
            last_exception = None
            for signer in self.signers:
                try:
                    return signer.unsign(s)
                except BadSignature as err:
                    last_exception = err
            raise t.cast(BadSignature, last_exception)

        def made(self, error):
            raise t.cast(BadSignature, error)
        """
    )
    assert [(r.kind, r.exception, r.reraises) for r in found] == [
        ("reraise", None, ("BadSignature",)),  # itsdangerous: what the loop caught last
        ("raise", "BadSignature", ()),  # a parameter: the class the cast names
    ]


def test_raise_of_a_held_exception_with_its_traceback_is_a_reraise() -> None:
    found = records(
        """
        class Result:
            def get_result(self):
                exc = self._exception
                if exc is None:
                    return self._result
                raise exc.with_traceback(self._traceback)

            def direct(self):
                raise self._exception.with_traceback(self._traceback)

            def built(self, tb):
                err = ValueError("x")
                raise err.with_traceback(tb)

            def cleared(self):
                raise self._exception.with_traceback(None)

            def made(self, tb):
                raise make_error("y").with_traceback(tb)
        """
    )
    assert [(r.function, r.kind, r.exception) for r in found] == [
        ("Result.get_result", "reraise", None),  # pluggy's: raised before, caught elsewhere
        ("Result.direct", "reraise", None),
        ("Result.built", "raise", "ValueError"),  # made here
        ("Result.cleared", "raise", "self._exception"),  # no traceback given back
        ("Result.made", "raise", "make_error"),
    ]


def test_raise_of_the_exception_of_an_exc_info_triple_is_a_reraise() -> None:
    found = records(
        """
        import sys

        def reraise(exc_info):
            etype, exc, tb = exc_info
            raise exc

        def main(exc_info):
            raise exc_info[1]

        def wsgi(self):
            raise self.seen_exc_info[1]

        def current():
            _, value, _ = sys.exc_info()
            raise value

        def other(info):
            raise info[1]

        def rebound(exc_info):
            etype, exc, tb = exc_info
            exc = ValueError("x")
            raise exc

        def built(name):
            exc = MissingArgument(f"arg {name!r} not found")
            exc.arg_name = name
            raise exc
        """
    )
    assert [(r.function, r.kind, r.exception) for r in found] == [
        ("reraise", "reraise", None),  # webob's
        ("main", "reraise", None),  # asgiref's
        ("wsgi", "reraise", None),  # httpx's WSGI transport
        ("current", "reraise", None),
        ("other", "raise", "info[1]"),  # not an exc_info triple by name
        ("rebound", "raise", "ValueError"),
        ("built", "raise", "MissingArgument"),  # an attribute set is no new binding
    ]


def test_raise_of_a_name_an_if_checks_the_class_of_raises_that_class() -> None:
    found = records(
        """
        def __hash__(self):
            try:
                ret = self._hash
            except AttributeError:
                ret = self._hash = FrozenHashError(self)
            if ret.__class__ is FrozenHashError:
                raise ret

        def typed(err, ok):
            if ok and type(err) is BuildError:
                raise err

        def checked(err):
            if isinstance(err, errors.BuildError):
                raise err

        def broad(prev_result):
            if isinstance(prev_result, Exception):
                raise prev_result

        def outside(err):
            if isinstance(err, BuildError):
                pass
            raise err
        """
    )
    assert [(r.function, r.exception) for r in found] == [
        ("__hash__", "FrozenHashError"),  # boltons's FrozenDict
        ("typed", "BuildError"),
        ("checked", "errors.BuildError"),
        ("broad", "prev_result"),  # any exception: no class to name
        ("outside", "err"),
    ]


def test_private_function_every_call_hands_the_same_class_and_text() -> None:
    found = records(
        """
        def __warn_or_raise(text, warn_class, to_raise, raise_reason):
            if _should_raise:
                raise to_raise(raise_reason)
            warnings.warn(text, warn_class)

        def _value_quote(v):
            if v:
                __warn_or_raise("bad bytes", RuntimeWarning, ValueError, "Invalid characters")
            if not v:
                __warn_or_raise("no bytes", RuntimeWarning, to_raise=ValueError,
                                raise_reason="Invalid characters")

        def _two_classes(exc, msg):
            raise exc(msg)

        def _rebinds(exc, msg):
            msg = msg.strip()
            raise exc(msg)

        def _handed_on(exc, msg):
            raise exc(msg)

        def public(exc, msg):
            raise exc(msg)

        def f():
            _rebinds(KeyError, "x")
            _two_classes(KeyError, "a")
            _two_classes(TypeError, "a")
            _handed_on(KeyError, "x")
            public(KeyError, "x")
            return [_handed_on]
        """
    )
    raised = [(r.function, r.exception, r.message) for r in found if r.kind == "raise"]
    assert raised[:5] == [
        ("__warn_or_raise", "ValueError", "Invalid characters"),  # webob's, two calls alike
        ("_two_classes", "exc", None),  # the calls disagree
        ("_rebinds", "KeyError", None),  # msg is bound again: the class alone is the call's
        ("_handed_on", "exc", None),  # named as a value too: another module may call it
        ("public", "exc", None),  # public: other modules may call it
    ]


def test_raise_of_an_object_whose_class_was_set_raises_that_class() -> None:
    found = records(
        """
        class LocalProtocolError(ProtocolError):
            def _reraise_as_remote_protocol_error(self):
                self.__class__ = RemoteProtocolError
                raise self

            def rebound(self, other):
                self.__class__ = RemoteProtocolError
                self = other
                raise self
        """
    )
    assert [(r.exception, r.message, r.message_source) for r in found] == [
        ("RemoteProtocolError", None, "unresolved"),  # h11's: its text is what it had
        ("self", None, "unresolved"),
    ]


def test_raise_of_self_in_a_method_raises_the_class_of_the_method() -> None:
    """tenacity's `RetryError.reraise`: `raise self` is an instance of the class (or of
    a subclass); not where `self` may be something else."""
    found = records(
        """
        class RetryError(Exception):
            def reraise(self):
                raise self

            class Inner(Exception):
                async def again(self, *rest):
                    raise self

            @staticmethod
            def static(self):
                raise self

            @classmethod
            def made(self):
                raise self

            def nested(self):
                def inner():
                    raise self
                inner()

            def rebound(self, other):
                self = other
                raise self

        def function(self):
            raise self

        def factory():
            class Local(Exception):
                def again(self):
                    raise self
        """
    )
    assert [(r.line, r.exception) for r in found] == [
        (4, "RetryError"),
        (8, "RetryError.Inner"),
        (12, "self"),
        (16, "self"),
        (20, "self"),
        (25, "self"),
        (28, "self"),
        (33, "self"),
    ]


def test_raise_of_a_parameter_annotated_with_a_class_raises_that_class() -> None:
    found = records(
        """
        from werkzeug.routing import BuildError

        def handle(self, error: BuildError, other: "exc.Problem", broad: Exception, plain):
            for handler in self.handlers:
                try:
                    handler(error)
                except BuildError as e:
                    error = e
            if plain:
                raise plain
            if broad:
                raise broad
            if other:
                raise other
            raise error

        def rebound(error: BuildError):
            error = wrap(error)
            raise error
        """
    )
    assert [(r.line, r.exception) for r in found] == [
        (11, "plain"),
        (13, "broad"),  # any exception at all: the name as written, no class
        (15, "exc.Problem"),
        (16, "BuildError"),
        (20, "wrap"),  # what wrap() returns, not the parameter
    ]
    assert found[3].exception_qualname == "werkzeug.routing.BuildError"
    assert found[3].message is None and found[3].message_source == "unresolved"


def test_caught_name_does_not_leak_into_nested_function() -> None:
    (record,) = records(
        """
        try:
            pass
        except A as e:
            def later():
                raise e
        """
    )
    assert (record.kind, record.function) == ("raise", "later")


def test_function_qualnames() -> None:
    found = records(
        """
        raise A
        class C:
            raise B
            def m(self):
                raise D
            class Inner:
                async def n(self):
                    raise E
        def outer():
            def inner():
                raise F
            class K:
                def k(self):
                    raise G
            return inner
        """
    )
    assert [r.function for r in found] == [
        "<module>",
        "C",
        "C.m",
        "C.Inner.n",
        "outer.<locals>.inner",
        "outer.<locals>.K.k",
    ]


def test_every_block_kind_is_searched() -> None:
    found = records(
        """
        if a:
            raise A
        elif b:
            raise B
        else:
            raise C
        for x in y:
            raise D
        else:
            raise E
        while z:
            raise F
        with m:
            raise G
        try:
            raise H
        except X:
            raise I
        else:
            raise J
        finally:
            raise K
        match v:
            case 1:
                raise L
        async def f():
            async for q in w:
                raise M
            async with n:
                raise N
        """
    )
    assert [r.exception for r in found] == list("ABCDEFGHIJKLMN")


def test_an_except_star_block_is_searched_and_its_else_is_a_condition() -> None:
    """try/except* (Python 3.11's, rewritten as try/except for 3.10) reads as try does:
    its handlers are searched, and what its `else:` raises happens only without an
    exception, on every Python."""
    found = records(
        """
        def f():
            try:
                check()
            except* ValueError:  raise O
            else:
                raise P
        """
    )
    assert [(r.exception, r.line, r.col, r.guards) for r in found] == [
        ("O", 5, 25, ("except ValueError",)),
        ("P", 7, 8, ("the try block raised nothing",)),
    ]


def test_positions_args_and_cause() -> None:
    (record,) = records(
        """
        def f():
            x = 1
            raise OSError(
                "a", path, *more, code=3, **kw
            ) from exc
        """
    )
    assert (record.line, record.end_line, record.col) == (4, 6, 4)
    assert record.args == ("path", "*more", "code=3", "**kw")
    assert record.cause == "exc"


def test_starred_first_argument_is_unresolved() -> None:
    (record,) = records("raise ValueError(*args)\n")
    assert (record.message, record.message_source, record.args) == (None, "unresolved", ("*args",))


def test_columns_and_segments_count_characters_after_non_ascii_text() -> None:
    (record,) = records('x = "ünïcödé"; raise ValueError(f"{ä} ✓")\n')
    assert record.col == 15
    assert record.message == "{ä} ✓"


def test_context_is_clipped_to_the_file() -> None:
    code = "".join(f"x{i} = {i}\n" for i in range(1, 41))
    code += 'raise ValueError("line 41")\n' + "".join(f"y{i} = {i}\n" for i in range(1, 6))
    (record,) = errscan.extract_source(code, context=15)
    assert (record.context.start_line, record.context.end_line) == (26, 46)
    assert record.context.code.splitlines()[15] == 'raise ValueError("line 41")'
    (first,) = errscan.extract_source('raise E("a")\nx = 1\n', context=15)
    assert (first.context.start_line, first.context.end_line) == (1, 2)


def test_line_numbers_hold_with_crlf_cr_and_form_feed() -> None:
    for newline in ("\r\n", "\r", "\n"):
        code = newline.join(["x = 1", "\f# comment", "", 'raise E("here")', ""])
        (record,) = errscan.extract_source(code)
        assert record.line == 4
        assert record.context.code.split("\n")[3] == 'raise E("here")'


def test_file_that_does_not_parse_gives_no_records() -> None:
    assert errscan.extract_source("def broken(:\n    raise E\n") == []
    assert errscan.extract_source(b"\x00\x01\xff") == []


def test_a_site_whose_line_says_errscan_ignore_is_left_out() -> None:
    found = records(
        """
        def f(x):
            if x:
                raise ValueError("kept")
            raise KeyError("left out")  # errscan: ignore
            raise TypeError("# errscan: ignore is text here, not a comment")
        """
    )
    assert [r.exception for r in found] == ["ValueError", "TypeError"]


def test_an_option_parser_s_error_is_an_exit_of_what_it_prints() -> None:
    """argparse's and optparse's `parser.error(msg)` print the usage, then `PROG: error:
    MSG`, and exit with status 2: an exit of that text, the program's name where the
    parser is made with it. Only a parser the function makes, or a parameter annotated
    as one; logging's `log.error`, and a parser from elsewhere, are no site."""
    found = records(
        """
        import argparse
        import optparse
        from argparse import ArgumentParser as AP

        def main(argv):
            parser = argparse.ArgumentParser(prog="tool")
            parser.error("--force requires --out")

        def named(mode):
            parser = argparse.ArgumentParser("tool2")
            parser.error(f"unknown mode {mode!r}")

        def unnamed(mode):
            ap = AP()
            ap.error("no " + mode)

        def given(parser: argparse.ArgumentParser, value):
            parser.error("value must be positive")

        def legacy():
            p = optparse.OptionParser(prog="old", usage="%prog [options]")
            p.error("no options given")

        def logged(log):
            log.error("this is logging")

        def elsewhere():
            parser = make_parser()
            parser.error("not known to be argparse's")

        def twice(flag):
            parser = argparse.ArgumentParser(prog="a")
            if flag:
                parser = object()
            parser.error("maybe argparse's")
        """
    )
    assert [(r.kind, r.exception, r.message, r.function) for r in found] == [
        ("exit", "SystemExit", "tool: error: --force requires --out", "main"),
        ("exit", "SystemExit", "tool2: error: unknown mode {mode!r}", "named"),
        ("exit", "SystemExit", "{ap.prog}: error: no {mode}", "unnamed"),
        ("exit", "SystemExit", "{parser.prog}: error: value must be positive", "given"),
        ("exit", "SystemExit", "old: error: no options given", "legacy"),
    ]


def test_a_pasted_usage_error_is_looked_up_by_its_last_line() -> None:
    records_ = records(
        """
        import argparse

        def main(argv):
            parser = argparse.ArgumentParser(prog="tool")
            parser.error("--force requires --out")
        """
    )
    shown = "usage: tool [-h] [--force] [--out OUT]\ntool: error: --force requires --out\n"
    (best, *_) = errscan.lookup(shown, records_)
    assert (best.record.function, best.kind) == ("main", "full")


def test_an_exit_with_a_failing_status_has_the_line_printed_on_stderr_before_it() -> None:
    """`print(msg, file=sys.stderr)`, `sys.stderr.write(msg)` or `click.echo(msg,
    err=True)` as the statement before `sys.exit(1)`: what its user sees, its line's end
    off. Not for a success (`sys.exit(0)`), a line on stdout, nor several arguments."""
    found = records(
        """
        import sys
        from sys import stderr

        import click

        def main(path):
            if not path:
                print("error: no path given", file=sys.stderr)
                sys.exit(2)
            if path == "-":
                sys.stderr.write(f"error: cannot read {path!r} from stdin\\n")
                raise SystemExit(1)
            if path == "x":
                print(f"warning: {path}", file=stderr)
                sys.exit(0)
            if path == "y":
                print("to stdout")
                sys.exit(1)
            if path == "z":
                click.echo(f"Error: bad path {path}", err=True)
                exit(3)
            if path == "w":
                print("a", "b", file=sys.stderr)
                sys.exit(1)
            if path == "v":
                sys.stderr.write("Unknown command: %r" % path)
                sys.stderr.write("\\nType '%s help' for usage.\\n" % path)
                sys.exit(1)
            if path == "u":
                sys.stderr.write("\\n")
                sys.exit(1)
        """
    )
    assert [(r.line, r.message, r.message_source) for r in found] == [
        (10, "error: no path given", "literal"),
        (13, "error: cannot read {path!r} from stdin", "fstring"),
        (16, None, "none"),
        (19, None, "none"),
        (22, "Error: bad path {path}", "fstring"),
        (25, None, "none"),
        # Django's: the last write's text, its own lines' ends off
        (29, "Type '{path} help' for usage.", "percent"),
        (32, None, "none"),
    ]
