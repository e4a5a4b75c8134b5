"""Runtime truth: what real test suites raise, against errscan's records of the same sources.

    python bench/runtime_truth.py [--projects packaging,jinja2,...] [--python PYTHON3.12]

For each project: its sdist (downloaded once into a cache outside this repository,
~/.cache/errscan-bench), unpacked; its test suite run under Python 3.12 with every
explicit `raise` inside the package recorded as it executes (sys.monitoring's RAISE
event, kept only at RAISE_VARARGS instructions with an argument: the event also fires
in every frame the exception passes through, and a bare `raise` re-raises); the tree
committed into a throwaway git repository and scanned by this checkout's errscan. Then
per project: executed sites with a record, exception classes that agree, templates
resolved, and templates that fullmatch every message captured at their site (those
with no literal text counted apart, and so are the code's defaults, message_source
"default", which a test that sets its own text sees fail). A site errscan reads as
raising no text at all (message_source "none", `raise E()`) counts as resolved to the
empty template: right only where every message raised there is empty. Nothing here
runs in the test suite.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from errscan.analyzer.files import is_vendored  # noqa: E402
from errscan.matching import _matches  # noqa: E402

CACHE = Path(os.environ.get("ERRSCAN_BENCH_CACHE", Path.home() / ".cache" / "errscan-bench"))


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    package: str  # the import name, under src/ (or at the top, root="")
    deps: tuple[str, ...]  # what its tests import besides pytest
    pytest_args: tuple[str, ...] = ()
    tests: str = "tests"  # the folder of its test suite
    root: str = "src"  # the folder holding the package: src/, or "" for the top


# the project's own addopts left out (coverage options of a plugin not installed here)
_NO_ADDOPTS = ("-q", "-p", "no:cacheprovider", "--continue-on-collection-errors", "-o", "addopts=")

_HTTPX_DEPS = (
    "anyio", "certifi", "httpcore", "idna", "h11", "sniffio", "trio", "uvicorn", "trustme",
    "cryptography", "chardet", "brotli", "zstandard", "click", "pygments", "rich<15", "socksio",
    "h2",
)  # fmt: skip

_URLLIB3_DEPS = (
    "trustme", "tornado", "cryptography", "pysocks", "brotli", "zstandard", "idna", "certifi",
    "h2", "hypercorn", "quart", "quart-trio", "trio", "httpx", "pytest-timeout", "anyio",
)  # fmt: skip

PROJECTS = {
    p.name: p
    for p in [
        Project("packaging", "26.4", "packaging", ("pretend", "tomli_w", "hypothesis")),
        Project("itsdangerous", "2.2.0", "itsdangerous", ("freezegun",)),
        Project("jinja2", "3.1.6", "jinja2", ("markupsafe", "trio")),
        Project("markupsafe", "3.0.4", "markupsafe", ()),
        Project("attrs", "26.1.0", "attr", ("hypothesis", "cloudpickle")),
        Project("marshmallow", "4.4.0", "marshmallow", ("simplejson",)),
        Project(
            "structlog",
            "26.1.0",
            "structlog",
            ("pytest-asyncio", "simplejson", "time-machine", "rich", "better-exceptions"),
        ),
        Project(
            "werkzeug",
            "3.1.9",
            "werkzeug",
            (
                "cffi",
                "cryptography",
                "ephemeral-port-reserve",
                "pytest-timeout",
                "watchdog",
                "markupsafe",
            ),
            # the dev-server tests start servers in subprocesses: left out, and bounded
            (
                "-q",
                "-p",
                "no:cacheprovider",
                "--continue-on-collection-errors",
                "-m",
                "not dev_server",
                "-o",
                "timeout=120",
            ),
        ),
        Project(
            "flask",
            "3.1.3",
            "flask",
            (
                "asgiref",
                "greenlet",
                "python-dotenv",
                "werkzeug",
                "jinja2",
                "itsdangerous",
                "click",
                "blinker",
                "pytest<9",  # its conftest imports _pytest.monkeypatch.notset, gone in 9
            ),
        ),
        # held out of the work on templates until they were added (stop 36): code the
        # reading was not tuned on
        Project("humanize", "4.17.0", "humanize", ("freezegun",)),
        Project(
            "python_dateutil",
            "4.0.0",
            "dateutil",
            ("hypothesis", "freezegun", "pytz", "attrs", "pytest-cov"),
        ),
        Project(
            "cattrs",
            "26.2.1",
            "cattrs",
            (
                "hypothesis",
                "attrs",
                "immutables",
                "pytest-benchmark",
                "typing_extensions",
                "msgpack",
                "pyyaml",
                "tomlkit",
                "ujson",
                "orjson",
                "cbor2",
                "msgspec",
                "pymongo",
            ),
        ),
        Project("pluggy", "1.7.0", "pluggy", ("pytest-benchmark",), tests="testing"),
        Project("cachetools", "8.0.2", "cachetools", ()),
        Project(
            "blinker",
            "1.9.0",
            "blinker",
            ("pytest-asyncio",),
            ("-q", "-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function"),
        ),
        Project("iniconfig", "2.3.1", "iniconfig", (), tests="testing"),
        Project(
            "arrow",
            "1.4.0",
            "arrow",
            ("python-dateutil", "pytz", "simplejson", "pytest-mock", "dateparser", "tzdata"),
            _NO_ADDOPTS,
            root="",
        ),
        Project("asgiref", "3.13.0", "asgiref", ("pytest-asyncio", "mypy"), root=""),
        Project("h11", "0.16.0", "h11", (), tests="h11/tests", root=""),
        Project("idna", "3.21", "idna", (), root=""),
        Project("more_itertools", "11.2.1", "more_itertools", (), root=""),
        Project("pathspec", "1.1.1", "pathspec", (), root=""),
        Project("sqlparse", "0.6.1", "sqlparse", (), root=""),
        Project("tomlkit", "0.15.3", "tomlkit", ("pyyaml",), root=""),
        Project(
            "jsonschema",
            "4.26.0",
            "jsonschema",
            ("attrs", "referencing", "jsonschema-specifications", "rpds-py"),
            _NO_ADDOPTS,
            tests="jsonschema/tests",
            root="",
        ),
        Project("mako", "1.4.3", "mako", ("markupsafe",), _NO_ADDOPTS, tests="test", root=""),
        Project("markdown", "3.11.3", "markdown", ("pyyaml",), _NO_ADDOPTS, root=""),
        Project("chardet", "7.7.0", "chardet", (), _NO_ADDOPTS),
        Project(
            "voluptuous", "0.16.0", "voluptuous", (), _NO_ADDOPTS, tests="voluptuous/tests", root=""
        ),
        Project("pyasn1", "0.6.5", "pyasn1", (), _NO_ADDOPTS, root=""),
        Project(
            "prettytable", "3.19.0", "prettytable", ("wcwidth", "pytest-lazy-fixtures"), _NO_ADDOPTS
        ),
        Project("tabulate", "0.10.0", "tabulate", ("wcwidth",), _NO_ADDOPTS, tests="test", root=""),
        Project("mistune", "3.4.0", "mistune", (), _NO_ADDOPTS),
        Project("webob", "1.8.11", "webob", (), _NO_ADDOPTS),
        Project("toolz", "1.2.0", "toolz", (), _NO_ADDOPTS, tests="toolz/tests", root=""),
        # added at stop 37, held out of the work until then
        Project("boltons", "26.2.0", "boltons", (), _NO_ADDOPTS, root=""),
        Project("isodate", "0.7.2", "isodate", (), _NO_ADDOPTS),
        Project("parse", "1.22.4", "parse", (), _NO_ADDOPTS, root=""),
        Project("pyparsing", "3.3.3", "pyparsing", (), _NO_ADDOPTS, root=""),
        Project("semver", "3.1.2", "semver", (), _NO_ADDOPTS),
        Project("httpx", "0.29.0", "httpx", _HTTPX_DEPS, _NO_ADDOPTS, root=""),
        Project("cssselect", "1.6.0", "cssselect", ("lxml",), _NO_ADDOPTS, root=""),
        Project("pycparser", "3.12", "pycparser", (), _NO_ADDOPTS, root=""),
        Project("python_slugify", "9.2.0", "slugify", ("text-unidecode",), _NO_ADDOPTS, root=""),
        Project("rfc3986", "2.0.0", "rfc3986", (), _NO_ADDOPTS),
        Project(
            "soupsieve",
            "4.1.4",
            "soupsieve",
            ("beautifulsoup4", "lxml", "html5lib"),
            _NO_ADDOPTS,
            root="",
        ),
        Project(
            "tqdm", "4.70.1", "tqdm", ("pytest-timeout", "pytest-asyncio"), _NO_ADDOPTS, root=""
        ),
        Project("typeguard", "4.6.1", "typeguard", ("typing_extensions", "mypy"), _NO_ADDOPTS),
        Project("urllib3", "2.8.0", "urllib3", _URLLIB3_DEPS, _NO_ADDOPTS, tests="test"),
        Project("charset_normalizer", "3.5.3", "charset_normalizer", (), _NO_ADDOPTS),
        Project(
            "docutils", "0.23.1", "docutils", ("pygments",), _NO_ADDOPTS, tests="test", root=""
        ),
        Project(
            "email_validator",
            "2.4.0",
            "email_validator",
            ("dnspython", "idna"),
            _NO_ADDOPTS,
            root="",
        ),
        Project(
            "markdown_it_py",
            "4.3.0",
            "markdown_it",
            ("mdurl", "pytest-regressions", "pytest-datadir", "linkify-it-py"),
            _NO_ADDOPTS,
            root="",
        ),
        Project("python_dotenv", "1.2.4", "dotenv", ("click", "sh"), _NO_ADDOPTS),
        Project("jsonpickle", "4.1.4", "jsonpickle", (), _NO_ADDOPTS, root=""),
        Project("natsort", "8.4.0", "natsort", ("hypothesis", "pytest-mock"), _NO_ADDOPTS, root=""),
        Project(
            "oauthlib",
            "4.0.1",
            "oauthlib",
            ("blinker", "cryptography", "pyjwt"),
            _NO_ADDOPTS,
            root="",
        ),
        Project("pyjwt", "2.15.1", "jwt", ("cryptography",), _NO_ADDOPTS, root=""),
        Project("pyrsistent", "0.20.0", "pyrsistent", ("hypothesis",), _NO_ADDOPTS, root=""),
        # added after 8c5ba3e, measured before anything was changed for them
        Project("schema", "0.7.8", "schema", (), _NO_ADDOPTS, tests="test_schema.py", root=""),
        Project(
            "inflect",
            "7.6.0",
            "inflect",
            ("jaraco.functools", "more_itertools", "typeguard", "pygments"),
            _NO_ADDOPTS,
            root="",
        ),
        Project("tenacity", "9.2.1", "tenacity", ("tornado", "typeguard"), _NO_ADDOPTS, root=""),
        # added after 96f2ffb, measured before anything was changed for them
        Project(
            "glom",
            "25.12.0",
            "glom",
            ("face", "boltons", "attrs", "pyyaml", "tomli"),
            _NO_ADDOPTS,
            tests="glom/test",
            root="",
        ),
        Project(
            "python_box",
            "8.0.0",
            "box",
            ("ruamel.yaml", "tomli_w", "msgpack", "pyyaml"),
            _NO_ADDOPTS,
            tests="test",
            root="",
        ),
        Project("astroid", "4.4.0", "astroid", ("typing_extensions",), _NO_ADDOPTS, root=""),
        Project(
            "pint",
            "0.25.3",
            "pint",
            (
                "platformdirs",
                "typing_extensions",
                "flexcache",
                "flexparser",
                "pytest-subtests",
                "pytest-benchmark",
            ),
            _NO_ADDOPTS,
            tests="pint/testsuite",
            root="",
        ),
        # added after e4d8e43, measured before anything was changed for them
        Project("h2", "4.4.1", "h2", ("hpack", "hyperframe", "hypothesis"), _NO_ADDOPTS),
        Project("toml", "0.10.2", "toml", (), _NO_ADDOPTS, root=""),
        Project("wsproto", "1.3.2", "wsproto", ("h11",), _NO_ADDOPTS),
        Project(
            "num2words", "0.5.14", "num2words", ("docopt", "delegator.py"), _NO_ADDOPTS, root=""
        ),
        Project(
            "lark",
            "1.3.1",
            "lark",
            ("regex", "interegular", "atomicwrites", "js2py"),
            _NO_ADDOPTS,
            root="",
        ),
        Project("elementpath", "5.1.4", "elementpath", ("lxml", "xmlschema"), _NO_ADDOPTS, root=""),
        Project(
            "xmlschema",
            "4.3.2",
            "xmlschema",
            ("elementpath", "lxml", "jinja2"),
            _NO_ADDOPTS,
            root="",
        ),
        # added after 81f18eb, measured before anything was changed for them
        Project("semantic_version", "2.10.0", "semantic_version", (), _NO_ADDOPTS, root=""),
        Project(
            "transitions", "0.9.3", "transitions", ("six", "pytest-mock"), _NO_ADDOPTS, root=""
        ),
        Project(
            "bitstring",
            "5.0.0",
            "bitstring",
            ("bitarray", "hypothesis", "gfloat", "tibs"),
            _NO_ADDOPTS,
            root="",
        ),
        # added after 0a036f5, measured before anything was changed for them
        Project("pyflakes", "4.1.0", "pyflakes", (), _NO_ADDOPTS, "pyflakes/test", root=""),
        Project("configobj", "5.0.9", "configobj", (), _NO_ADDOPTS, "src/tests"),
        Project("simplejson", "4.3.0", "simplejson", (), _NO_ADDOPTS, "simplejson/tests", root=""),
        Project("dill", "0.4.1", "dill", (), _NO_ADDOPTS, "dill/tests", root=""),
        Project(
            "pathvalidate",
            "3.3.1",
            "pathvalidate",
            ("click", "faker", "pytest-md-report"),
            _NO_ADDOPTS,
            "test",
            root="",
        ),
        Project("babel", "2.19.0", "babel", ("pytz", "freezegun"), _NO_ADDOPTS, root=""),
        Project("sqlglot", "30.31.0", "sqlglot", (), _NO_ADDOPTS, root=""),
        Project(
            "poetry_core",
            "2.5.0",
            "poetry",
            ("pytest-mock", "build", "virtualenv", "tomli-w", "trove-classifiers"),
            _NO_ADDOPTS,
        ),
        # its tests are in a tests/ folder of each subpackage (networkx/algorithms/tests)
        Project("networkx", "3.6.1", "networkx", (), _NO_ADDOPTS, "networkx", root=""),
        Project(
            "parsimonious",
            "0.11.0",
            "parsimonious",
            ("regex",),
            _NO_ADDOPTS,
            "parsimonious/tests",
            root="",
        ),
        Project(
            "python_multipart", "0.0.34", "python_multipart", ("pyyaml",), _NO_ADDOPTS, root=""
        ),
        Project("yamllint", "1.38.0", "yamllint", ("pyyaml", "pathspec"), _NO_ADDOPTS, root=""),
        Project(
            "starlette",
            "1.10.0",
            "starlette",
            (
                "httpx",
                "httpx2",
                "anyio",
                "trio",
                "jinja2",
                "python-multipart",
                "itsdangerous",
                "pyyaml",
                "typing_extensions",
            ),
            _NO_ADDOPTS,
            root="",
        ),
        Project(
            "requests",
            "2.34.2",
            "requests",
            (
                "pytest-httpbin",
                "pytest-mock",
                "trustme",
                "PySocks",
                "urllib3",
                "idna",
                "charset_normalizer",
                "certifi",
            ),
            _NO_ADDOPTS,
        ),
        Project(
            "dateparser",
            "1.5.0",
            "dateparser",
            ("regex", "tzlocal", "pytz", "python-dateutil", "parameterized"),
            _NO_ADDOPTS,
            root="",
        ),
        Project(
            "wtforms",
            "3.3.2",
            "wtforms",
            ("markupsafe", "babel", "email-validator", "python-dateutil"),
            _NO_ADDOPTS,
        ),
        Project(
            "apispec",
            "6.10.1",
            "apispec",
            ("marshmallow", "pyyaml", "openapi-spec-validator"),
            _NO_ADDOPTS,
        ),
        Project("aniso8601", "10.0.1", "aniso8601", (), _NO_ADDOPTS, "aniso8601/tests", root=""),
        Project("funcy", "2.1", "funcy", ("whatever",), _NO_ADDOPTS, root=""),
        Project("freezegun", "1.5.5", "freezegun", ("python-dateutil",), _NO_ADDOPTS, root=""),
        Project(
            "responses",
            "0.26.3",
            "responses",
            ("requests", "urllib3", "pyyaml", "tomli-w", "pytest-httpserver", "pytest-asyncio"),
            _NO_ADDOPTS,
            "responses/tests",
            root="",
        ),
        Project("msgpack", "1.2.4", "msgpack", (), _NO_ADDOPTS, "test", root=""),
        # added after 4e48999, measured first against it
        Project(
            "referencing",
            "0.37.0",
            "referencing",
            ("attrs", "rpds-py", "typing_extensions", "jsonschema"),
            _NO_ADDOPTS,
            "referencing/tests",
            root="",
        ),
        Project(
            "deepdiff",
            "9.2.1",
            "deepdiff",
            (
                "orderly-set",
                "numpy",
                "pyyaml",
                "tomli-w",
                "pydantic",
                "python-dateutil",
                "pytz",
                "jsonpickle",
            ),
            _NO_ADDOPTS,
            root="",
        ),
        Project("jsonpath_ng", "1.17.0", "jsonpath_ng", ("ply",), _NO_ADDOPTS),
        Project("distlib", "0.4.4", "distlib", (), _NO_ADDOPTS, root=""),
        Project(
            "docstring_parser",
            "0.18.0",
            "docstring_parser",
            (),
            _NO_ADDOPTS,
            "docstring_parser/tests",
            root="",
        ),
        Project("webcolors", "25.10.0", "webcolors", (), _NO_ADDOPTS),
        Project("validators", "0.36.0", "validators", ("eth-hash[pycryptodome]",), _NO_ADDOPTS),
        Project("mutagen", "1.48.1", "mutagen", ("hypothesis",), _NO_ADDOPTS, root=""),
        # pydantic v1; without hypothesis, whose plugin's option its conftest adds again
        Project(
            "pydantic",
            "1.10.27",
            "pydantic",
            ("typing_extensions", "python-dotenv", "email-validator", "pytest-mock"),
            _NO_ADDOPTS,
            root="",
        ),
        # its stream-lifecycle stress tests take many minutes under the capture
        Project("click", "8.5.1", "click", (), (*_NO_ADDOPTS, "-k", "not stress")),
        Project(
            "icalendar",
            "7.3.2",
            "icalendar",
            ("python-dateutil", "tzdata", "hypothesis", "pytz"),
            _NO_ADDOPTS,
            "src/icalendar/tests",
        ),
        Project("parso", "0.8.7", "parso", (), _NO_ADDOPTS, "test", root=""),
        Project("bleach", "6.4.0", "bleach", ("webencodings", "tinycss2"), _NO_ADDOPTS, root=""),
        Project("hyperframe", "6.1.0", "hyperframe", (), _NO_ADDOPTS),
        Project("pyyaml", "6.0.4", "yaml", (), _NO_ADDOPTS, root="lib"),
    ]
}

# Loaded into the test run by `-p errscan_capture`: records each explicit raise in SRC.
_PLUGIN = r"""
import dis, json, os, sys
SRC = os.environ["ERRSCAN_CAPTURE_SRC"]
OUT = os.environ["ERRSCAN_CAPTURE_OUT"]
TOOL = 4
_raises = {}
_seen = {}

