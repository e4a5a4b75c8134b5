"""REPO@REV -> a resolved commit in a repository errscan can read (clone cache for remotes)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import git

from errscan.errors import InputError

# GitHub owners are letters, digits and inner hyphens; names may hold dots and underscores too.
_GITHUB_SHORT = re.compile(
    r"(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/(?P<name>[A-Za-z0-9_.-]+?)(?:\.git)?"
)
_GITHUB_URL = re.compile(
    r"(?:https?://(?:[^@/]*@)?github\.com/|git@github\.com:|ssh://git@github\.com/|git://github\.com/)"
    r"(?P<owner>[A-Za-z0-9_.-]+)/(?P<name>[A-Za-z0-9_.-]+?)(?:\.git)?/?"
)
_SCP_LIKE = re.compile(r"[A-Za-z0-9_.+-]+@[A-Za-z0-9_.-]+:")
_HEX = re.compile(r"[0-9a-fA-F]{4,40}")

# Settings every git command of errscan runs with, whatever the user's or the repository's
# configuration: no prompt, no transport that runs commands, no hang on a stalled server.
_GIT_CONFIG = {
    "protocol.ext.allow": "never",
    "http.lowSpeedLimit": "1000",
    "http.lowSpeedTime": "60",
    "core.fsmonitor": "false",
}


@dataclass(frozen=True)
class Target:
    """REPO@REV as the user wrote it; rev is None where no `@REV` was given."""

    repo: str
    rev: str | None


@dataclass(frozen=True)
class Commit:
    """A commit errscan can read: where its objects are and how to name and link it."""

    git_dir: str
    sha: str
    repo: str
    web: str | None  # https://github.com/OWNER/NAME for pinned links, else None

    def url(self, path: str, line: int) -> str | None:
        if self.web is None:
            return None
        return f"{self.web}/blob/{self.sha}/{quote(path)}#L{line}"


def parse_target(text: str) -> Target:
    """Split REPO@REV at the last `@` that is not part of the repository's address."""
    if not text.strip():
        raise InputError("empty repository: expected REPO@REV")
    repo, at, rev = text.rpartition("@")
    if not at or _at_is_address(repo, rev):
        return Target(text, None)
    if not repo:
        raise InputError(f"empty repository in {text!r}: expected REPO@REV")
    if not rev.strip():
        raise InputError(f"empty revision in {text!r}: expected REPO@REV")
    if rev.startswith("-"):
        raise InputError(f"invalid revision {rev!r}")
    return Target(repo, rev)


def _at_is_address(repo: str, rev: str) -> bool:
    """`git@host:o/n` and `https://user@host/x` carry an `@` that is no revision."""
    if ":" in rev:
        return True  # no git ref or sha holds a colon; `host:path` does
    scheme, sep, rest = repo.partition("://")
    return bool(sep) and "/" not in rest and bool(scheme)


def display_name(repo: str) -> tuple[str, str | None]:
    """The repository as records name it (credentials stripped), and its GitHub web URL."""
    match = _GITHUB_URL.fullmatch(repo) or _GITHUB_SHORT.fullmatch(repo)
    if match:
        owner, name = match["owner"], match["name"]
        return f"{owner}/{name}", f"https://github.com/{owner}/{name}"
    if "://" in repo:
        parts = urlsplit(repo)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), None
    return repo, None


def resolve(target: Target, cache_dir: Path, name: str | None = None) -> Commit:
    """The commit `target` names, fetched into the clone cache first if it is remote."""
    if target.repo.startswith("-"):
        raise InputError(f"invalid repository {target.repo!r}")
    local = _local_path(target.repo)
    if local is not None:
        repo = _open_local(local)
        sha = _rev_parse(repo, target.rev or "HEAD")
        if sha is None:
            raise InputError(f"unknown revision {target.rev or 'HEAD'!r} in {target.repo}")
        shown, web = (target.repo, None) if name is None else display_name(name)
        return Commit(str(repo.git_dir), sha, shown, web)
    url = _remote_url(target.repo)
    if target.rev is None:
        raise InputError(f"a remote repository needs a revision: {target.repo}@REV")
    git_dir = cache_dir / "repos" / _cache_name(url)
    with _locked(git_dir):
        repo = _open_cache(git_dir)
        sha = _fetch(repo, url, target.rev)
    shown, web = display_name(name or target.repo)
    return Commit(str(git_dir), sha, shown, web)


def _local_path(repo: str) -> Path | None:
    path = Path(repo).expanduser()
    if path.exists():
        return path
    if "://" in repo or _SCP_LIKE.match(repo) or _GITHUB_SHORT.fullmatch(repo):
        return None
    raise InputError(f"path not found: {repo}")


def _remote_url(repo: str) -> str:
    match = _GITHUB_SHORT.fullmatch(repo)
    if match and match["name"] not in (".", ".."):
        return f"https://github.com/{match['owner']}/{match['name']}.git"
    return repo


