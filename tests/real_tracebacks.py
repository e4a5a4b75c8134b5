"""Real tracebacks: installed third-party libraries called wrongly, as their users do.

Each case calls a library the test environment installed from PyPI (none of click,
requests or SQLAlchemy) so that it raises. `run()` gives the traceback as Python prints
it, frames under site-packages and all, and where the exception was raised: the first
line of the library that raised that very exception object, seen by a trace function,
whatever the traceback shows afterwards (jinja2 rewrites its tracebacks).

`library_repo()` commits the installed package's files (the wheel's contents) into a
throwaway repository, in a src/ or lib/ layout or flat, for errscan to scan.
"""

from __future__ import annotations

import importlib
import re
import shutil
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from tests.support import candidate_pattern, commit_all, git

if TYPE_CHECKING:
    from errscan.models import ErrorRecord

# distribution -> (its import packages, the layout its repository gets)
LIBRARIES: dict[str, tuple[tuple[str, ...], str]] = {
    "packaging": (("packaging",), "src"),
    "attrs": (("attr", "attrs"), "src"),
    "pyyaml": (("yaml",), "lib"),
    "markdown-it-py": (("markdown_it",), ""),
    "sortedcontainers": (("sortedcontainers",), ""),
    "pluggy": (("pluggy",), "src"),
    "markdown": (("markdown",), ""),
    "iniconfig": (("iniconfig",), "src"),
    "jinja2": (("jinja2",), "src"),
}


@dataclass(frozen=True)
class Raised:
    text: str  # the traceback as printed
    message: str  # str() of the exception
    # each line the exception passed, from where it was raised on: (file from the
    # package folder on, `yaml/parser.py`; line; the function's qualified name)
    places: tuple[tuple[str, int, str], ...]

    def origin(self, records: Sequence[ErrorRecord]) -> ErrorRecord | None:
        """The site that raised it: of the sites it passed, the one whose template is
        the message with the most literal text (`self.fail(f"...")` rather than the
        `raise exc(msg)` in fail), else the first; where it passed none (a subscript
        raised it), the re-raise in the function it was raised in."""
        sites = [
            record
            for file, line, _ in self.places
            for record in records
            if record.file.endswith(file) and record.line <= line <= record.end_line
        ]
        matched = [
            (len(re.sub(r"\{[^{}]*\}", "", str(record.message))), -i, record)
            for i, record in enumerate(sites)
            if any(
                candidate_pattern(str(c)).fullmatch(self.message)
                for c in {record.message, *record.message_candidates} - {None}
            )
        ]
        if matched:  # the most specific: `invalid size: {value!r}` over `invalid {kind}: ...`
            return max(matched, key=lambda found: found[:2])[2]
        if sites:
            return sites[0]
        for file, line, function in self.places[:1]:
            for record in records:
                if (record.kind == "reraise" and record.file.endswith(file)
                        and _named(record.function, function) and record.line > line):  # fmt: skip
                    return record
        return None


def _named(qualname: str | None, function: str) -> bool:
    """Whether a record's function is a traceback frame's: by its qualified name, or on
    Python 3.10 (whose code objects have no co_qualname) by its last part."""
    if qualname is None or sys.version_info >= (3, 11):
        return qualname == function
    return qualname.rsplit(".", 1)[-1] == function


def package_dir(package: str) -> Path:
    return Path(importlib.import_module(package).__file__ or "").parent


def library_repo(dest: Path, library: str) -> Path:
    """A repository holding the installed library's packages, in its layout."""
    packages, layout = LIBRARIES[library]
    for package in packages:
        target = dest / layout / package if layout else dest / package
        shutil.copytree(
            package_dir(package), target, ignore=shutil.ignore_patterns("__pycache__", "*.so")
        )
    git(dest, "init", "-q", "-b", "main")
    commit_all(dest, library)
    return dest


def run(library: str, call: Callable[[], object]) -> Raised:
    packages, _ = LIBRARIES[library]
    roots = {str(package_dir(p).parent) + "/": p for p in packages}
    folders = tuple(str(package_dir(p)) + "/" for p in packages)
    events: list[tuple[object, str, int, str]] = []

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "exception":
            code = frame.f_code
            qualname = getattr(code, "co_qualname", code.co_name)  # Python 3.11 on
            events.append((arg[1], code.co_filename, frame.f_lineno, qualname))
        return local

    def outer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(folders) else None

    sys.settrace(outer)
    try:
        call()
    except Exception as exc:
        raised = exc
    else:
        raise AssertionError(f"{call} did not raise")
    finally:
        sys.settrace(None)
    places = []
    for value, file, line, function in events:
        root = next((r for r in roots if file.startswith(r)), None)
        if value is raised and root is not None:
            places.append((file[len(root) :], line, function))
    text = "".join(traceback.format_exception(raised))
    return Raised(text, str(raised), tuple(places))