def _explicit(code):
    found = _raises.get(code)
    if found is None:
        found = _raises[code] = {
            i.offset: i.positions.lineno
            for i in dis.get_instructions(code)
            if i.opname == "RAISE_VARARGS" and i.arg
        }
    return found

def _on_raise(code, offset, exc):
    if not code.co_filename.startswith(SRC):
        return
    line = _explicit(code).get(offset)
    if line is None:
        return
    cls = type(exc)
    try:
        text = str(exc)
    except Exception:
        text = None
    # the frame that called the raising function: a call of a raising helper
    # (`self.fail(f"...")`) is a site of its own where errscan reads one
    caller = sys._getframe(1).f_back
    called_from = None
    if caller is not None and caller.f_code.co_filename.startswith(SRC):
        called_from = (caller.f_code.co_filename, caller.f_lineno)
    key = (code.co_filename, line, called_from)
    messages = _seen.setdefault(key, {})
    if len(messages) < 50:
        messages[text] = [f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__]

def pytest_configure(config):
    sys.monitoring.use_tool_id(TOOL, "errscan-capture")
    sys.monitoring.register_callback(TOOL, sys.monitoring.events.RAISE, _on_raise)
    sys.monitoring.set_events(TOOL, sys.monitoring.events.RAISE)

def pytest_unconfigure(config):
    sys.monitoring.set_events(TOOL, 0)
    with open(OUT, "w", encoding="utf-8") as out:
        top = os.path.dirname(SRC.rstrip(os.sep))
        for (path, line, called_from), messages in sorted(_seen.items(), key=str):
            caller = None
            if called_from is not None:
                caller = [os.path.relpath(called_from[0], top), called_from[1]]
            for text, mro in messages.items():
                where = os.path.relpath(path, top)
                row = {"file": where, "line": line, "class": mro[0], "mro": mro,
                       "message": text, "caller": caller}
                out.write(json.dumps(row) + "\n")
