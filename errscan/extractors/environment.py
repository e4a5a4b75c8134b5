"""Environment variables that decide whether a site is reached, or that its message names.

if os.environ.get("FOO_BAR"): ...          ->  FOO_BAR
if envs.SGLANG_RUST_SERVER.get(): ...      ->  SGLANG_RUST_SERVER
if get_bool_env_var("USE_X"): ...          ->  USE_X
raise ValueError("Unset SGLANG_RUST_SERVER to ...")  ->  SGLANG_RUST_SERVER, where a
    line of the file elsewhere reads that name from the environment
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from errscan.extractors import scope

# (the lookbehind starts a match only where a name starts: without it, a long run of
# capitals was rescanned from each of its letters, quadratic)
_ENV_NAME = re.compile(r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_MAX_NAMES = 32  # names of one message looked for in the file
# accessors of a project's own: get_bool_env_var("X"), env.get_int("X"), read_env("X")
_ENV_FUNCTION = re.compile(r"env|getenv", re.IGNORECASE)
# holders of environment variables read as attributes: envs.FOO_BAR, env.FOO_BAR (a
# settings or config object is no environment: its keys only look like variables)
_ENV_HOLDER = re.compile(r"envs?|environ", re.IGNORECASE)


_HINT = re.compile(r"env", re.IGNORECASE)


def may_read(text: str) -> bool:
    """Whether source text could read the environment at all (a cheap test first)."""
    return _HINT.search(text) is not None


def read_in(nodes: Iterable[ast.AST]) -> list[str]:
    """Names of environment variables read anywhere in `nodes`, in order, once each."""
    found: list[str] = []
    for root in nodes:
        for node in scope.walk(root):
            name = _read(node)
            if name is not None and name not in found:
                found.append(name)
    return found


def _read(node: ast.AST) -> str | None:
    # case: os.environ["X"], environ["X"]
    if isinstance(node, ast.Subscript) and _is_environ(node.value):
        return _literal(node.slice)
    # case: "X" in os.environ
    if isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
        return _literal(node.left)
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        # case: os.environ.get("X"), os.getenv("X"), getenv("X"), get_bool_env_var("X")
        if isinstance(func, ast.Attribute) and _is_environ(func.value):
            return _literal(node.args[0])
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if _ENV_FUNCTION.search(name):
            return _literal(node.args[0], all_caps=name not in ("getenv",))
    # case: envs.FOO_BAR(.get())
    if isinstance(node, ast.Attribute) and _ENV_NAME.fullmatch(node.attr):
        holder = node.value
        holder_name = (
            holder.attr if isinstance(holder, ast.Attribute) else getattr(holder, "id", "")
        )
        if _ENV_HOLDER.fullmatch(holder_name):
            return node.attr
    return None


def _is_environ(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "environ"
    return isinstance(node, ast.Name) and node.id == "environ"


def _literal(node: ast.expr, all_caps: bool = False) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
        if all_caps and not _ENV_NAME.fullmatch(node.value):
            return None
        return node.value
    return None


class Mentions:
    """Where a file's lines that speak of the environment name each word, built on first
    use: one pass over the file, however many sites ask."""

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines
        self._words: dict[str, list[int]] | None = None

    def lines_naming(self, name: str) -> list[int]:
        if self._words is None:
            self._words = {}
            for number in self._environment_lines():
                for word in dict.fromkeys(_WORD.findall(self._lines[number - 1])):
                    self._words.setdefault(word, []).append(number)
        return self._words.get(name, [])

    def _environment_lines(self) -> list[int]:
        """The numbers of the lines that speak of the environment, in order. Each of
        _ENV_LINE's words holds `env`, in some case (no other letter folds to e, n or v):
        only the lines holding it are searched, found by one scan of the text lowered
        (a case-blind search of every line costs some 1 ms a file)."""
        lowered = "\n".join(self._lines).lower()  # lowering keeps every line end
        found: list[int] = []
        number, counted = 1, 0
        at = lowered.find("env")
        while at >= 0:
            number += lowered.count("\n", counted, at)
            counted = at
            if (not found or found[-1] != number) and _ENV_LINE.search(self._lines[number - 1]):
                found.append(number)
            end = lowered.find("\n", at)
            if end < 0:
                break
            at = lowered.find("env", end)
        return found


_WORD = re.compile(r"\w+")


def mentioned(message: str | None, mentions: Mentions, skip: range) -> list[str]:
    """ALL_CAPS names in a message that the file reads as environment variables: names
    that stand, outside the site's own lines, on a line that speaks of the environment."""
    if not message:
        return []
    names = list(dict.fromkeys(_ENV_NAME.findall(message)))[:_MAX_NAMES]
    return [n for n in names if any(i not in skip for i in mentions.lines_naming(n))]


_ENV_LINE = re.compile(r"environ|getenv|\benvs?\b|_env|env_", re.IGNORECASE)
