"""Configuration: the user's file and the scanned repository's, their precedence, and the
scanned project's pytest settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from errscan import config
from errscan.analyzer.files import Filters, is_test_folder, pytest_files
from errscan.cli import cli
from errscan.errors import InputError
from tests.support import commit_all, git, write

_LIB = """
def load(path):
    raise ValueError(f"cannot load {path}")


def check(x):
    assert x, "x must be set"
"""
_TESTING = 'def helper():\n    raise RuntimeError("a test helper")\n'
_EXAMPLE = 'raise SystemExit("an example")\n'


def repo_with(tmp_path: Path, pyproject: str | None = None, **others: str) -> Path:
    """A repository holding a library, pytest's style `testing/` folder and an example,
    and the configuration files given (`others`: file name to text)."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "src/lib/core.py", _LIB)
    write(root, "testing/helpers.py", _TESTING)
    write(root, "testing/check_core.py", _TESTING)
    write(root, "src/lib/check_more.py", _TESTING)
    write(root, "examples/demo.py", _EXAMPLE)
    if pyproject is not None:
        write(root, "pyproject.toml", pyproject)
    for name, text in others.items():
        write(root, name.replace("_", ".", 1) if name.startswith("pytest_") else name, text)
    commit_all(root, "fixture")
    return root


def extract(*args: str, quiet: bool = True) -> tuple[int, list[dict[str, Any]], str]:
    flags = ["-q", "--no-cache"] if quiet else ["--no-cache"]
    done = CliRunner().invoke(cli, ["extract", *args, *flags], catch_exceptions=False)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return done.exit_code, [r for r in lines if "file" in r and "kind" in r], done.stderr


def files_of(records: list[dict[str, Any]]) -> list[str]:
    return sorted({str(r["file"]) for r in records})


# -- reading a settings table -------------------------------------------------------------


def test_known_keys_are_read_in_either_spelling() -> None:
    options, problems = config.read_table(
        {"include-tests": True, "exclude": ["docs"], "test_paths": ["qa"], "kinds": ["raise"],
         "context": 3, "repo-name": "o/n", "include_vendored": True},
        trusted=True,
    )  # fmt: skip
    assert problems == []
    assert options == {
        "include_tests": True, "exclude": ("docs",), "test_paths": ("qa",),
        "kinds": ("raise",), "context": 3, "repo_name": "o/n", "include_vendored": True,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ({"colour": "blue"}, "unknown key 'colour'"),
        ({"include-tests": "yes"}, "'include-tests' must be true or false"),
        ({"exclude": [1]}, "'exclude' must be a list of strings"),
        ({"exclude": [""]}, "'exclude' holds an empty, overlong or unprintable entry"),
        ({"exclude": ["a\x1b[31m"]}, "unprintable"),
        ({"exclude": ["x" * 301]}, "overlong"),
        ({"exclude": ["x"] * 257}, "more than 256 entries"),
        ({"kinds": ["raise", "boom"]}, "unknown kind 'boom'"),
        ({"context": -1}, "'context' must be a whole number from 0 to 200"),
        ({"context": True}, "'context' must be a whole number"),
        ({"repo-name": "not a name"}, "'repo-name' must be OWNER/NAME"),
    ],
)
def test_a_bad_key_is_a_problem_and_is_left_out(table: dict[str, object], problem: str) -> None:
    options, problems = config.read_table(table, trusted=True)
    assert options == {} and len(problems) == 1 and problem in problems[0]


def test_a_scanned_repository_cannot_name_itself() -> None:
    # its name makes its links: it is where it was fetched from, not what it says
    options, problems = config.read_table({"repo-name": "pallets/flask"}, trusted=False)
    assert options == {} and problems == ["'repo-name' is not read from a scanned repository"]


# -- the user's file ------------------------------------------------------------------------


