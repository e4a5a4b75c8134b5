"""REPO@REV -> a resolved commit in a repository errscan can read (clone cache for remotes)."""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from errscan.analyzer.gitcmd import (
    Git,
    GitError,
    discover,
    discover_commit,
    discover_commit_and_origin,
    rev_parse,
)
from errscan.errors import InputError
from errscan.frozen import frozen

# GitHub owners are letters, digits and inner hyphens; names may hold dots and underscores too.
_GITHUB_SHORT = re.compile(
    r"(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/(?P<name>[A-Za-z0-9_.-]+?)(?:\.git)?"
)
_GITHUB_URL = re.compile(
    r"(?:https?://(?:[^@/]*@)?github\.com/|git@github\.com:|ssh://git@github\.com/|git://github\.com/)"
    r"(?P<owner>[A-Za-z0-9_.-]+)/(?P<name>[A-Za-z0-9_.-]+?)(?:\.git)?/?"
)
_SCP_LIKE = re.compile(r"[A-Za-z0-9_.+-]+@[A-Za-z0-9_.-]+:")
HEX = re.compile(r"[0-9a-fA-F]{4,40}")


@frozen
class Target:
    """REPO@REV as the user wrote it; rev is None where no `@REV` was given."""

    repo: str
    rev: str | None


@frozen
class Commit:
    """A commit errscan can read: where its objects are and how to name and link it."""

    git_dir: str
    sha: str
    repo: str
    web: str | None  # https://github.com/OWNER/NAME for pinned links, else None
    scanned_in_place: bool = False  # a local repository, whose configuration is untrusted
    # of a local repository, what resolving it read, for errscan.launch to check again:
    # the path and revision given, and its origin remote as git gave it (None: not read,
    # a name was given)
    path: str | None = None
    rev: str | None = None
    origin: str | None = None

    def git(self) -> Git:
        """Git commands on the repository holding the commit."""
        return Git(self.git_dir, scanned=self.scanned_in_place)

    def work_tree(self) -> str | None:
        """The folder a local repository's files are checked out in, where it has one
        (files there are read only where they are the commit's blobs: files.WorkTree)."""
        if not self.scanned_in_place:
            return None
        git_dir = Path(self.git_dir)
        if git_dir.name == ".git":
            return str(git_dir.parent)
        found = _work_tree(self.git())
        return str(found) if found is not None else None

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


_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s'\"]*@")
_QUERY = re.compile(r"(?P<url>[A-Za-z][A-Za-z0-9+.-]*://[^\s?#'\"]*)[?#][^\s'\"]*")


def redact(text: str) -> str:
    """`text` with every URL's user, password, query and fragment taken out: what a
    report, a record or an error line may show of an address."""
    return _QUERY.sub(r"\g<url>", _CREDENTIALS.sub(r"\g<scheme>", text))


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
        return urlunsplit((parts.scheme, host, parts.path, "", "")), None
    return repo, None


# git's "<transport>::<address>" runs a remote helper (ext:: runs any command)
_TRANSPORT = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")


def check_address(repo: str) -> None:
    """InputError for a repository that git would read as an option or a remote helper."""
    if repo.startswith("-"):
        raise InputError(f"invalid repository {redact(repo)!r}")
    if _TRANSPORT.match(repo):
        raise InputError(f"remote helpers (transport::address) are not allowed: {redact(repo)!r}")


def resolve(target: Target, cache_dir: Path, name: str | None = None) -> Commit:
    """The commit `target` names, fetched into the clone cache first if it is remote."""
    check_address(target.repo)
    local = _local_path(target.repo)
    if local is not None:
        rev = target.rev or "HEAD"
        # one git command where both are found (and another at once for the origin
        # remote, which names the repository unless `name` does); else asked one at a
        # time, to say which
        found, origin = None, None
        if local.is_dir() and name:
            found = discover_commit(str(local), rev)
        elif local.is_dir():
            found, origin = discover_commit_and_origin(str(local), rev)
        if found is None:
            _open_local(local)  # not a repository: says so
            raise InputError(f"unknown revision {rev!r} in {target.repo}")
        repo, sha = Git(found[0], scanned=True), found[1]
        shown, web = display_name(name or _local_name(repo, origin or ""))
        return Commit(repo.git_dir, sha, shown, web, True, str(local), rev, origin)
    url = _remote_url(target.repo)
    if target.rev is None:
        raise InputError(f"a remote repository needs a revision: {redact(target.repo)}@REV")
    git_dir = cache_dir / "repos" / _cache_name(url)
    with _locked(git_dir):
        repo = _open_cache(git_dir)
        sha = _fetch(repo, url, target.rev)
    shown, web = display_name(name or target.repo)
    return Commit(str(git_dir), sha, shown, web)


def _local_name(repo: Git, origin: str) -> str:
    """What names a local repository whatever the path it was given by (`.`, a relative
    or an absolute path, a subfolder): its `origin` remote where it has one (a GitHub
    remote gives OWNER/NAME and pinned links), else its top folder, the home folder
    written `~`."""
    if origin and is_path_remote(origin):
        origin = str((Path(repo.git_dir) / origin).resolve())  # a path, maybe relative
    if origin:
        return _home_relative(origin)
    top = Path(repo.git_dir)
    if top.name == ".git":
        top = top.parent
    else:
        found = _work_tree(repo)
        top = found if found is not None else top
    return _home_relative(str(top))