def _git_env() -> dict[str, str]:
    env = {"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never"}
    env.setdefault("GIT_SSH_COMMAND", os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"))
    env["GIT_CONFIG_COUNT"] = str(len(_GIT_CONFIG))
    for i, (key, value) in enumerate(_GIT_CONFIG.items()):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def open_repo(git_dir: str) -> git.Repo:
    """A GitPython handle whose commands never prompt; for stages after this one."""
    repo = git.Repo(git_dir)
    repo.git.update_environment(**_git_env())
    return repo


def _open_local(path: Path) -> git.Repo:
    try:
        repo = git.Repo(path, search_parent_directories=True)
    except git.NoSuchPathError as exc:
        raise InputError(f"path not found: {path}") from exc
    except git.InvalidGitRepositoryError as exc:
        raise InputError(f"not a git repository: {path}") from exc
    repo.git.update_environment(**_git_env())
    return repo


def _rev_parse(repo: git.Repo, rev: str) -> str | None:
    try:
        out: str = repo.git.rev_parse(
            "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
        )
    except git.GitCommandError:
        return None
    return out.strip() or None


def _cache_name(url: str) -> str:
    tail = re.sub(r"[^A-Za-z0-9_.-]+", "-", url.rstrip("/").rsplit("/", 1)[-1])[:40]
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return f"{tail.removesuffix('.git')}-{digest}.git"


@contextlib.contextmanager
def _locked(git_dir: Path) -> Iterator[None]:
    """One errscan process at a time fetches into a cached clone."""
    try:
        git_dir.parent.mkdir(parents=True, exist_ok=True)
        lock = open(f"{git_dir}.lock", "a")  # noqa: SIM115 - held for the with-block
    except OSError as exc:
        raise InputError(f"cache dir not writable: {git_dir.parent}: {exc.strerror}") from exc
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _open_cache(git_dir: Path) -> git.Repo:
    try:
        if (git_dir / "HEAD").exists():
            repo = git.Repo(git_dir)
        else:
            repo = git.Repo.init(git_dir, bare=True)
    except (OSError, git.GitCommandError, git.InvalidGitRepositoryError) as exc:
        raise InputError(f"cannot create cached clone {git_dir}: {exc}") from exc
    repo.git.update_environment(**_git_env())
    return repo


def _fetch(repo: git.Repo, url: str, rev: str) -> str:
    """The sha `rev` names at `url`, fetched with depth 1 unless already present."""
    if _HEX.fullmatch(rev):
        sha = _rev_parse(repo, rev)
        if sha is not None:
            return sha
        if len(rev) == 40:
            sha = _try_fetch(repo, url, rev.lower())
            if sha is not None:
                return sha
    refs = _ls_remote(repo, url, rev)
    if refs:
        sha = _rev_parse(repo, refs[0]) or _try_fetch(repo, url, refs[0])
        if sha is not None:
            return sha
    if _HEX.fullmatch(rev):
        # a short sha: the server cannot be asked for it, so fetch every branch and tag
        _run_fetch(repo, url, "+refs/heads/*:refs/errscan/heads/*", "+refs/tags/*:refs/tags/*")
        sha = _rev_parse(repo, rev)
        if sha is not None:
            return sha
    raise InputError(f"unknown revision {rev!r} in {url}")


def _ls_remote(repo: git.Repo, url: str, rev: str) -> list[str]:
    """Shas of the branch or tag `rev` at `url`, branches first."""
    out = _network(repo, "ls_remote", "--", url, rev)
    found: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition("\t")
        found[ref] = sha
    order = [rev, f"refs/heads/{rev}", f"refs/tags/{rev}"]
    return [found[ref] for ref in order if ref in found]


def _try_fetch(repo: git.Repo, url: str, sha: str) -> str | None:
    """The commit `sha` names (a tag peeled), fetched by sha with depth 1, if the server allows."""
    try:
        _run_fetch(repo, url, f"+{sha}:refs/errscan/objects/{sha}", depth=True)
    except InputError:
        return None
    return _rev_parse(repo, sha)


def _run_fetch(repo: git.Repo, url: str, *refspecs: str, depth: bool = False) -> None:
    options = ["--depth", "1"] if depth else []
    if not depth and repo.git.rev_parse("--is-shallow-repository").strip() == "true":
        options.append("--unshallow")
    _network(repo, "fetch", "--quiet", "--no-tags", *options, "--", url, *refspecs)


def _network(repo: git.Repo, command: str, *args: str) -> str:
    try:
        out: str = getattr(repo.git, command)(*args, kill_after_timeout=600)
    except git.GitCommandError as exc:
        raise InputError(f"git {command.replace('_', '-')} failed: {_reason(exc)}") from exc
    return out


def _reason(exc: git.GitCommandError) -> str:
    lines = [line.strip() for line in str(exc.stderr).splitlines() if line.strip()]
    lines = [line.removeprefix("stderr: ").strip("'").strip() for line in lines]
    text = " ".join(line for line in lines if line)
    return text or f"exit code {exc.status}"


def commit_date(commit: Commit) -> str | None:
    """The commit's committer date in ISO 8601, or None where git cannot say."""
    try:
        date: str = open_repo(commit.git_dir).git.show("-s", "--format=%cI", commit.sha)
    except (git.GitCommandError, git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    return date.strip() or None