def test_the_nearest_file_applies_and_the_search_stops_at_the_project(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    inner = outer / "project" / "src" / "pkg"
    inner.mkdir(parents=True)
    (outer / "errscan.toml").write_text("context = 1\n")
    assert config.discover(inner).options == {"context": 1}
    # a pyproject.toml counts only with [tool.errscan]
    (outer / "project" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert config.find(inner) == outer / "errscan.toml"
    (outer / "project" / "pyproject.toml").write_text("[tool.errscan]\ncontext = 2\n")
    assert config.discover(inner).options == {"context": 2}
    # an errscan.toml beside it wins; the top of a git project ends the search
    (outer / "project" / "errscan.toml").write_text("context = 3\n")
    assert config.discover(inner).options == {"context": 3}
    (outer / "project" / "errscan.toml").unlink()
    (outer / "project" / "pyproject.toml").unlink()
    (outer / "project" / ".git").mkdir()
    assert config.discover(inner) == config.UserConfig(None, {})


def test_a_track_config_is_a_settings_file_too(tmp_path: Path) -> None:
    path = tmp_path / "errscan.toml"
    path.write_text('db = "x.db"\nexclude = ["docs"]\n[[repos]]\nrepo = "o/n"\n')
    assert config.load(path).options == {"exclude": ("docs",)}


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("errscan.toml", "colour = 1\n", "unknown key 'colour'"),
        ("errscan.toml", "context = [\n", "not valid TOML"),
        ("pyproject.toml", "[tool]\nerrscan = 1\n", "[tool.errscan] must be a table"),
    ],
)
def test_a_bad_user_file_is_bad_input(tmp_path: Path, name: str, text: str, said: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError, match=r"errscan\.toml|pyproject\.toml") as caught:
        config.load(path)
    assert said in str(caught.value)


# -- the scanned repository's files ---------------------------------------------------------


def test_pytest_settings_come_from_the_file_pytest_reads() -> None:
    def read(**files: bytes) -> tuple[tuple[str, ...], tuple[str, ...]]:
        found = config.repo_config({k.replace("_", ".").replace("..", "."): v
                                    for k, v in files.items()})  # fmt: skip
        assert found.warning is None
        return found.test_paths, found.test_files

    pyproject = b'[tool.pytest.ini_options]\ntestpaths = ["testing"]\npython_files = "c_*.py"\n'
    assert read(pyproject_toml=pyproject) == (("testing",), ("c_*.py",))
    # pytest.ini wins, even empty of settings
    assert read(pyproject_toml=pyproject, pytest_ini=b"[pytest]\n") == ((), ())
    ini = b"[pytest]\ntestpaths =\n    qa\n    more/qa\npython_files = t_*.py\n"
    cfg = b"[tool:pytest]\ntestpaths = s\n"
    assert read(tox_ini=ini, setup_cfg=cfg) == (("qa", "more/qa"), ("t_*.py",))
    # a tox.ini without [pytest] gives way to setup.cfg
    assert read(tox_ini=b"[tox]\n", setup_cfg=cfg) == (("s",), ())
    # pytest 9's native table
    assert read(pyproject_toml=b'[tool.pytest]\ntestpaths = ["t"]\n') == (("t",), ())


def test_what_a_repository_holds_that_errscan_cannot_read_is_one_warning() -> None:
    pyproject = (
        b'[tool.errscan]\nexclude = ["docs"]\nrepo-name = "a/b"\nrm = "-rf"\ncontext = "x"\n'
    )
    found = config.repo_config({"pyproject.toml": pyproject, "tox.ini": b"[pytest\n"})
    assert found.options == {"exclude": ("docs",)}
    assert found.warning is not None and found.warning.count("\n") == 0
    for said in ("'repo-name' is not read", "unknown key 'rm'", "'context' must be", "tox.ini"):
        assert said in found.warning
    broken = config.repo_config({"pyproject.toml": b"\xff[tool.errscan"})
    assert (
        broken.options == {} and broken.warning is not None and "not valid TOML" in broken.warning
    )


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(config.REPO_FILES),
        st.one_of(
            st.binary(max_size=200),
            st.text(max_size=200).map(lambda t: ("[tool.errscan]\n" + t).encode()),
            st.text(max_size=200).map(lambda t: ("[pytest]\ntestpaths = " + t).encode()),
        ),
    )
)
def test_no_repository_file_makes_reading_raise(files: dict[str, bytes]) -> None:
    found = config.repo_config(files)
    assert found.warning is None or found.warning.isprintable() or "\n" not in found.warning
    assert set(found.options) <= set(config.OPTIONS.values())