"""


def sdist(project: Project) -> Path:
    folder = CACHE / "sdists"
    folder.mkdir(parents=True, exist_ok=True)
    found = sorted(folder.glob(f"{project.name}-{project.version}.tar.gz"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             f"{project.name}=={project.version}", "-d", str(folder)],
            check=True,
        )  # fmt: skip
        found = sorted(folder.glob(f"{project.name}-{project.version}.tar.gz"))
    return found[0]


def venv(project: Project, python: str) -> Path:
    """A Python 3.12 environment with pytest and the project's test dependencies, kept."""
    digest = hashlib.sha256(" ".join(project.deps).encode()).hexdigest()[:8]
    where = CACHE / "venvs" / f"{project.name}-{project.version}-{digest}"
    ready = where / "ready"
    if not ready.exists():
        shutil.rmtree(where, ignore_errors=True)
        subprocess.run([python, "-m", "venv", str(where)], check=True)
        subprocess.run(
            [str(where / "bin" / "python"), "-m", "pip", "install", "-q", "pytest", *project.deps],
            check=True,
        )
        ready.write_text("ok")
    return where / "bin" / "python"


def capture(project: Project, tree: Path, python: Path) -> list[dict[str, Any]] | None:
    """What the test suite raised; None where the run recorded nothing (it could not
    start: a missing dependency, a plugin's warning made an error)."""
    plugin_dir = tree.parent / "plugin"
    plugin_dir.mkdir(exist_ok=True)
    (plugin_dir / "errscan_capture.py").write_text(_PLUGIN)
    out = tree.parent / "captured.jsonl"
    src = tree / project.root / project.package
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(plugin_dir), str(tree / project.root)]),
        "ERRSCAN_CAPTURE_SRC": str(src) + os.sep,
        "ERRSCAN_CAPTURE_OUT": str(out),
    }
    args = project.pytest_args or (
        "-q",
        "-p",
        "no:cacheprovider",
        "--continue-on-collection-errors",
    )
    subprocess.run(
        [str(python), "-m", "pytest", *args, "-p", "errscan_capture", project.tests],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=1800,
    )  # fmt: skip  (failing tests are fine: what they raise is still truth)
    if not out.exists():
        return None
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def records(
    tree: Path, checkout: Path = ROOT, project: Project | None = None
) -> list[dict[str, Any]]:
    """errscan's records of the package, committed under src/ (a top-level package too:
    the same module names)."""
    repo = tree.parent / "repo"
    if project is None or project.root == "src":
        shutil.copytree(tree / "src", repo / "src")
    else:
        shutil.copytree(tree / project.root / project.package, repo / "src" / project.package)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}  # fmt: skip
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "sdist"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
    out = tree.parent / "records.jsonl"
    subprocess.run(
        [sys.executable, "-m", "errscan", "extract", str(repo), "-q", "--no-cache", "-o", str(out)],
        check=True, cwd=checkout,
    )  # fmt: skip
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if "id" in row]


