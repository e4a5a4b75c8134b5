"""Settings from configuration files: the user's (`errscan.toml`, or `[tool.errscan]` of a
`pyproject.toml`) and a scanned repository's own `[tool.errscan]`, with its pytest
settings (`testpaths`, `python_files`).

A setting's precedence, highest first: a command-line flag (or an API argument), the
user's file, the scanned repository's file, the default. The scanned repository's files
are untrusted: only known keys are read, each is validated, and whatever else they hold
becomes one warning. The user's file is the user's own: a bad key there is an error.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from errscan.errors import InputError
from errscan.frozen import frozen
from errscan.models import SITE_KINDS

if TYPE_CHECKING:
    from types import ModuleType

# key as written (kebab-case; snake_case is read too) -> the scan option it sets
OPTIONS = {
    "include": "include",
    "exclude": "exclude",
    "include-tests": "include_tests",
    "test-paths": "test_paths",
    "include-vendored": "include_vendored",
    "kinds": "kinds",
    "context": "context",
    "repo-name": "repo_name",
}
# what a scanned repository may not decide: its name (and so its links) is where it
# was fetched from, not what it says of itself
_USER_ONLY = frozenset({"repo-name"})
_MAX_GLOBS = 256
_MAX_GLOB = 300
_MAX_CONTEXT = 200
_MAX_FILE = 1 << 20  # a configuration file larger than this is not read
_OWNER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/[A-Za-z0-9_.-]{1,100}")
# where a repository's settings are read from, in pytest's order for its own
REPO_FILES = ("pyproject.toml", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg")


def _toml_module() -> ModuleType:
    """tomllib, or tomli before Python 3.11: loaded where a file is read, so that a scan
    of a repository without configuration files needs neither."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - Python 3.10

    return tomli  # pragma: no cover


class ConfigProblem(ValueError):
    """One key's value is not what errscan reads there."""


