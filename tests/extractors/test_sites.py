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
        try:
            pass
        except* ValueError:
            raise O
        """
    )
    assert [r.exception for r in found] == list("ABCDEFGHIJKLMNO")


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