def test_a_catch_all_python_files_pattern_does_not_make_the_project_tests() -> None:
    assert pytest_files(("*.py", "check_*.py", "*")) == ("check_*.py",)
    filters = Filters(pytest_paths=("testing",), test_files=("*.py",))
    assert filters.is_test("testing/helpers.py") and not filters.is_test("src/lib/core.py")
    # without testpaths, a pattern with a folder matches the path, as pytest's does
    filters = Filters(test_files=pytest_files(("check_*.py", "testing/python/*.py")))
    tests = ["a/check_x.py", "testing/python/x.py", "sub/testing/python/y.py"]
    assert [filters.is_test(p) for p in [*tests, "testing/x.py", "python/x.py"]] == [
        True, True, True, False, False,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("folder", "tests"),
    [
        ("testing", True), ("tests", True), ("src/tests", True), ("unit_tests", True),
        ("test-suite", True), ("tests2", True), ("Tests", True),
        ("sympy", False), ("src", False), ("doc/src", False), ("contest", False),
        ("testinfra", False), ("pytest_httpx", False),
    ],
)  # fmt: skip
def test_a_folder_is_test_code_by_its_name(folder: str, tests: bool) -> None:
    assert is_test_folder(folder) is tests


def test_a_package_in_testpaths_keeps_its_code_and_drops_its_tests() -> None:
    """sympy's testpaths = ["sympy", "doc/src"]: the package holds its tests among its
    code (sympy/core/tests/test_basic.py), which pytest finds there by python_files."""
    filters = Filters(pytest_paths=("sympy", "doc/src"), test_files=pytest_files(("check_*.py",)))
    assert not filters.is_test("sympy/core/basic.py")
    assert not filters.is_test("doc/src/conf.py")
    assert filters.is_test("sympy/core/tests/test_basic.py")
    assert filters.is_test("sympy/core/check_basic.py")
    assert not filters.is_test("bin/check_all.py")  # pytest collects within testpaths only
    both = Filters(pytest_paths=("pkg", "testing"), test_files=())
    assert both.is_test("testing/helpers.py") and not both.is_test("pkg/helpers.py")


# -- scanning ---------------------------------------------------------------------------


def test_the_repository_config_and_its_pytest_settings_apply(tmp_path: Path) -> None:
    root = repo_with(
        tmp_path,
        '[tool.errscan]\nexclude = ["examples"]\nkinds = ["raise"]\n'
        '[tool.pytest.ini_options]\ntestpaths = ["testing"]\npython_files = ["check_*.py"]\n',
    )
    code, records, err = extract(str(root))
    assert code == 0 and err == ""
    # testing/ is pytest's test folder; check_*.py files are tests only within it
    assert files_of(records) == ["src/lib/check_more.py", "src/lib/core.py"]
    assert {r["kind"] for r in records} == {"raise"}
    assert {r["area"] for r in records} == {"code"}
    # a flag wins over the repository's setting
    _, records, _ = extract(str(root), "--kind", "assert", "--include-tests")
    assert files_of(records) == ["src/lib/core.py"] and {r["kind"] for r in records} == {"assert"}
    _, records, _ = extract(str(root), "--include-tests", "--kind", "raise,assert")
    assert "testing/helpers.py" in files_of(records)
    # not read when asked so; examples are kept, marked
    for flag in ("--no-repo-config", "--isolated"):
        _, records, _ = extract(str(root), flag)
        assert {(r["file"], r["area"]) for r in records if r["area"] != "code"} == {
            ("examples/demo.py", "examples")
        }
        assert files_of(records) == ["examples/demo.py", "src/lib/check_more.py", "src/lib/core.py",
                                     "testing/check_core.py", "testing/helpers.py"]  # fmt: skip


def test_a_project_whose_testpaths_is_its_package_is_catalogued(tmp_path: Path) -> None:
    root = repo_with(
        tmp_path,
        '[tool.pytest.ini_options]\ntestpaths = ["src", "testing"]\n'
        'python_files = ["check_*.py"]\n',
    )
    _, records, _ = extract(str(root))
    # src/ is the code (its check_*.py, tests), testing/ the tests, wholly
    assert files_of(records) == ["examples/demo.py", "src/lib/core.py"]


def test_precedence_is_flag_then_user_file_then_repository_then_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo_with(tmp_path, "[tool.errscan]\ncontext = 1\n")

    def context_of(*args: str) -> int:
        _, records, _ = extract(str(root), "--include", "src/lib/core.py", *args)
        return int(records[0]["context"]["end_line"] - records[0]["end_line"])

    assert context_of() == 1  # the repository's
    user = tmp_path / "user"
    user.mkdir()
    (user / "errscan.toml").write_text("context = 2\n")
    monkeypatch.chdir(user)
    assert context_of() == 2  # the user's file over the repository's
    assert context_of("--context", "0") == 0  # the flag over both
    other = tmp_path / "other.toml"
    other.write_text("context = 3\n")
    assert context_of("--config", str(other)) == 3
    assert context_of("--isolated") == 4  # the default, 15, cut at the file's end
    code = CliRunner().invoke(cli, ["extract", str(root), "--isolated", "--config", str(other)])
    assert code.exit_code == 2


