"""A scanned repository's configuration runs nothing, fetches nothing and writes nothing.

The repositories here set every setting that could make git run a program, each
pointing at a script that leaves a marker file: no errscan command may leave one.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from errscan.analyzer import gitcmd, repo
from tests.support import commit_all, git, write

_RUNS_PROGRAM = {  # the setting, and the value (after the marker script) it takes
    "core.fsmonitor": "",
    "core.sshCommand": "",
    "core.pager": "",
    "core.askPass": "",
    "core.editor": "",
    "core.alternateRefsCommand": "",
    "gpg.program": "",
    "gpg.openpgp.program": "",
    "gpg.ssh.program": "",
    "gpg.x509.program": "",
    "diff.external": "",
    "uploadpack.packObjectsHook": "",
    "credential.helper": "!",
    "remote.origin.uploadpack": "",
    "remote.origin.receivepack": "",
}
_HOOKS = ("pre-commit", "post-checkout", "reference-transaction", "post-index-change", "pre-push")


def _marker_script(bin_dir: Path, name: str) -> Path:
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\ntouch "{bin_dir.parent / "ran"}/{name}"\nexit 1\n')
    script.chmod(0o755)
    return script


def _booby_trap(git_dir: Path, tmp_path: Path) -> Path:
    """Set every dangerous setting of the repository at `git_dir`: the folder of markers."""
    bin_dir = tmp_path / "bin"
    ran = tmp_path / "ran"
    bin_dir.mkdir(exist_ok=True)
    ran.mkdir(exist_ok=True)
    hooks = tmp_path / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in _HOOKS:
        _marker_script(hooks, f"hook-{hook}").rename(hooks / hook)
    included = tmp_path / "included.cfg"
    script = _marker_script(bin_dir, "included-pager")
    included.write_text(f"[core]\n\tpager = {script}\n[log]\n\tshowSignature = true\n")

    def config(*args: str) -> None:
        subprocess.run(["git", f"--git-dir={git_dir}", "config", *args], check=True)

    for key, prefix in _RUNS_PROGRAM.items():
        config(key, prefix + str(_marker_script(bin_dir, key.replace(".", "-"))))
    config("core.hooksPath", str(hooks))
    config("log.showSignature", "true")
    config("include.path", str(included))
    return ran


def _signed_commit(work: Path) -> str:
    """A commit on HEAD with a (forged) gpgsig header: anyone can write one."""
    tree = git(work, "rev-parse", "HEAD^{tree}")
    parent = git(work, "rev-parse", "HEAD")
    body = (
        f"tree {tree}\nparent {parent}\nauthor A <a@example.invalid> 1700000000 +0000\n"
        "committer A <a@example.invalid> 1700000000 +0130\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
        " -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    sha = subprocess.run(
        ["git", "-C", str(work), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=body, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    git(work, "update-ref", "HEAD", sha)
    return sha


def _digest_tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _errscan(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "errscan", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture
def trapped(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """A source repository with a signed head; a booby-trapped work tree cloned from it,
    and a booby-trapped partial clone lacking its blobs. Gives both clones, the marker
    folder and the signed commit."""
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    write(src, "pkg/a.py", "def f(x):\n    raise ValueError(f'bad {x}')\n")
    write(src, "pkg/b.py", "raise KeyError('b')\n")
    commit_all(src, "one")
    signed = _signed_commit(src)
    git(src, "config", "uploadpack.allowFilter", "true")
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", f"file://{src}", str(work))
    partial = tmp_path / "partial.git"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:none", f"file://{src}", str(partial))
    ran = _booby_trap(work / ".git", tmp_path)
    _booby_trap(partial, tmp_path)
    return work, partial, ran, signed


def test_no_command_of_a_scanned_repository_runs_nothing_fetched_nothing_written(
    trapped: tuple[Path, Path, Path, str], tmp_path: Path
) -> None:
    work, partial, ran, signed = trapped
    before = {p: _digest_tree(p) for p in (work / ".git", partial)}
    db = tmp_path / "store.db"
    cache = tmp_path / "cache"
    config = tmp_path / "track.toml"
    config.write_text(f'[[repos]]\nrepo = "{work}"\n[[repos]]\nrepo = "{partial}"\n')
    runs = [
        ("extract", f"{work}@HEAD", "-q", "--db", str(db), "-o", os.devnull),
        ("extract", f"{partial}@{signed}", "-q", "--db", str(db), "-o", os.devnull),
        ("extract", ".", "-q", "--include-tests", "-o", os.devnull),
        # the same again: answered by the warm rerun's check (errscan.launch), which
        # asks git of the work tree's configuration too
        ("extract", ".", "-q", "--include-tests", "-o", os.devnull),
        ("export", f"{work}@{signed}", "--db", str(db), "--format", "sarif", "-o", os.devnull),
        ("diff", f"{work}@HEAD~1", "HEAD", "--db", str(db)),
        ("track", str(config), "--db", str(db), "--report-dir", str(tmp_path / "report")),
        # a local repository given as a URL is fetched from: git's upload-pack runs there
        ("extract", f"file://{partial}@{signed}", "-q", "-o", os.devnull),
        ("extract", f"file://{work}@{signed}", "-q", "-o", os.devnull),
    ]
    for args in runs:
        done = _errscan(work, *args, *(["--cache-dir", str(cache)] if args[0] != "diff" else []))
        assert done.returncode in (0, 2), (args, done.stderr)
        assert sorted(os.listdir(ran)) == [], args
    assert {p: _digest_tree(p) for p in before} == before
    scans = _errscan(work, "scans", "--db", str(db)).stdout
    assert "2023-11-14T23:43:20+01:30" in scans  # the signed commit's date, read as plumbing


def test_a_partial_clone_s_missing_blobs_are_file_errors(
    trapped: tuple[Path, Path, Path, str], tmp_path: Path
) -> None:
    _, partial, ran, _ = trapped
    done = _errscan(tmp_path, "extract", str(partial), "--cache-dir", str(tmp_path / "c"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        '{"file": "pkg/a.py", "reason": "the blob is not in the repository (a partial clone?);'
        ' not fetched", "type": "file_error"}',
        '{"file": "pkg/b.py", "reason": "the blob is not in the repository (a partial clone?);'
        ' not fetched", "type": "file_error"}',
    ]
    assert os.listdir(ran) == []


def test_a_bare_repository_without_a_config_file_is_read(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q")
    write(src, "m.py", "raise ValueError('bare')\n")
    sha = commit_all(src, "one")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(bare))
    (bare / "config").unlink()
    commit = repo.resolve(repo.Target(str(bare), None), tmp_path / "cache")
    assert commit.sha == sha and Path(commit.git_dir) == bare


def test_the_environment_asks_no_program_and_never_prompts() -> None:
    env = gitcmd.environment(
        scanned=True,
        base={
            "GIT_ASKPASS": "/usr/bin/ksshaskpass",
            "SSH_ASKPASS": "/usr/bin/ksshaskpass",
            "GIT_SSH_COMMAND": "ssh -i ~/.ssh/deploy",
            "GIT_DIR": "/elsewhere",
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "core.fsmonitor",
            "GIT_CONFIG_VALUE_0": "/bin/evil",
            "HOME": "/home/u",
        },
    )
    assert env["GIT_ASKPASS"] == "" and "SSH_ASKPASS" not in env
    assert env["GIT_SSH_COMMAND"] == "ssh -i ~/.ssh/deploy -o BatchMode=yes"
    assert "GIT_DIR" not in env and env["HOME"] == "/home/u"
    pins = {
        env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"]
        for i in range(int(env["GIT_CONFIG_COUNT"]))
    }
    assert pins["core.fsmonitor"] == "false" and pins["credential.helper"] == ""
    assert env["GIT_NO_LAZY_FETCH"] == "1" and env["GIT_TERMINAL_PROMPT"] == "0"
    assert gitcmd.environment(scanned=False, base={})["GIT_SSH_COMMAND"] == "ssh -o BatchMode=yes"


def test_one_command_finds_the_git_directory_and_the_commit(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "a.py", "raise ValueError('a')\n")
    commit_all(root, "one")
    head = git(root, "rev-parse", "HEAD").strip()
    inside = root / "sub"
    inside.mkdir()
    found = gitcmd.discover_commit(str(inside), "main")
    assert found == (gitcmd.discover(str(inside)), head)
    assert found is not None and found[0] == str((root / ".git").resolve())
    assert gitcmd.discover_commit(str(root), "no-such-branch") is None
    assert gitcmd.discover_commit(str(root), "HEAD:a.py") is None  # a blob, not a commit
    assert gitcmd.discover_commit(str(tmp_path), "HEAD") is None  # no repository


def test_the_commit_and_the_origin_remote_asked_at_once_are_as_asked_in_turn(
    tmp_path: Path,
) -> None:
    """discover_commit_and_origin gives what discover_commit, then origin_url of the
    repository found, give: from the folder itself or one inside it, with or without an
    origin remote; and no commit where there is no repository or no such revision."""
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "a.py", "raise ValueError('a')\n")
    commit_all(root, "one")
    inside = root / "sub"
    inside.mkdir()

    for origin in (None, "https://github.com/o/n.git"):
        if origin is not None:
            git(root, "remote", "add", "origin", origin)
        for path, rev in ((root, "HEAD"), (inside, "main")):
            found, remote = gitcmd.discover_commit_and_origin(str(path), rev)
            assert found is not None and found == gitcmd.discover_commit(str(path), rev)
            assert remote == gitcmd.origin_url(gitcmd.Git(found[0], scanned=True))
            assert remote == (origin or "")
        for path, rev in ((root, "nope"), (tmp_path, "HEAD")):  # the origin is not asked of
            assert gitcmd.discover_commit_and_origin(str(path), rev)[0] is None
