"""Which blobs a scan reads, and that links and submodules are never followed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import errscan
from errscan.analyzer import cache, files, scan
from errscan.analyzer.files import BlobEntry, Filters, Listing, is_test, list_files
from errscan.analyzer.gitcmd import Git
from errscan.errors import InputError
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


@pytest.mark.parametrize(
    ("path", "area"),
    [
        ("pkg/core.py", "code"),
        ("examples/demo.py", "examples"),
        ("pkg/example/run.py", "examples"),
        ("docs/conf.py", "docs"),
        ("docs_src/tutorial/app.py", "docs"),
        ("doc/examples/x.py", "docs"),  # the first folder that says decides
        ("pkg/docs.py", "code"),  # a file's own name says nothing
        ("documentation2/x.py", "code"),
    ],
)
def test_area(path: str, area: str) -> None:
    assert files.area(path) == area


_PARTS = ["pkg", "tests", "test", "_vendor", "vendor", "third_party", "extern", "src", "a.b"]
_NAMES = ["a.py", "a.pyi", "test_a.py", "a_test.py", "conftest.py", "conftest.pyi", "a.txt",
          "test_a.pyi", "a_test.txt", "tests.py", "py", ".py"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    paths=st.lists(
        st.tuples(st.lists(st.sampled_from(_PARTS), max_size=3), st.sampled_from(_NAMES)),
        min_size=1,
        max_size=12,
    ),
    include_tests=st.booleans(),
    include_vendored=st.booleans(),
)
def test_a_listing_s_chooser_answers_as_wants(
    paths: list[tuple[list[str], str]], include_tests: bool, include_vendored: bool
) -> None:
    """The listing asks each folder once where no glob applies (Filters.chooser): the
    same answers as `wants`, path by path, whatever came before."""
    filters = Filters(include_tests=include_tests, include_vendored=include_vendored)
    chooser = filters.chooser()
    assert chooser != filters.wants  # the quicker one, where no glob applies
    for folders, name in paths:
        path = "/".join([*folders, name])
        assert chooser(path) is filters.wants(path), path
    globbed = Filters(exclude=("pkg",))
    assert globbed.chooser() == globbed.wants


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


_PATH_PARTS = st.sampled_from(["a", "b", "é", "__init__", "m", "x-y", "z0"])


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(
        st.lists(_PATH_PARTS, min_size=1, max_size=4).map(lambda p: "/".join(p) + ".py"),
        st.tuples(st.binary(min_size=20, max_size=32), st.integers(0, 1 << 40)),
    ),
    st.sets(st.integers(0, 30)),
)
def test_a_listing_gives_what_a_sorted_list_of_entries_would(
    files: dict[str, tuple[bytes, int]], picks: set[int]
) -> None:
    entries = [BlobEntry(p, sha.hex(), size) for p, (sha, size) in sorted(files.items())]
    listing = Listing((e.path, e.sha, e.size) for e in reversed(entries))
    try:
        assert list(listing) == entries
        assert len(listing) == len(entries)
        assert list(listing.paths()) == [e.path for e in entries]
        for entry in entries:
            assert listing.sha(entry.path) == entry.sha
        for missing in ["", "a", "a/b.pyi", "zz.py"]:
            if missing not in files:
                with pytest.raises(KeyError):
                    listing.sha(missing)
        chosen = [e for i, e in enumerate(entries) if i in picks]
        listing.mark(e.path for e in chosen)
        assert list(listing.marked()) == sorted(chosen, key=lambda e: (-e.size, e.path))
    finally:
        listing.close()


def test_a_listing_is_read_a_page_at_a_time_between_other_queries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two walks at once, as a scan makes them (one a chunk ahead of the other)."""
    monkeypatch.setattr(files, "_PAGE", 3)
    names = [f"m{i:02}.py" for i in range(10)]
    listing = Listing((name, f"{i:040x}", i) for i, name in enumerate(names))
    ahead = listing.paths()
    seen = []
    for entry in listing:
        seen.append((entry.path, next(ahead, None)))
        listing.mark([entry.path])
    assert seen == [(name, name) for name in names]
    assert [e.path for e in listing.marked()] == names[::-1]
    listing.close()


