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


def sentence(
    kind: str,
    function: str,
    module: str,
    guards: Sequence[str],
    env_vars: Sequence[str],
    is_property: bool = False,
) -> str:
    verb = _VERBS.get(kind, "Raised")
    return f"{verb} {_where(function, module, is_property)}{_when(guards, env_vars)}."


def _where(function: str, module: str, is_property: bool) -> str:
    if function == "<module>":
        return f"while importing {module}"
    names = [n for n in function.split(".") if n != "<locals>"]
    if len(names) >= 2 and names[-1] in _CONSTRUCTORS:
        return f"while constructing {names[-2]} ({function})"
    if is_property and len(names) >= 2:
        return f"while reading {names[-2]}.{names[-1]}"
    return f"by {function}"


def _when(guards: Sequence[str], env_vars: Sequence[str]) -> str:
    phrases = []
    for guard in guards:
        phrases.append(_phrase(guard, env_vars))
    return f" when {' and '.join(phrases)}" if phrases else ""


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
