"""Which blobs a scan reads, and that links and submodules are never followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import errscan
from errscan.analyzer.files import Filters, is_test
from tests.support import commit_all, git, write


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("tests/a.py", True),
        ("pkg/tests/a.py", True),
        ("pkg/test/a.py", True),
        ("test_a.py", True),
        ("pkg/a_test.py", True),
        ("conftest.py", True),
        ("pkg/testing.py", False),
        ("pkg/contest.py", False),
        ("pkg/latest.py", False),
        ("testsuite/a.py", False),
    ],
)
def test_is_test(path: str, test: bool) -> None:
    assert is_test(path) is test


def test_filters() -> None:
    default = Filters()
    assert default.wants("a.py") and default.wants("a.pyi")
    assert (
        not default.wants("a.pyc")
        and not default.wants("a.txt")
        and not default.wants("tests/a.py")
    )
    assert Filters(include_tests=True).wants("tests/a.py")
    only = Filters(include=("pkg/*",), exclude=("*_pb2.py",))
    assert only.wants("pkg/sub/a.py")
    assert not only.wants("other/a.py")
    assert not only.wants("pkg/sub/a_pb2.py")


def files_of(result: errscan.ScanResult) -> set[str]:
    return {r.file for r in result.records} | {e.file for e in result.file_errors}


def test_tests_skipped_unless_asked(basic_repo: Path) -> None:
    default = files_of(errscan.extract(str(basic_repo)))
    assert default == {
        "pkg/__init__.py",
        "pkg/engine.py",
        "pkg/templates.py",
        "pkg/latin.py",
        "pkg/broken.py",
    }
    everything = files_of(errscan.extract(str(basic_repo), include_tests=True))
    assert everything - default == {"tests/test_engine.py", "conftest.py", "pkg/util_test.py"}
    only = files_of(errscan.extract(str(basic_repo), include=["pkg/e*"], exclude=["*.pyi"]))
    assert only == {"pkg/engine.py"}


def test_links_and_submodules_are_not_followed(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    outside = tmp_path / "outside.py"
    outside.write_text('raise ValueError("outside the commit")\n')
    write(repo, "real.py", 'raise ValueError("inside")\n')
    os.symlink(outside, repo / "link_out.py")
    os.symlink("real.py", repo / "link_in.py")
    (repo / "dir.py").mkdir()
    write(repo, "dir.py/inner.py", 'raise ValueError("in a folder named dir.py")\n')
    commit_all(repo, "base")
    # a gitlink to a commit of a repository that is nowhere to be found
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},sub.py")
    commit_all(repo, "gitlink")
    result = errscan.extract(str(repo))
    assert {(r.file, r.message) for r in result.records} == {
        ("real.py", "inside"),
        ("dir.py/inner.py", "in a folder named dir.py"),
    }
    assert result.file_errors == ()


def test_odd_file_names_survive(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    names = ["with space.py", "ünï/cödé.py", "new\nline.py"]
    for name in names:
        write(repo, name, 'raise ValueError("x")\n')
    commit_all(repo, "odd")
    assert {r.file for r in errscan.extract(str(repo)).records} == set(names)