def _attrs_class() -> Any:
    import attrs

    @attrs.define
    class Config:
        x: int = attrs.field(validator=attrs.validators.instance_of(int))
        y: int = attrs.field(default=0, validator=attrs.validators.in_([0, 1]))
        z: int = attrs.field(default=9, validator=attrs.validators.gt(5))
        n: str = attrs.field(default="a", validator=attrs.validators.max_len(2))

    return Config


def _frozen() -> None:
    import attrs

    @attrs.frozen
    class Point:
        a: int = 0

    Point().a = 2  # type: ignore[misc]


def _twice(rename: bool) -> None:
    import pluggy

    class Plugin:
        pass

    manager = pluggy.PluginManager("demo")
    plugin = Plugin()
    manager.register(plugin, name="p")
    manager.register(plugin if rename else Plugin(), name="q" if rename else "p")


def _cases() -> list[tuple[str, str, Callable[[], object]]]:
    import attrs
    import iniconfig
    import jinja2
    import markdown
    import markdown_it
    import sortedcontainers as sc  # type: ignore[import-untyped]
    import yaml
    from packaging import markers, requirements, specifiers, utils, version

    config = _attrs_class()
    strict = jinja2.Environment(undefined=jinja2.StrictUndefined)
    return [
        ("packaging", "version", lambda: version.Version("1.0-foo")),
        ("packaging", "specifier", lambda: specifiers.SpecifierSet("=>1.0")),
        ("packaging", "requirement", lambda: requirements.Requirement("foo[")),
        ("packaging", "marker", lambda: markers.Marker("os_name == ")),
        ("packaging", "wheel name", lambda: utils.parse_wheel_filename("foo-1.0.whl")),
        ("packaging", "sdist name", lambda: utils.parse_sdist_filename("foo.zip")),
        ("packaging", "project name", lambda: utils.canonicalize_name("-x-", validate=True)),
        ("attrs", "instance_of", lambda: config("a")),
        ("attrs", "in_", lambda: config(1, y=3)),
        ("attrs", "gt", lambda: config(1, z=3)),
        ("attrs", "max_len", lambda: config(1, n="abc")),
        ("attrs", "fields of a non-class", lambda: attrs.fields(1)),  # type: ignore[arg-type]
        ("attrs", "asdict of a non-attrs", lambda: attrs.asdict(1)),  # type: ignore[arg-type]
        ("attrs", "default and factory", lambda: attrs.field(default=1, factory=dict)),  # type: ignore[arg-type]
        ("attrs", "frozen", _frozen),
        ("pyyaml", "flow sequence", lambda: yaml.safe_load("a: [1")),
        ("pyyaml", "quoted scalar", lambda: yaml.safe_load("a: 'x")),
        ("pyyaml", "unknown tag", lambda: yaml.safe_load("!!python/object:os.system x")),
        ("pyyaml", "unrepresentable", lambda: yaml.safe_dump(object())),
        ("pyyaml", "undefined alias", lambda: yaml.safe_load("a: *b")),
        ("markdown-it-py", "preset", lambda: markdown_it.MarkdownIt("nope")),
        ("markdown-it-py", "enable", lambda: markdown_it.MarkdownIt().enable("nope")),
        ("markdown-it-py", "disable", lambda: markdown_it.MarkdownIt().disable("nope")),
        ("sortedcontainers", "index", lambda: sc.SortedList().index(5)),
        ("sortedcontainers", "remove", lambda: sc.SortedList().remove(5)),
        ("sortedcontainers", "append", lambda: sc.SortedList().append(5)),
        ("sortedcontainers", "setitem", lambda: sc.SortedList([1]).__setitem__(0, 1)),
        ("sortedcontainers", "peekitem", lambda: sc.SortedDict().peekitem()),
        ("pluggy", "name taken", lambda: _twice(rename=False)),
        ("pluggy", "plugin renamed", lambda: _twice(rename=True)),
        ("markdown", "output format", lambda: markdown.Markdown(output_format="bad")),  # type: ignore[arg-type]
        ("markdown", "extension type", lambda: markdown.markdown("x", extensions=[1])),  # type: ignore[list-item]
        ("iniconfig", "continuation", lambda: iniconfig.IniConfig("x.ini", "[a]\n b=1\n")),
        ("iniconfig", "no section", lambda: iniconfig.IniConfig("x.ini", "x=1\n")),
        ("jinja2", "syntax", lambda: jinja2.Template("{% if %}")),
        ("jinja2", "no filter", lambda: jinja2.Environment().from_string("{{ 1|nofilter }}")),
        ("jinja2", "undefined", lambda: strict.from_string("{{ x.y }}").render()),
        ("jinja2", "not found", lambda: jinja2.Environment().get_template("a.html")),
    ]


CASES = _cases()


def library_records(work: Path) -> dict[str, list[ErrorRecord]]:
    """Records of each library's own files, committed into a repository under `work`."""
    import errscan

    return {
        library: list(errscan.extract(str(library_repo(work / library, library))))
        for library in LIBRARIES
    }
