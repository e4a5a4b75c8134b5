"""Calls of raising helpers (functions that always end in `raise`) are sites of their own."""

from __future__ import annotations

import textwrap

import errscan


def _raised(code: str) -> dict[int, tuple[str | None, str | None, str]]:
    """(exception, message, function) of each site by line."""
    found = errscan.extract_source(textwrap.dedent(code))
    return {r.line: (r.exception, r.message, r.function) for r in found}


def test_a_method_helper_raises_the_caller_s_message_with_its_class() -> None:
    found = _raised(
        """
        class Parser:
            def fail(self, msg, lineno=None, exc=TemplateError):
                if lineno is None:
                    lineno = self.lineno
                raise exc(msg, lineno)

            def parse(self, token):
                self.fail(f"expected an expression, got {token!r}")
                self.fail("unknown tag", 3, exc=LookupError)
                self.other(f"not a helper {token}")
        """
    )
    assert found[6] == ("TemplateError", None, "Parser.fail")  # the helper's own raise stays
    assert found[9] == ("TemplateError", "expected an expression, got {token!r}", "Parser.parse")
    # LookupError of two arguments reads as their tuple; the helper's lineno is the one
    # it may compute, so it stays a placeholder
    assert found[10][0] == "LookupError" and found[10][1] == "('unknown tag', {lineno!r})"
    assert 11 not in found


def test_a_helper_s_local_message_is_read_with_the_caller_s_arguments() -> None:
    found = _raised(
        """
        def _invalid(kind, value):
            text = f"invalid {kind}: {value!r}"
            raise ValueError(text)

        def _prefixed(msg):
            msg = "config: " + msg
            raise KeyError(msg)

        def use(x):
            text = "the caller's text, not the helper's"
            _invalid("size", x)
            _prefixed(f"no {x}")
        """
    )
    assert found[12] == ("ValueError", "invalid size: {x!r}", "use")
    assert found[13] == ("KeyError", "'config: no {x}'", "use")


def test_a_helper_local_set_in_a_branch_stays_a_placeholder_not_the_caller_s() -> None:
    found = _raised(
        """
        def _bad(flag):
            if flag:
                detail = "flag set"
            else:
                detail = "flag clear"
            raise ValueError(f"bad: {detail}")

        def use():
            detail = "caller"
            _bad(True)
        """
    )
    assert found[11] == ("ValueError", "bad: {detail}", "use")


def test_a_method_of_a_base_class_in_the_file_is_a_helper() -> None:
    found = _raised(
        """
        class ParamType:
            def fail(self, message, param=None):
                raise BadParameter(message, param=param)

        class IntType(ParamType):
            def convert(self, value, param):
                self.fail(f"{value!r} is not a valid integer.", param)
        """
    )
    assert found[8] == ("BadParameter", "{value!r} is not a valid integer.", "IntType.convert")


def test_functions_that_may_not_raise_are_not_helpers() -> None:
    found = _raised(
        """
        def may_return(x):
            if x:
                return None
            raise ValueError("a")

        def may_catch(x):
            try:
                x()
            except KeyError:
                pass
            raise ValueError("b")

        def gives(x):
            yield x
            raise ValueError("c")

        def star(*args):
            raise ValueError("d")

        class K:
            @staticmethod
            def fail(msg):
                raise ValueError(msg)

            def use(self):
                self.fail("e")

        def use():
            may_return(1)
            may_catch(2)
            gives(3)
            star(4)
        """
    )
    assert sorted(found) == [5, 12, 16, 19, 24]  # the raises only, no call
