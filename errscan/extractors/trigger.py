"""One plain-English sentence saying when a site happens, composed from its facts.

("raise", "OutputStreamer.__post_init__", guards=("self.x and self.y is not None",))
    ->  "Raised while constructing OutputStreamer (OutputStreamer.__post_init__)
         when self.x and self.y is not None."
("raise", "Engine.start", guards=("envs.SGLANG_RUST_SERVER.get()",),
 env=("SGLANG_RUST_SERVER",))
    ->  "Raised by Engine.start when the environment variable SGLANG_RUST_SERVER is set."
"""

from __future__ import annotations

from collections.abc import Sequence

_CONSTRUCTORS = ("__init__", "__post_init__", "__new__")
# Stands for the module's name in a sentence: a file's name in the scan decides it, not
# its content, so linking puts it in (a file's extraction is cached by content).
MODULE = "\x00module\x00"
_VERBS = {
    "raise": "Raised",
    "reraise": "Re-raised",
    "assert": "Fails an assertion",
    "exit": "Exits",
    "warning": "Warns",
}


MAX_CHARS = 200  # a sentence past this says how many conditions it left out (guards has all)


def sentence(
    kind: str,
    function: str,
    module: str,
    guards: Sequence[str],
    env_vars: Sequence[str],
    is_property: bool = False,
) -> str:
    where = _where(function, module, is_property)
    if kind == "assert":  # "An assertion fails in parse when ..."
        where = where.replace("by ", "in ", 1) if where.startswith("by ") else where
        head = f"An assertion fails {where}"
    else:
        head = f"{verb(kind)} {where}"
    handling = [g[7:] if g.startswith("except ") else "any exception" for g in guards
                if g == "except" or g.startswith("except ")]  # fmt: skip
    if handling:
        head += f" while handling {' and '.join(handling)}"
    rest = [g for g in guards if g != "except" and not g.startswith("except ")]
    return f"{head}{_when(rest, env_vars, MAX_CHARS - len(head))}."


def verb(kind: str) -> str:
    """The word a sentence about a site of this kind starts with."""
    return _VERBS.get(kind, "Raised")


def _where(function: str, module: str, is_property: bool) -> str:
    if function == "<module>":
        return f"while importing {module}"
    names = [n for n in function.split(".") if n != "<locals>"]
    if len(names) >= 2 and names[-1] in _CONSTRUCTORS:
        return f"while constructing {names[-2]} ({function})"
    if is_property and len(names) >= 2:
        return f"while reading {names[-2]}.{names[-1]}"
    return f"by {function}"


def _when(guards: Sequence[str], env_vars: Sequence[str], room: int) -> str:
    """` when A and B`, within `room` characters: the conditions that do not fit are
    counted, not shown."""
    phrases = [_phrase(guard, env_vars) for guard in guards]
    if not phrases:
        return ""
    shown: list[str] = []
    for i, phrase in enumerate(phrases):
        more = len(phrases) - i - 1
        tail = f" and {more} more conditions" if more else ""
        if shown and len(" when " + " and ".join([*shown, phrase]) + tail) > room:
            left = len(phrases) - len(shown)
            return f" when {' and '.join(shown)} and {left} more condition{'s' * (left > 1)}"
        if not shown and len(" when " + phrase + tail) > room:  # one long condition
            phrase = phrase[: max(20, room - len(" when ") - len(tail) - 2)].rstrip() + " …"
        shown.append(phrase)
    return f" when {' and '.join(shown)}"


def _phrase(guard: str, env_vars: Sequence[str]) -> str:
    """A guard in words; a plain test of an environment variable reads as such."""
    for name in env_vars:
        if name not in guard:
            continue
        negated = guard.startswith("not ")
        core = guard[4:] if negated else guard
        if negated and core.startswith("(") and core.endswith(")"):
            core = core[1:-1]
        if _is_plain_read(core, name):
            return f"the environment variable {name} is {'not set' if negated else 'set'}"
    if guard.startswith("except "):
        return f"handling {guard[7:]}"
    if guard.startswith("for "):
        return f"iterating {guard[4:]}"
    return guard


def _is_plain_read(text: str, name: str) -> bool:
    """os.environ.get("X"), os.getenv("X"), "X" in os.environ, envs.X.get(), get_env("X")."""
    quoted = (f'"{name}"', f"'{name}'")
    plain = (
        any(text.endswith(f"({q})") for q in quoted)
        or any(text == f"{q} in os.environ" or text == f"{q} in environ" for q in quoted)
        or text.endswith((f".{name}", f".{name}.get()", f".{name}.value"))
    )
    return plain and "==" not in text and " or " not in text and " and " not in text