def is_path_remote(origin: str) -> bool:
    """Whether a remote's address is a folder (relative to the git directory or not)
    rather than a URL (`scheme://...`, `user@host:path`)."""
    return "://" not in origin and not _SCP_LIKE.match(origin)


def _work_tree(repo: Git) -> Path | None:
    """The top folder of a linked work tree (git worktree add), None for a bare one."""
    common = Path(repo.git_dir)
    gitfile = common / "gitdir"  # .git/worktrees/NAME/gitdir names the work tree's .git
    if gitfile.is_file():
        with contextlib.suppress(OSError, ValueError):
            return Path(gitfile.read_text(encoding="utf-8").strip()).parent
    return None


def _home_relative(path: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def is_local(repo: str) -> bool:
    """Whether `repo` names a repository on this machine rather than a remote one."""
    try:
        return _local_path(repo) is not None
    except InputError:
        return False


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


def _open_local(path: Path) -> Git:
    if not path.is_dir():
        raise InputError(f"not a git repository: {path}")
    git_dir = discover(str(path))
    if git_dir is None:
        raise InputError(f"not a git repository: {path}")
    return Git(git_dir, scanned=True)


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


def _open_cache(git_dir: Path) -> Git:
    repo = Git(str(git_dir), scanned=False)
    if not (git_dir / "HEAD").exists():
        try:
            repo.run("init", "--quiet", "--bare")
        except GitError as exc:
            raise InputError(f"cannot create cached clone {git_dir}: {exc.reason}") from exc
    return repo


def _fetch(repo: Git, url: str, rev: str) -> str:
    """The sha `rev` names at `url`, fetched with depth 1 unless already present."""
    if HEX.fullmatch(rev):
        sha = rev_parse(repo, rev)
        if sha is not None:
            return sha
        if len(rev) == 40:
            sha = _try_fetch(repo, url, rev.lower())
            if sha is not None:
                return sha
    refs = _ls_remote(repo, url, rev)
    if refs:
        sha = rev_parse(repo, refs[0]) or _try_fetch(repo, url, refs[0])
        if sha is not None:
            return sha
    if HEX.fullmatch(rev):
        # a short sha: the server cannot be asked for it, so fetch every branch and tag
        _run_fetch(repo, url, "+refs/heads/*:refs/errscan/heads/*", "+refs/tags/*:refs/tags/*")
        sha = rev_parse(repo, rev)
        if sha is not None:
            return sha
    raise InputError(f"unknown revision {rev!r} in {redact(url)}")


def _ls_remote(repo: Git, url: str, rev: str) -> list[str]:
    """Shas of the branch or tag `rev` at `url`, branches first."""
    out = _network(repo, "ls-remote", "--", url, rev)
    found: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition("\t")
        found[ref] = sha
    order = [rev, f"refs/heads/{rev}", f"refs/tags/{rev}"]
    return [found[ref] for ref in order if ref in found]


def _try_fetch(repo: Git, url: str, sha: str) -> str | None:
    """The commit `sha` names (a tag peeled), fetched by sha with depth 1, if the server allows."""
    try:
        _run_fetch(repo, url, f"+{sha}:refs/errscan/objects/{sha}", depth=True)
    except InputError:
        return None
    return rev_parse(repo, sha)


def _run_fetch(repo: Git, url: str, *refspecs: str, depth: bool = False) -> None:
    options = ["--depth", "1"] if depth else []
    if not depth and repo.run("rev-parse", "--is-shallow-repository").strip() == "true":
        options.append("--unshallow")
    _network(repo, "fetch", "--quiet", "--no-tags", *options, "--", url, *refspecs)


def _network(repo: Git, command: str, *args: str) -> str:
    try:
        return repo.run(command, *args, timeout=600)
    except GitError as exc:
        raise InputError(f"git {command} failed: {redact(exc.reason)}") from exc


def commit_date(commit: Commit) -> str | None:
    """The commit's committer date in ISO 8601 (as `%cI` prints it), or None where git
    cannot say. Read with `cat-file`, plumbing that verifies no signature."""
    try:
        raw = commit.git().run("cat-file", "commit", commit.sha)
    except (GitError, InputError):
        return None
    return _committer_date(raw)


def _committer_date(raw: str) -> str | None:
    """The date of the `committer` header of a raw commit object."""
    for line in raw.split("\n"):
        if not line:
            break  # the headers end at the first empty line
        if line.startswith("committer "):
            match = re.search(r"> (\d+) ([+-])(\d\d)(\d\d)$", line)
            if match is None:
                return None
            seconds, sign, hours, minutes = match.groups()
            offset = datetime.timedelta(hours=int(hours), minutes=int(minutes))
            zone = datetime.timezone(-offset if sign == "-" else offset)
            try:
                return datetime.datetime.fromtimestamp(int(seconds), zone).isoformat()
            except (OverflowError, ValueError, OSError):
                return None
    return None