_ALIASES = r"""
import importlib, json, sys
found = {}
for name in json.load(sys.stdin):
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        if isinstance(obj, type):
            found[name] = f"{obj.__module__}.{obj.__qualname__}"
        break
json.dump(found, sys.stdout)
"""


def aliases(python: Path, found: list[dict[str, Any]], package: str) -> dict[str, str]:
    """The class each record names outside the project (`click.BadParameter`) by the name
    of its definition (`click.exceptions.BadParameter`), read in the test environment:
    errscan never reads a dependency's code, so it names the class as the code imports
    it, and the harness counts that right where the name is the class raised."""
    names = sorted(
        {
            r["exception_qualname"]
            for r in found
            if r.get("exception_qualname")
            and r["exception_qualname"].split(".")[0] not in (package, "builtins")
        }
    )
    done = subprocess.run(
        [str(python), "-c", _ALIASES], input=json.dumps(names), capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    try:
        return {k: v for k, v in json.loads(done.stdout).items() if k != v}
    except ValueError:
        return {}


@dataclass
class Tally:
    sites: int = 0
    recorded: int = 0
    classes: int = 0
    resolved: int = 0
    correct: int = 0
    wildcard: int = 0
    wildcard_correct: int = 0
    default: int = 0  # templates of the code's text where its user sets none
    default_correct: int = 0
    empty: int = 0  # sites errscan reads as raising no text (message_source "none")
    empty_correct: int = 0
    aliased: int = 0  # classes right by a name that is not their definition's
    reraised: int = 0  # re-raises whose caught classes include what was raised
    renamed: int = 0  # classes their package gave another __module__
    misses: list[str] = field(default_factory=list)


def _templates(record: dict[str, Any]) -> list[list[tuple[str | None, str | None]]]:
    from errscan import matching as lookup
    from errscan.models import ErrorRecord

    # templates_of: _templates in checkouts older than it (--errscan DIR)
    split = getattr(lookup, "templates_of", None) or getattr(lookup, "_templates")  # noqa: B009
    return [list(t) for t in split(ErrorRecord.from_dict(record))]


def compare(
    captured: list[dict[str, Any]],
    found: list[dict[str, Any]],
    tree: Path,
    named: dict[str, str] | None = None,
    root: str = "src",
) -> Tally:
    """Each executed raise against the record at its line; one inside a raising helper
    against the record of the helper's call where errscan made one (a call statement
    at that line, not a raise: `raise E(helper())` is another site)."""
    by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in found:
        by_file[record["file"]].append(record)
    by_site: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for row in captured:
        where = (row["file"], row["line"])
        if row.get("caller"):
            path, line = row["caller"]
            statement = _line(tree / root / path, line).lstrip()
            called = [r for r in by_file.get(f"src/{path}", []) if r["line"] == line]
            if called and not statement.startswith(("raise", "assert", "return", "yield")):
                where = (path, line)
        by_site[where].append(row)
    tally = Tally()
    for (path, line), rows in sorted(by_site.items()):
        tally.sites += 1
        candidates = [
            r for r in by_file.get(f"src/{path}", []) if r["line"] <= line <= r["end_line"]
        ]
        candidates.sort(key=lambda r: (r["line"] != line, r["line"]))
        if not candidates:
            tally.misses.append(f"no record: src/{path}:{line} {rows[0]['class']}")
            continue
        record = candidates[0]
        tally.recorded += 1
        classes = {row["class"] for row in rows}
        qualname = record["exception_qualname"]
        if classes == {qualname}:
            tally.classes += 1
        elif named is not None and qualname in named and classes == {named[qualname]}:
            tally.classes += 1
            tally.aliased += 1
        elif len(classes) == 1 and qualname and _renamed(qualname, next(iter(classes))):
            # the class errscan names, under the name its package gave it at import
            tally.classes += 1
            tally.renamed += 1
        elif record["kind"] == "reraise" and all(_caught(record, row) for row in rows):
            # what a re-raise raises is what was caught: one of its classes or a subclass
            tally.classes += 1
            tally.reraised += 1
        else:
            tally.misses.append(
                f"class: src/{path}:{line} {record['exception_qualname']} vs {sorted(classes)}"
            )
        if record["message"] == "" or (
            record["message"] is None and record["message_source"] == "none"
        ):
            # errscan says the site raises no text (`raise E()`, or a class whose
            # text is empty whatever it is given): str() of it must be empty
            tally.resolved += 1
            tally.empty += 1
            right = all(row["message"] == "" for row in rows)
            tally.correct += right
            tally.empty_correct += right
            if not right:
                shown = next(row["message"] for row in rows if row["message"] != "")
                tally.misses.append(f"template: src/{path}:{line} (no message) vs {shown!r}")
            continue
        if record["message"] is None:
            tally.misses.append(
                f"unresolved: src/{path}:{line} {_line(tree / root / path, line).strip()[:90]}"
                f" -> {(rows[0]['message'] or '')[:70]!r}"
            )
            continue
        tally.resolved += 1
        templates = _templates(record)
        literal = any(text for text, _ in templates[0])
        ok = all(
            row["message"] is not None and any(_matches(t, row["message"]) for t in templates)
            for row in rows
        )
        if not literal:
            tally.wildcard += 1
            tally.wildcard_correct += ok
        if record["message_source"] == "default":
            tally.default += 1
            tally.default_correct += ok
        tally.correct += ok
        if not ok:
            shown = next(
                r["message"]
                for r in rows
                if not any(_matches(t, r["message"] or "") for t in templates)
            )
            tally.misses.append(f"template: src/{path}:{line} {record['message']!r} vs {shown!r}")
    return tally


def _not_its_own(path: str, project: Project) -> bool:
    """Whether a file of the package is one of its tests (under the test folder, or
    where that is the package itself, under a tests/ folder of a subpackage), or code
    it vendors, which errscan leaves out by default (files.is_vendored)."""
    if is_vendored(path):
        return True
    folders = path.split("/")[:-1]
    if project.tests == project.package:
        return "tests" in folders
    return path.startswith(f"{project.tests}/")


def _renamed(qualname: str, seen: str) -> bool:
    """Whether the class raised is the one errscan names, its __module__ set to the
    package's by the package (httpx sets httpx._exceptions.InvalidURL's to "httpx"): the
    same qualname, the module seen a package above the module it is defined in."""
    defined, _, cls = qualname.rpartition(".")
    shown, _, shown_cls = seen.rpartition(".")
    return bool(shown) and cls == shown_cls and defined.startswith(shown + ".")


def _caught(record: dict[str, Any], row: dict[str, Any]) -> bool:
    """Whether a re-raise's caught classes, as written (`exc.BadSignature`, a bare
    `except:` read as BaseException), name a class of the raised one's MRO."""
    mro = {name.rsplit(".", 1)[-1] for name in row.get("mro", [row["class"]])}
    written = record["reraises"] or ["BaseException"]  # a bare raise outside any except
    return any(name.rsplit(".", 1)[-1] in mro for name in written)


def _line(path: Path, number: int) -> str:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else "0/0"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--projects", default=",".join(PROJECTS))
    parser.add_argument("--python", default=str(Path.home() / ".pyenv/versions/3.12.1/bin/python"))
    parser.add_argument("--misses", type=int, default=15, help="misses listed per project")
    parser.add_argument(
        "--errscan", type=Path, default=ROOT, help="the checkout whose errscan makes the records"
    )
    parser.add_argument(
        "--captures",
        type=Path,
        default=None,
        help="a folder keeping each project's captured raises (NAME-VERSION.jsonl): reused"
        " when there, so a change of errscan is measured without running the suites again",
    )
    options = parser.parse_args()
    total = Tally()
    head = ["project", "executed sites", "with a record", "class right", "resolved",
            "fullmatch", "wildcard-only (right)", "default (right)",
            "no text (right)"]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    misses: dict[str, list[str]] = {}
    for name in options.projects.split(","):
        project = PROJECTS[name]
        with tempfile.TemporaryDirectory(prefix=f"truth-{name}-") as work:
            with tarfile.open(sdist(project)) as archive:
                archive.extractall(work, filter="data")
            tree = Path(work) / f"{project.name}-{project.version}"
            python = venv(project, options.python)
            kept = options.captures and options.captures / f"{name}-{project.version}.jsonl"
            captured: list[dict[str, Any]] | None
            if kept and kept.exists():
                captured = [json.loads(line) for line in kept.read_text("utf-8").splitlines()]
            else:
                captured = capture(project, tree, python)
                if captured is None:
                    print(f"| {name} {project.version} | the test run recorded nothing |")
                    continue
                if kept:
                    kept.parent.mkdir(parents=True, exist_ok=True)
                    kept.write_text("".join(json.dumps(row) + "\n" for row in captured), "utf-8")
            # a test suite inside the package (h11/tests, networkx/*/tests) raises in its
            # own files too, and vendored code (poetry/core/_vendor) is not the project's
            captured = [r for r in captured if not _not_its_own(r["file"], project)]
            found = records(tree, options.errscan, project)
            named = aliases(python, found, project.package)
            tally = compare(captured, found, tree, named, project.root)
        for key in (
            "sites",
            "recorded",
            "classes",
            "resolved",
            "correct",
            "wildcard",
            "wildcard_correct",
            "default",
            "default_correct",
            "empty",
            "empty_correct",
            "aliased",
            "reraised",
            "renamed",
        ):
            setattr(total, key, getattr(total, key) + getattr(tally, key))
        misses[name] = tally.misses
        print(f"| {name} {project.version} | {tally.sites} | {_pct(tally.recorded, tally.sites)} | "
              f"{_pct(tally.classes, tally.recorded)} | {_pct(tally.resolved, tally.sites)} | "
              f"{_pct(tally.correct, tally.resolved)} | "
              f"{tally.wildcard} ({tally.wildcard_correct}) | "
              f"{tally.default} ({tally.default_correct}) | "
              f"{tally.empty} ({tally.empty_correct}) |",
              flush=True)  # fmt: skip
    print(f"| all | {total.sites} | {_pct(total.recorded, total.sites)} | "
          f"{_pct(total.classes, total.recorded)} | {_pct(total.resolved, total.sites)} | "
          f"{_pct(total.correct, total.resolved)} | "
          f"{total.wildcard} ({total.wildcard_correct}) | "
          f"{total.default} ({total.default_correct}) | "
          f"{total.empty} ({total.empty_correct}) |")  # fmt: skip
    print(
        f"\nclass right counts {total.aliased} sites whose record names a dependency's class "
        "by the name the code imports (click.BadParameter for click.exceptions.BadParameter), "
        f"{total.reraised} re-raises whose caught classes include the class raised, and "
        f"{total.renamed} classes raised under the name their package gave them (httpx and"
        " typeguard set their exceptions' __module__ to the package's)"
    )
    for name, listed in misses.items():
        print(f"\n{name}: {len(listed)} misses")
        for line in listed[: options.misses]:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