def test_a_repository_config_errscan_cannot_read_is_one_warning(tmp_path: Path) -> None:
    root = repo_with(tmp_path, '[tool.errscan]\nexclude = ["examples"]\nrepo-name = "evil/x"\n')
    code, records, err = extract(str(root), quiet=False)
    assert code == 0 and "examples/demo.py" not in files_of(records)
    assert err.count("errscan: warning:") == 1
    assert "'repo-name' is not read from a scanned repository" in err
    assert {r["repo"] for r in records} != {"evil/x"}


def test_a_link_or_a_huge_file_is_not_read_as_the_repository_config(tmp_path: Path) -> None:
    root = repo_with(tmp_path)
    write(root, "settings.toml", '[tool.errscan]\nexclude = ["src"]\n')
    (root / "pyproject.toml").symlink_to("settings.toml")
    write(root, "pytest.ini", "[pytest]\ntestpaths = src\n" + "#" * (1 << 20))
    commit_all(root, "link and huge")
    code, records, err = extract(str(root))
    assert code == 0 and err == ""
    assert "src/lib/core.py" in files_of(records)


def test_stored_scans_are_keyed_by_what_was_asked(tmp_path: Path) -> None:
    import errscan

    asked = json.loads(errscan.scan_options(include_tests=True))
    assert asked["include_tests"] is True and asked["context"] is None
    assert asked["repo_config"] is True
    assert json.loads(errscan.scan_options(repo_config=False))["repo_config"] is False


# -- kept per commit --------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(config.REPO_FILES),
        st.one_of(
            st.text(max_size=200).map(lambda t: ("[tool.errscan]\n" + t).encode()),
            st.sampled_from(
                [
                    b'[tool.errscan]\nexclude = ["docs", "x/**"]\ninclude-tests = true\n'
                    b"context = 3\n",
                    b'[tool.errscan]\nkinds = ["raise", "warning"]\ninclude-vendored = false\n',
                    b"[pytest]\ntestpaths = testing src\npython_files = check_*.py\n",
                ]
            ),
        ),
    )
)
def test_settings_read_back_as_they_were_read(files: dict[str, bytes]) -> None:
    found = config.repo_config(files)
    assert config.RepoConfig.from_json(json.loads(json.dumps(found.to_json()))) == found


@pytest.mark.parametrize(
    "kept",
    [
        b"{not json",
        b'{"options": {"context": -4}, "test_paths": [], "test_files": [], "warning": null}',
        b'{"options": {"repo_name": "evil/x"}, "test_paths": [], "test_files": [],'
        b' "warning": null}',
        b'{"options": {}, "test_paths": [3], "test_files": [], "warning": null}',
        b'{"options": {}, "test_paths": [], "test_files": []}',
    ],
)
def test_a_rescan_reads_the_kept_settings_and_a_damaged_entry_is_read_again(
    tmp_path: Path, _private_cache: Path, kept: bytes
) -> None:
    root = repo_with(tmp_path, '[tool.errscan]\nexclude = ["examples"]\nrepo-name = "evil/x"\n')

    def scan() -> tuple[list[str], str]:
        done = CliRunner().invoke(cli, ["extract", str(root)], catch_exceptions=False)
        records = [json.loads(line) for line in done.stdout.splitlines()]
        warnings = [line for line in done.stderr.splitlines() if "warning" in line]
        return files_of([r for r in records if "file" in r]), "\n".join(warnings)

    first, warned = scan()
    assert "examples/demo.py" not in first and "'repo-name' is not read" in warned
    (entry,) = (_private_cache / "repo-config").iterdir()
    # kept: the same settings, the same warning, and the output (replayed) the same
    assert scan() == (first, warned)
    # an entry that says other settings is what the rescan goes by (it is read)...
    entry.write_text(json.dumps({"options": {"exclude": ["src"]}, "test_paths": [],
                                 "test_files": [], "warning": None}))  # fmt: skip
    changed = scan()[0]
    assert "examples/demo.py" in changed and "src/lib/core.py" not in changed
    # ...and one that is not settings errscan could have read is read again
    entry.write_bytes(kept)
    assert scan() == (first, warned)
    assert config.RepoConfig.from_json(json.loads(entry.read_bytes())) is not None
