"""REPO@REV parsing, naming, and resolution for every repository and revision form."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import errscan
from errscan.analyzer.repo import Target, display_name, parse_target
from tests.support import commit_all, git, write


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("owner/name@abc1234", Target("owner/name", "abc1234")),
        (".@HEAD", Target(".", "HEAD")),
        (".", Target(".", None)),
        ("/tmp/x@v1.0", Target("/tmp/x", "v1.0")),
        ("a@b@main", Target("a@b", "main")),
        ("https://github.com/o/n.git@feature/x", Target("https://github.com/o/n.git", "feature/x")),
        ("git@github.com:o/n.git", Target("git@github.com:o/n.git", None)),
        ("git@github.com:o/n.git@v2", Target("git@github.com:o/n.git", "v2")),
        ("https://user@host.example/x.git", Target("https://user@host.example/x.git", None)),
        ("file:///srv/repo@0123abcd", Target("file:///srv/repo", "0123abcd")),
    ],
)
def test_parse_target(text: str, target: Target) -> None:
    assert parse_target(text) == target


@pytest.mark.parametrize("text", ["", "   ", "repo@", "repo@  ", "@main", "repo@-x"])
def test_parse_target_rejects(text: str) -> None:
    with pytest.raises(errscan.InputError):
        parse_target(text)


@pytest.mark.parametrize(
    ("repo", "name", "web"),
    [
        ("owner/name", "owner/name", "https://github.com/owner/name"),
        ("https://github.com/o/n.git", "o/n", "https://github.com/o/n"),
        ("https://tok:x-secret@github.com/o/n", "o/n", "https://github.com/o/n"),
        ("git@github.com:o/n.git", "o/n", "https://github.com/o/n"),
        ("ssh://git@github.com/o/n", "o/n", "https://github.com/o/n"),
        ("https://user:pw@gitlab.example/g/p.git", "https://gitlab.example/g/p.git", None),
        ("file:///srv/repo", "file:///srv/repo", None),
    ],
)
def test_display_name_strips_credentials(repo: str, name: str, web: str | None) -> None:
    assert display_name(repo) == (name, web)


def shas(result: errscan.ScanResult) -> set[str]:
    return {record.commit for record in result.records}


def test_every_rev_form_on_a_work_tree(basic_repo: Path) -> None:
    first = git(basic_repo, "rev-parse", "HEAD")
    git(basic_repo, "tag", "light")
    git(basic_repo, "tag", "-a", "v1.0", "-m", "annotated")
    git(basic_repo, "checkout", "-q", "-b", "feature")
    write(basic_repo, "pkg/extra.py", 'raise ValueError("on feature")\n')
    second = commit_all(basic_repo, "feature work")
    git(basic_repo, "checkout", "-q", "main")
    for rev, sha in [
        (first, first),
        (first[:7], first),
        ("light", first),
        ("v1.0", first),
        ("main", first),
        ("feature", second),
        ("HEAD", first),
        ("HEAD~0", first),
    ]:
        result = errscan.extract(f"{basic_repo}@{rev}")
        assert result.commit == sha, rev
    assert errscan.extract(str(basic_repo)).commit == first  # no @REV: HEAD


def test_uncommitted_changes_are_not_scanned_and_nothing_is_touched(basic_repo: Path) -> None:
    write(basic_repo, "pkg/dirty.py", 'raise ValueError("uncommitted")\n')
    (basic_repo / "pkg" / "engine.py").write_text("# emptied, not committed\n")
    git(basic_repo, "add", "pkg/dirty.py")
    status = git(basic_repo, "status", "--porcelain")
    head = git(basic_repo, "rev-parse", "HEAD")
    index = (basic_repo / ".git" / "index").read_bytes()
    result = errscan.extract(f"{basic_repo}@HEAD")
    assert "pkg/dirty.py" not in {r.file for r in result.records}
    assert "pkg/engine.py" in {r.file for r in result.records}
    assert git(basic_repo, "status", "--porcelain") == status
    assert git(basic_repo, "rev-parse", "HEAD") == head
    assert (basic_repo / ".git" / "index").read_bytes() == index


def test_bare_repository(basic_repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(basic_repo), str(bare))
    result = errscan.extract(f"{bare}@main")
    assert result.commit == git(basic_repo, "rev-parse", "main")
    assert result.repo == str(basic_repo)  # named by its origin remote
    assert result.stats.sites > 0


def test_file_url_is_cloned_into_the_cache_once(basic_repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "my-cache"
    url = f"file://{basic_repo}"
    sha = git(basic_repo, "rev-parse", "HEAD")
    by_branch = errscan.extract(f"{url}@main", cache_dir=cache)
    assert by_branch.commit == sha
    assert by_branch.repo == url
    clones = list((cache / "repos").glob("*.git"))
    assert len(clones) == 1
    assert git(clones[0], "rev-parse", "--is-shallow-repository") == "true"
    # with the source gone, the cached commit is still there: no fetch for a present sha
    moved = tmp_path / "moved"
    shutil.move(str(basic_repo), moved)
    again = errscan.extract(f"{url}@{sha}", cache_dir=cache)
    assert again.records == by_branch.records
    again_short = errscan.extract(f"{url}@{sha[:8]}", cache_dir=cache)
    assert again_short.commit == sha


def test_remote_revisions_fetched_on_demand(basic_repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache2"
    url = f"file://{basic_repo}"
    first = git(basic_repo, "rev-parse", "HEAD")
    git(basic_repo, "tag", "-a", "v1", "-m", "v1")
    write(basic_repo, "pkg/extra.py", 'raise ValueError("second")\n')
    second = commit_all(basic_repo, "second")
    assert errscan.extract(f"{url}@{second}", cache_dir=cache).commit == second
    assert errscan.extract(f"{url}@v1", cache_dir=cache).commit == first
    write(basic_repo, "pkg/third.py", 'raise ValueError("third")\n')
    third = commit_all(basic_repo, "third")
    # a short sha the cache lacks: every branch and tag is fetched, then it is found
    assert errscan.extract(f"{url}@{third[:9]}", cache_dir=cache).commit == third


def test_cache_dir_from_environment(
    basic_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "env-cache"
    monkeypatch.setenv("ERRSCAN_CACHE_DIR", str(cache))
    errscan.extract(f"file://{basic_repo}@main")
    assert list((cache / "repos").glob("*.git"))


def test_repo_name_gives_pinned_links(basic_repo: Path) -> None:
    result = errscan.extract(f"{basic_repo}@HEAD", repo_name="acme/widgets")
    record = next(r for r in result.records if r.file == "pkg/engine.py")
    assert record.repo == "acme/widgets"
    assert record.url == (
        f"https://github.com/acme/widgets/blob/{result.commit}/pkg/engine.py#L{record.line}"
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("{tmp}/missing@HEAD", "path not found"),
        ("{tmp}/plain@HEAD", "not a git repository"),
        ("{repo}@no-such-branch", "unknown revision 'no-such-branch'"),
        ("{repo}@0000000000000000000000000000000000000000", "unknown revision"),
        ("file://{repo}", "a remote repository needs a revision"),
        ("file://{tmp}/missing@main", "git ls-remote failed"),
        ("https://127.0.0.1:9/x.git@main", "git ls-remote failed"),
    ],
)
def test_bad_input(basic_repo: Path, tmp_path: Path, target: str, message: str) -> None:
    (tmp_path / "plain").mkdir()
    text = target.format(tmp=tmp_path, repo=basic_repo)
    with pytest.raises(errscan.InputError, match=message):
        errscan.extract(text)


def test_empty_repository_has_no_head(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(errscan.InputError, match="unknown revision 'HEAD'"):
        errscan.extract(str(empty))


def test_unwritable_cache_dir(basic_repo: Path, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        blocker = tmp_path / "file-not-dir"
        blocker.write_text("")
        cache = blocker / "cache"
    else:  # pragma: no cover - CI runs as root
        cache = Path("/proc/cache")
    with pytest.raises(errscan.InputError, match="cache dir not writable"):
        errscan.extract(f"file://{basic_repo}@main", cache_dir=cache)


def test_a_local_repository_is_named_the_same_whatever_path_names_it(
    basic_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(basic_repo.parent))
    monkeypatch.chdir(basic_repo / "pkg")
    spellings = [".", "..", str(basic_repo), f"{basic_repo}/pkg", "../pkg/.."]
    results = [errscan.extract(f"{where}@main") for where in spellings]
    assert {r.repo for r in results} == {"~/basic"}
    assert len({tuple(r.id for r in result.records) for result in results}) == 1
    assert all(r.url is None for result in results for r in result.records)


def test_a_github_origin_names_the_repository_and_pins_links(basic_repo: Path) -> None:
    git(basic_repo, "remote", "add", "origin", "git@github.com:acme/engine.git")
    result = errscan.extract(f"{basic_repo}@main")
    sha = git(basic_repo, "rev-parse", "main")
    assert {r.repo for r in result.records} == {"acme/engine"}
    record = result.records[0]
    assert record.url == f"https://github.com/acme/engine/blob/{sha}/{record.file}#L{record.line}"
    assert errscan.extract(f"{basic_repo}@main", repo_name="other/name").records[0].repo == (
        "other/name"
    )


def test_a_local_repository_s_work_tree_is_known(basic_repo: Path, tmp_path: Path) -> None:
    """Where a local repository's files are checked out (they are read from there where
    they are the commit's blobs); a bare one, or a remote one in the clone cache, has
    none."""
    from errscan.analyzer import repo

    cache = tmp_path / "cache"
    assert repo.resolve(Target(str(basic_repo / "pkg"), None), cache).work_tree() == str(basic_repo)
    linked = tmp_path / "linked"
    git(basic_repo, "worktree", "add", "-q", str(linked))
    assert repo.resolve(Target(str(linked), None), cache).work_tree() == str(linked)
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(basic_repo), str(bare))
    assert repo.resolve(Target(str(bare), "HEAD"), cache).work_tree() is None
    remote = repo.resolve(Target(f"file://{basic_repo}", "HEAD"), cache)
    assert remote.work_tree() is None