def test_a_run_of_paths_is_marked_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first scan scans every file: each chunk of the listing, a run of paths in its
    order, is marked by one statement (mark_between), the same files as one a path."""
    names = ["a-b.py", "a.b.py", "a/b.py", "a0.py", "\u00e9/x.py", "z.py", "a/b/c.py", "ab.py"]
    listing = Listing((name, f"{i:040x}", i) for i, name in enumerate(names))
    ordered = list(listing.paths())
    assert ordered == sorted(names, key=lambda name: name.encode())
    listing.mark_between(ordered[1], ordered[5])
    assert {e.path for e in listing.marked()} == set(ordered[1:6])
    listing.close()
    monkeypatch.setattr(scan, "_CHUNK", 3)
    marks: list[str] = []
    kinds = Listing((name, f"{i:040x}", i) for i, name in enumerate(names))
    for method in ("mark", "mark_between"):
        monkeypatch.setattr(Listing, method, _noting(marks, method, getattr(Listing, method)))
    results = cache.ResultCache.in_memory("digest", 2)
    hit = cache.encode(scan.scan_file("a.b.py", b"x = 1\n", 2))
    results.put_many([(f"{1:040x}", hit)])  # a.b.py's, stored
    monkeypatch.setattr(scan, "Scanner", lambda *a, **k: _Stop())
    with pytest.raises(_Halt):
        scan.prepare(lambda entries: iter(()), kinds, results, 2, 2, None, None, _noted)
    # the chunk with a file stored: a path at a time
    assert marks == ["mark", "mark_between", "mark_between"]
    assert {e.path for e in kinds.marked()} == set(ordered) - {names[1]}
    kinds.close()


def _noting(marks: list[str], name: str, real: Any) -> Any:
    def noted(self: Listing, *args: Any) -> Any:
        marks.append(name)
        return real(self, *args)

    return noted


class _Halt(Exception):
    pass


class _Stop:
    def scanned(self, *_a: object) -> None:
        raise _Halt

    def close(self) -> None:
        pass


def _noted(*_a: object) -> None:
    pass


def test_a_listing_read_in_chunks_misses_no_file(tmp_path: Path) -> None:
    """ls-tree output of about 200 KB arrives in 64 KB chunks that cut records apart."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    names = [f"pkg{i % 7}/{'n' * (i % 90)}_{i}.py" for i in range(1500)]
    names += ["\u00e9t\u00e9/caf\u00e9.py", "z/last.py", "notes.txt"]
    for name in names:
        write(repo, name, f"x = {len(name)}\n")
    sha = commit_all(repo, "many")
    listing = list_files(_git(repo), sha, Filters(include_tests=True))
    staged = git(repo, "ls-files", "-s", "-z").split("\0")
    expected = sorted(
        (line.split("\t", 1)[1], line.split()[1]) for line in staged if line.endswith(".py")
    )
    assert [(entry.path, entry.sha) for entry in listing] == expected
    assert len(listing) == len(names) - 1
    assert all(entry.size == len(f"x = {len(entry.path)}\n") for entry in listing)


def _listed(listing: Listing) -> tuple[list[BlobEntry], list[object], list[str]]:
    try:
        return list(listing), list(listing.refused), listing.unmatched
    finally:
        listing.close()


def test_a_listing_begun_ahead_is_the_listing(tmp_path: Path) -> None:
    """files.Ahead's `git ls-tree`, run to a file while the caller goes on, gives what
    listing then gives: the entries and their sizes, the names refused, the globs that
    take no file. Its files are closed and its process has ended once listed."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    names = [f"pkg{i % 5}/m{'x' * (i % 70)}_{i}.py" for i in range(900)] + ["tests/t.py"]
    for name in names:
        write(repo, name, f"x = {len(name)}\n" * (1 + len(name) % 4))
    sha = commit_all(repo, "many")
    wanted = Filters(exclude=("pkg1", "nothing/**"))
    ahead = files.Ahead(_git(repo), sha)
    begun = _listed(list_files(_git(repo), sha, wanted, ahead))
    assert begun == _listed(list_files(_git(repo), sha, wanted))
    assert len(begun[0]) == 720 and begun[2] == ["nothing/**"]
    assert ahead.output.closed and ahead.errors.closed and ahead.listed()


def test_a_listing_begun_ahead_that_failed_is_listed_again(tmp_path: Path) -> None:
    """Where the listing begun ahead failed (or was of another commit), the tree is
    listed again: an unknown commit is the input error it always was."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, "a.py", "x = 1\n")
    sha = commit_all(repo, "one")
    with pytest.raises(InputError, match=r"cannot list files of .*not a tree object"):
        list_files(_git(repo), "1" * 40, Filters(), files.Ahead(_git(repo), "1" * 40))
    other = files.Ahead(_git(repo), "1" * 40)
    assert [e.path for e in _listed(list_files(_git(repo), sha, Filters(), other))[0]] == ["a.py"]
    assert other.output.closed