def _strings(value: object, key: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise ConfigProblem(f"{key!r} must be a list of strings")
    if len(items) > _MAX_GLOBS:
        raise ConfigProblem(f"{key!r} holds more than {_MAX_GLOBS} entries")
    for item in items:
        if not item.strip() or len(item) > _MAX_GLOB or not item.isprintable():
            raise ConfigProblem(f"{key!r} holds an empty, overlong or unprintable entry")
    return tuple(items)


def _bool(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigProblem(f"{key!r} must be true or false")
    return value


def _kinds(value: object, key: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for item in _strings(value, key) for k in item.split(","))
    unknown = sorted(set(kinds) - set(SITE_KINDS))
    if unknown:
        raise ConfigProblem(f"{key!r}: unknown kind {unknown[0]!r} (give {', '.join(SITE_KINDS)})")
    return kinds


def _context(value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_CONTEXT:
        raise ConfigProblem(f"{key!r} must be a whole number from 0 to {_MAX_CONTEXT}")
    return value


def _repo_name(value: object, key: str) -> str:
    if not isinstance(value, str) or not _OWNER_NAME.fullmatch(value):
        raise ConfigProblem(f"{key!r} must be OWNER/NAME")
    return value


_CHECKS: dict[str, Callable[[object, str], Any]] = {
    "include": _strings,
    "exclude": _strings,
    "include-tests": _bool,
    "test-paths": _strings,
    "include-vendored": _bool,
    "kinds": _kinds,
    "context": _context,
    "repo-name": _repo_name,
}


def read_table(
    table: Mapping[str, object], *, trusted: bool, ignore: Iterable[str] = ()
) -> tuple[dict[str, Any], list[str]]:
    """The scan options a settings table sets, and what was wrong in it (unknown keys,
    bad values, keys a repository may not set: left out). `ignore`: other keys of the
    same table that are not settings (a track config's `db`, `repos`)."""
    options: dict[str, Any] = {}
    problems: list[str] = []
    skipped = set(ignore)
    for raw, value in table.items():
        key = raw.replace("_", "-")
        if raw in skipped:
            continue
        if key not in _CHECKS:
            problems.append(f"unknown key {_shown(raw)}")
            continue
        if not trusted and key in _USER_ONLY:
            problems.append(f"{raw!r} is not read from a scanned repository")
            continue
        try:
            options[OPTIONS[key]] = _CHECKS[key](value, raw)
        except ConfigProblem as exc:
            problems.append(str(exc))
    return options, problems


def _shown(key: str) -> str:
    """A key of an untrusted file, short and printable, to name in a message."""
    cut = key[:40] + ("…" if len(key) > 40 else "")
    return repr(cut) if cut.isprintable() else ascii(cut)


@frozen
class UserConfig:
    """The user's configuration file, if one was found, and the options it sets."""

    path: Path | None
    options: dict[str, Any]


def find(start: Path) -> Path | None:
    """The configuration file that applies in `start`: the nearest folder, going up,
    with an `errscan.toml` or a `pyproject.toml` holding `[tool.errscan]`; the search
    stops at the top of the project (a folder holding `.git`)."""
    for folder in (start, *start.parents):
        own = folder / "errscan.toml"
        if own.is_file():
            return own
        project = folder / "pyproject.toml"
        if project.is_file() and _has_tool_table(project):
            return project
        if (folder / ".git").exists():
            return None
    return None


def candidates(start: Path) -> list[Path]:
    """Every path `find(start)` could look at, there or not: each folder's errscan.toml,
    pyproject.toml and .git, up to the top of the project. While each is as it was,
    `find` and `load` answer as they did (errscan.launch checks them so)."""
    found = []
    for folder in (start, *start.parents):
        found += [folder / "errscan.toml", folder / "pyproject.toml", folder / ".git"]
        if (folder / ".git").exists():
            break
    return found


def _has_tool_table(path: Path) -> bool:
    tomllib = _toml_module()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False  # not ours to judge: it is read only when it holds [tool.errscan]
    tool = data.get("tool")
    return isinstance(tool, dict) and "errscan" in tool


def load(path: Path) -> UserConfig:
    """The options of the user's file at `path`: `errscan.toml`'s top-level keys (beside
    a track config's `db` and `[[repos]]`), or `pyproject.toml`'s `[tool.errscan]`.
    InputError names the file and the first problem."""
    tomllib = _toml_module()
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise InputError(f"cannot read config {path}: {exc.strerror}") from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from exc
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("errscan", {}) if isinstance(tool, dict) else {}
        if not isinstance(table, dict):
            raise InputError(f"{path}: [tool.errscan] must be a table")
        options, problems = read_table(table, trusted=True)
    else:
        options, problems = read_table(data, trusted=True, ignore=("db", "repos"))
    if problems:
        raise InputError(f"{path}: {problems[0]}")
    return UserConfig(path, options)


def discover(start: Path | None = None) -> UserConfig:
    """The user's configuration as `find` and `load` give it (none: no options)."""
    found = find((start or Path.cwd()).resolve())
    return load(found) if found is not None else UserConfig(None, {})


@frozen
class RepoConfig:
    """What a scanned repository's files set: scan options, its pytest test paths and
    test-file name patterns, and one warning for whatever could not be read."""

    options: dict[str, Any]
    test_paths: tuple[str, ...] = ()
    test_files: tuple[str, ...] = ()
    warning: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"options": self.options, "test_paths": list(self.test_paths),
                "test_files": list(self.test_files), "warning": self.warning}  # fmt: skip

    @classmethod
    def from_json(cls, data: object) -> RepoConfig | None:
        """What to_json wrote, the lists of options as the tuples read_table makes;
        None for anything else (a damaged entry is read again from the repository)."""
        if not isinstance(data, dict) or set(data) != {"options", "test_paths", "test_files",
                                                       "warning"}:  # fmt: skip
            return None
        options, warning = data["options"], data["warning"]
        lists = data["test_paths"], data["test_files"]
        if (
            not isinstance(options, dict)
            or not set(options) <= {OPTIONS[key] for key in OPTIONS if key not in _USER_ONLY}
            or not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in lists)
            or not (warning is None or isinstance(warning, str))
        ):
            return None
        # each value through its check again: what a fresh read gives (tuples for lists)
        names = {name: key for key, name in OPTIONS.items()}
        try:
            read = {name: _CHECKS[names[name]](value, name) for name, value in options.items()}
        except ConfigProblem:
            return None
        return cls(read, tuple(lists[0]), tuple(lists[1]), warning)


def repo_config(files: Mapping[str, bytes]) -> RepoConfig:
    """A scanned repository's settings, from the REPO_FILES at its root (`files`: name
    to content, those present). Never raises: anything unreadable becomes the warning."""
    problems: list[str] = []
    options: dict[str, Any] = {}
    project: dict[str, Any] = {}
    if "pyproject.toml" in files:
        try:
            project = _toml(files["pyproject.toml"])
        except ConfigProblem as exc:
            problems.append(f"pyproject.toml: {exc}")
        tool = project.get("tool")
        table = tool.get("errscan") if isinstance(tool, dict) else None
        if isinstance(table, dict):
            options, found = read_table(table, trusted=False)
            problems += [f"[tool.errscan]: {problem}" for problem in found]
        elif table is not None:
            problems.append("[tool.errscan] is not a table")
    paths, names = _pytest_settings(files, project, problems)
    warning = None
    if problems:
        warning = "the repository's configuration: " + "; ".join(problems[:5])
        if len(problems) > 5:
            warning += f"; and {len(problems) - 5} more"
    return RepoConfig(options, paths, names, warning)


def _toml(data: bytes) -> dict[str, Any]:
    if len(data) > _MAX_FILE:
        raise ConfigProblem("larger than 1 MiB, not read")
    tomllib = _toml_module()
    try:
        found: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
        return found
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigProblem(f"not valid TOML ({exc})") from None


def _pytest_settings(
    files: Mapping[str, bytes], project: Mapping[str, Any], problems: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(testpaths, python_files) from the file pytest itself would take them from:
    pytest.ini or .pytest.ini (even without settings), else pyproject.toml with
    [tool.pytest.ini_options] (or pytest 9's [tool.pytest]), else tox.ini with [pytest],
    else setup.cfg with [tool:pytest]."""
    for name in ("pytest.ini", ".pytest.ini"):
        if name in files:
            return _ini_settings(files[name], "pytest", name, problems) or ((), ())
    tool = project.get("tool")
    pytest = tool.get("pytest") if isinstance(tool, dict) else None
    if isinstance(pytest, dict):
        table = pytest.get("ini_options", pytest)
        if isinstance(table, dict):
            return (
                _setting(table.get("testpaths"), "testpaths", problems),
                _setting(table.get("python_files"), "python_files", problems),
            )
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        found = _ini_settings(files[name], section, name, problems) if name in files else None
        if found is not None:
            return found
    return (), ()


def _ini_settings(
    data: bytes, section: str, name: str, problems: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The settings of `section` of an INI file; None where it has no such section."""
    import configparser  # here: most repositories hold no INI file of pytest's

    parser = configparser.RawConfigParser(interpolation=None)  # no ${...} expansion
    try:
        if len(data) > _MAX_FILE:
            raise ConfigProblem("larger than 1 MiB, not read")
        parser.read_string(data.decode("utf-8"), source=name)
    except (ConfigProblem, UnicodeDecodeError, configparser.Error) as exc:
        problems.append(f"{name}: not readable ({' '.join(str(exc).split())[:120]})")
        return None
    if not parser.has_section(section):
        return None
    values = parser[section]
    return (
        _setting(values.get("testpaths", "").split() or None, "testpaths", problems),
        _setting(values.get("python_files", "").split() or None, "python_files", problems),
    )


def _setting(value: object, key: str, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    try:
        found = _strings(value.split() if isinstance(value, str) else value, key)
    except ConfigProblem as exc:
        problems.append(f"pytest's {exc}")
        return ()
    return tuple(item.strip("/") for item in found if item.strip("/") not in ("", "."))