def test_a_listing_begun_ahead_and_never_read_ends(tmp_path: Path) -> None:
    """A scan that is never iterated (closed, or its output replayed) kills the listing
    begun for it, and closes its files."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, "a.py", "x = 1\n")
    commit_all(repo, "one")
    running = errscan.scan(f"{repo}@HEAD", cache_dir=tmp_path / "cache")
    ahead = running._ahead
    assert ahead is not None
    running.close()
    assert running._ahead is None and ahead.output.closed and ahead._proc.poll() is not None


def test_an_unknown_commit_is_an_input_error(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    with pytest.raises(InputError, match=r"cannot list files of .*not a tree object"):
        list_files(_git(repo), "1" * 40, Filters())


def test_blobs_are_read_in_order_a_few_requests_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """read_files takes its entries lazily, never more than _AHEAD before the blob it
    gives, and gives every blob whole, however large."""
    monkeypatch.setattr(files, "_AHEAD", 4)
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    texts = {f"m{i:03}.py": f"x = {i}\n" * (1 + i * 997 % 5000) for i in range(120)}
    for name, text in texts.items():
        write(repo, name, text)
    sha = commit_all(repo, "many")
    listing = list_files(_git(repo), sha, Filters())
    taken = 0

    def lazily() -> Iterator[BlobEntry]:
        nonlocal taken
        for entry in listing:
            taken += 1
            yield entry

    read: list[tuple[str, str]] = []
    for source_file in files.read_files(_git(repo), lazily()):
        assert taken - len(read) <= 4
        read.append((source_file.path, source_file.data.decode()))  # type: ignore[union-attr]
    assert read == sorted(texts.items())
    listing.close()


def test_a_blob_git_does_not_have_is_read_as_missing(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, "a.py", "x = 1\n")
    sha = commit_all(repo, "one")
    (entry,) = list_files(_git(repo), sha, Filters())
    gone = BlobEntry("b.py", "1" * 40, 3)
    huge = BlobEntry("c.py", entry.sha, files.MAX_BYTES + 1)  # never asked of git
    read = list(files.read_files(_git(repo), [entry, gone, huge, entry]))
    assert [(f.path, f.data) for f in read] == [
        ("a.py", b"x = 1\n"),
        ("b.py", files.Unread(files._MISSING.reason, transient=True)),
        ("c.py", files.Unread("file too large: 8,388,609 bytes; errscan reads at most 8,388,608")),
        ("a.py", b"x = 1\n"),
    ]


def _git(repo: Path) -> Git:
    return Git(str(repo / ".git"), scanned=True)


@pytest.mark.parametrize(
    ("path", "glob", "expected"),
    [
        ("src/pip/_vendor/rich/text.py", "src/pip/_vendor", True),  # a folder takes its files
        ("src/pip/_vendor/rich/text.py", "src/pip/_vendor/", True),
        ("src/pip/_internal/cli/main.py", "src/pip/_vendor", False),
        ("src/pkg/gen/a.py", "**/gen", True),
        ("gen/a.py", "**/gen/*.py", True),  # `**/` also matches no folder
        ("src/pkg/gen/a.py", "**/gen/*.py", True),
        ("docs/conf.py", "docs", True),  # a bare name: a folder or file anywhere
        ("src/docs/conf.py", "docs", True),
        ("src/pkg/docs_util.py", "docs", False),
        ("src/pkg/mod.py", "*.py", True),
        ("src/pkg/mod.py", "src/*/mod.py", True),
    ],
)
def test_globs_follow_ruff_s_rules(path: str, glob: str, expected: bool) -> None:
    assert files.matches(path, glob) is expected


def test_vendored_code_is_left_out_unless_asked_for() -> None:
    plain, vendored = files.Filters(), files.Filters(include_vendored=True)
    for path in ("src/pip/_vendor/rich/text.py", "third_party/x/y.py", "a/extern/b.py",
                 "vendor/lib.py"):  # fmt: skip
        assert not plain.wants(path) and vendored.wants(path)
    assert plain.wants("src/vendors.py") and plain.wants("src/pkg/vendor.py")


def test_a_glob_that_takes_no_file_is_one_warning(basic_repo: Path) -> None:
    from click.testing import CliRunner

    from errscan.cli import cli

    done = CliRunner().invoke(
        cli, ["extract", str(basic_repo), "-o", os.devnull, "--exclude", "nowhere/**",
              "--exclude", "pkg/engine.py"],
    )  # fmt: skip
    assert done.exit_code == 0
    warnings = [line for line in done.output.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "'nowhere/**' matches no file" in warnings[0]


def _asked_of_git(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The commands read_files starts git with."""
    started: list[str] = []
    popen = Git.popen

    def counting(self: Git, *args: str, **kwargs: object) -> object:
        started.append(" ".join(args))
        return popen(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "popen", counting)
    return started


def test_a_clean_work_tree_s_files_are_read_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files checked out as they are in the commit are read from the work tree (the
    object id of what is read is the blob's), and git is not started for them; edited,
    grown or shrunk files, and those git converts on checkout, are read from git."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    texts = {f"pkg/m{i}.py": f"x = {i}\n" * (i + 1) for i in range(6)}
    texts["crlf.py"] = "y = 1\r\nz = 2\r\n"
    for name, text in texts.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(text.encode())
    sha = commit_all(repo, "files")
    listing = list(list_files(_git(repo), sha, Filters()))
    started = _asked_of_git(monkeypatch)
    work_tree = files.WorkTree(str(repo))
    read = {f.path: f.data for f in files.read_files(_git(repo), listing, work_tree)}
    assert read == {name: text.encode() for name, text in texts.items()}
    assert started == []
    (repo / "pkg/m1.py").write_text("x = 9\nx = 9\n")  # the same size, edited
    (repo / "pkg/m2.py").write_text("grown = True\n" * 9)
    (repo / "crlf.py").write_bytes(b"y = 1\nz = 2\n\n\n")  # as a checkout filter might
    read = {f.path: f.data for f in files.read_files(_git(repo), listing, work_tree)}
    assert read == {name: text.encode() for name, text in texts.items()}
    assert started == ["cat-file --batch"]


def test_a_work_tree_opens_each_folder_once_and_holds_few(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file's read opens only its own folder where that is not held already (reached
    from the top a part at a time), at most _FOLDERS_HELD folders stay open, and close
    lets go of them all."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    texts = {f"a/b/c/m{i}.py": f"x = {i}\n" for i in range(5)}
    texts |= {f"many/f{i}/m.py": f"y = {i}\n" for i in range(5)}
    for name, text in texts.items():
        write(repo, name, text)
    listing = list(list_files(_git(repo), commit_all(repo, "files"), Filters()))
    opened: list[str] = []
    real_open = os.open

    def counting(path: str, *args: object, **kwargs: object) -> int:
        opened.append(path)
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "_FOLDERS_HELD", 3)
    monkeypatch.setattr(os, "open", counting)
    work_tree = files.WorkTree(str(repo))
    assert [work_tree.blob(entry) for entry in listing] == [
        texts[entry.path].encode() for entry in listing
    ]
    folders = [path for path in opened if not path.endswith(".py")]
    # a/b/c: the top, a, a/b, a/b/c once; each many/fI: many again where it went
    assert folders[:4] == [str(repo), "a", "b", "c"]
    assert len(folders) <= 4 + 2 * 5
    assert len(work_tree._folders) == 3
    held = list(work_tree._folders.values())
    work_tree.close()
    assert work_tree._folders == {}
    for fd in held:
        with pytest.raises(OSError):
            os.fstat(fd)
    assert work_tree.blob(listing[0]) == texts[listing[0].path].encode()
    work_tree.close()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_work_tree_s_links_and_odd_files_are_not_read(tmp_path: Path) -> None:
    """No symbolic link is followed, a file's or a folder's, even to the blob's very
    bytes outside the repository; a FIFO or a folder where a file was is never opened
    to wait on: all of them are read from git."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    text = "raise ValueError('x')\n"
    for name in ("a.py", "b.py", "c.py", "sub/d.py"):
        write(repo, name, text)
    sha = commit_all(repo, "files")
    listing = list(list_files(_git(repo), sha, Filters()))
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "a.py").write_text(text)
    (outside / "sub" / "d.py").write_text(text)
    (repo / "a.py").unlink()
    (repo / "a.py").symlink_to(outside / "a.py")
    (repo / "b.py").unlink()
    os.mkfifo(repo / "b.py")
    (repo / "c.py").unlink()
    (repo / "c.py").mkdir()
    (repo / "sub" / "d.py").unlink()
    (repo / "sub").rmdir()
    (repo / "sub").symlink_to(outside / "sub")
    work_tree = files.WorkTree(str(repo))
    assert [work_tree.blob(entry) for entry in listing] == [None] * 4
    read = [f.data for f in files.read_files(_git(repo), listing, work_tree)]
    assert read == [text.encode()] * 4


def test_a_listing_begun_ahead_of_options_refused_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing begins as soon as the commit is known, before the options are
    settled: a scan refused for a bad option (or an unreadable setting) ends it."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, "a.py", "x = 1\n")
    commit_all(repo, "one")
    begun: list[files.Ahead] = []
    real = files.Ahead.__init__

    def noted(self: files.Ahead, *args: Any) -> None:
        real(self, *args)
        begun.append(self)

    monkeypatch.setattr(files.Ahead, "__init__", noted)
    with pytest.raises(InputError, match="context must be 0 or more lines"):
        errscan.scan(f"{repo}@HEAD", cache_dir=tmp_path / "cache", context=-1)
    with pytest.raises(InputError, match="unknown kind 'boom'"):
        errscan.scan(f"{repo}@HEAD", cache_dir=tmp_path / "cache", kinds=["boom"])
    assert len(begun) == 2
    for ahead in begun:
        assert ahead.output.closed and ahead.errors.closed and ahead._proc.poll() is not None
