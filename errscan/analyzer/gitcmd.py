"""The one way errscan runs git: an explicit --git-dir, a pinned environment and configuration.

Every git command errscan runs goes through `Git.run` or `Git.popen`, so that nothing a
scanned repository's configuration says can make git run a program, prompt, fetch or
write. The commands, and what each could otherwise be made to run:

    rev-parse --absolute-git-dir   (in the path given)  core.fsmonitor, include.path
      [--verify REV^{commit}]      (a warm rerun's check: both in one)
    config --get remote.origin.url (naming it)          include.path
    rev-parse --verify REV^{commit}                     core.fsmonitor, replace refs
    ls-tree -r -z [-l] --full-tree COMMIT               replace refs, promisor remotes
    rev-list --objects --missing=print (partial clones) promisor remotes
    cat-file --batch-check, cat-file --batch            promisor remotes (lazy fetch:
                                                        remote.*.uploadpack, a pack written)
    cat-file commit SHA  (the commit's date)            nothing; `git show` would run
                                                        gpg.program (log.showSignature)
    init --bare, ls-remote, fetch  (clone cache only)   core.sshCommand, credential.helper,
                                                        core.askPass, hooks, auto gc

The clone cache's repositories are errscan's own, so only the local repositories it
scans in place have a configuration nobody vetted; the pins below hold for both.
"""

from __future__ import annotations

import os

from errscan.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not loaded at run time: a replayed rescan needs none of it
    import subprocess
    from collections.abc import Mapping, Sequence
    from typing import IO

# Configuration given on git's command line (GIT_CONFIG_COUNT) outranks every file,
# include.path and includeIf among them: the settings that could run a program, prompt,
# fetch or write, pinned to their harmless values.
_PINNED = {
    "core.fsmonitor": "false",
    "core.hooksPath": os.devnull,
    "core.pager": "cat",
    "log.showSignature": "false",
    "gpg.program": "false",
    "gpg.openpgp.program": "false",
    "gpg.x509.program": "false",
    "gpg.ssh.program": "false",
    "protocol.ext.allow": "never",
    "http.lowSpeedLimit": "1000",
    "http.lowSpeedTime": "60",
    "gc.auto": "0",
    "maintenance.auto": "false",
    "fetch.recurseSubmodules": "false",
}
# ... and for a repository scanned in place, which never talks to a server: no helper.
_PINNED_SCANNED = {"credential.helper": ""}

# Variables that would point git at other objects, another configuration or a program.
_DROPPED = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_SSH",
    "GIT_PROXY_COMMAND",
    "GIT_REPLACE_REF_BASE",
)


class GitError(Exception):
    """A git command that failed: its exit code and what it said on stderr, on one line."""

    def __init__(self, command: str, status: int, stderr: str) -> None:
        lines = (line.strip().removeprefix("fatal: ") for line in stderr.splitlines())
        self.reason = " ".join(line for line in lines if line) or f"exit code {status}"
        super().__init__(f"git {command} failed: {self.reason}")
        self.status = status


def environment(scanned: bool, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every git command: `base` (os.environ) less what could
    redirect or run something, plus the pins."""
    source = os.environ if base is None else base
    env = {
        key: value
        for key, value in source.items()
        if key not in _DROPPED and not key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    user_ssh = source.get("GIT_SSH_COMMAND", "").strip()
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GCM_INTERACTIVE="never",
        GIT_ASKPASS="",  # set and empty: git asks no program, not even SSH_ASKPASS
        SSH_ASKPASS_REQUIRE="never",
        GIT_NO_LAZY_FETCH="1",
        GIT_NO_REPLACE_OBJECTS="1",  # the commit's own blobs, never refs/replace/ stand-ins
        GIT_OPTIONAL_LOCKS="0",
        GIT_PAGER="cat",
        GIT_SSH_COMMAND=f"{user_ssh} -o BatchMode=yes" if user_ssh else "ssh -o BatchMode=yes",
    )
    pins = {**_PINNED, **(_PINNED_SCANNED if scanned else {})}
    env["GIT_CONFIG_COUNT"] = str(len(pins))
    for i, (key, value) in enumerate(pins.items()):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


class Git:
    """git commands on one repository, named by its git directory.

    `scanned`: a repository errscan reads in place (its configuration untrusted, and no
    server ever asked), as opposed to a clone in errscan's cache.
    """

    def __init__(self, git_dir: str, *, scanned: bool) -> None:
        self.git_dir = git_dir
        self.scanned = scanned
        self._env = environment(scanned)

    def _argv(self, args: tuple[str, ...]) -> list[str]:
        return ["git", "--no-pager", f"--git-dir={self.git_dir}", *args]

    def run(self, *args: str, timeout: float | None = None) -> str:
        """Standard output of `git ARGS` as text; GitError where git fails or overruns."""
        import subprocess  # here: a warm rerun's checks spawn git without it (outputs)

        try:
            done = subprocess.run(
                self._argv(args),
                env=self._env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            raise GitError(args[0], -1, f"no answer in {timeout:g} s") from exc
        except OSError as exc:
            raise InputError(f"cannot run git: {exc.strerror}") from exc
        if done.returncode != 0:
            raise GitError(args[0], done.returncode, done.stderr.decode("utf-8", "replace"))
        return done.stdout.decode("utf-8", "replace")

    def popen(
        self,
        *args: str,
        stdin: bool = False,
        stderr: IO[bytes] | None = None,
        stdout: IO[bytes] | None = None,
    ) -> subprocess.Popen[bytes]:
        """`git ARGS` running, its stdout (and stdin if asked) a pipe, or stdout to the
        file given; stderr to the file given (never a pipe, which git could fill while
        we read stdout), else discarded."""
        import subprocess

        try:
            return subprocess.Popen(
                self._argv(args),
                env=self._env,
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE if stdout is None else stdout,
                stderr=subprocess.DEVNULL if stderr is None else stderr,
            )
        except OSError as exc:
            raise InputError(f"cannot run git: {exc.strerror}") from exc


def discover(path: str) -> str | None:
    """The git directory of the work tree or bare repository at or above `path`, or None."""
    return _rev_parse_in(path, "--absolute-git-dir")


def discover_commit(path: str, rev: str) -> tuple[str, str] | None:
    """What discover(path), then rev_parse of `rev` in the repository found, give, in one
    git command: (git directory, commit sha), or None where either finds nothing."""
    return _discovered(outputs([_discover_commit_argv(path, rev)], environment(scanned=True))[0])


def discover_commit_and_origin(path: str, rev: str) -> tuple[tuple[str, str] | None, str]:
    """discover_commit(path, rev), and the origin remote of the repository found from
    `path` as origin_url gives it ("" where it has none, or git could not say), both
    asked at once: a scan's start waits for one git command rather than two in turn."""
    found, remote = outputs(
        [_discover_commit_argv(path, rev), ["git", "--no-pager", "-C", path, *_ORIGIN]],
        environment(scanned=True),
    )
    return _discovered(found), _origin(remote) or ""


def check_commit(
    path: str, rev: str, origin_of: str | None
) -> tuple[tuple[str, str] | None, str | None]:
    """discover_commit(path, rev), and where `origin_of` names a git directory, that
    repository's origin remote as origin_url gives it (None where git could not
    answer), both asked at once: a warm rerun's checks (errscan.launch)."""
    commands = [_discover_commit_argv(path, rev)]
    if origin_of is not None:
        commands.append(Git(origin_of, scanned=True)._argv(_ORIGIN))
    found, *remote = outputs(commands, environment(scanned=True))
    return _discovered(found), _origin(remote[0]) if remote else None


def _origin(answer: tuple[int, bytes] | None) -> str | None:
    """The origin remote in `git config --get`'s answer, as origin_url gives it ("" where
    git found none); None where git could not be asked."""
    if answer is None:
        return None
    status, out = answer
    return out.decode("utf-8", "replace").strip() if status == 0 else ""


def _discover_commit_argv(path: str, rev: str) -> list[str]:
    return _rev_parse_argv(
        path, "--absolute-git-dir", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
    )


def _discovered(answer: tuple[int, bytes] | None) -> tuple[str, str] | None:
    found = _rev_parse_output(answer)
    # the sha is the last line (the directory's name may hold a newline)
    git_dir, _, sha = (found or "").rpartition("\n")
    return (git_dir, sha) if git_dir and sha else None


def _rev_parse_in(path: str, *args: str) -> str | None:
    """What `git rev-parse ARGS` prints in `path` (the repository found from there, no
    --git-dir), stripped; None where git fails or prints nothing."""
    return _rev_parse_output(outputs([_rev_parse_argv(path, *args)], environment(scanned=True))[0])


def _rev_parse_argv(path: str, *args: str) -> list[str]:
    # -C: as if started in `path`, where git looks for the repository
    return ["git", "--no-pager", "-C", path, "rev-parse", *args]


def _rev_parse_output(answer: tuple[int, bytes] | None) -> str | None:
    if answer is None:
        return None
    status, out = answer
    found = out.decode("utf-8", "surrogateescape").strip()
    return found if status == 0 and found else None


def outputs(
    commands: Sequence[Sequence[str]], env: Mapping[str, str], timeout: float = 60
) -> list[tuple[int, bytes] | None]:
    """Short commands run at once, stdin and stderr /dev/null: each one's exit status and
    output, or None where it could not start or outlived `timeout` (then killed).
    Spawned with posix_spawn where there is one: the subprocess module's import (its
    threads, selectors and signals) was a tenth of a warm rerun."""
    if not hasattr(os, "posix_spawnp"):
        return [_output(command, env, timeout) for command in commands]
    import select
    import time

    deadline = time.monotonic() + timeout
    running: dict[int, tuple[int, list[bytes]]] = {}  # pipe -> (pid, what it read)
    started: list[tuple[int, int, list[bytes]] | None] = []
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        for command in commands:
            read, write = os.pipe()
            actions = [
                (os.POSIX_SPAWN_DUP2, devnull, 0),
                (os.POSIX_SPAWN_DUP2, write, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
            ]
            try:
                pid = os.posix_spawnp(command[0], list(command), env, file_actions=actions)
            except OSError:
                os.close(read)
                started.append(None)
                continue
            finally:
                os.close(write)
            chunks: list[bytes] = []
            running[read] = (pid, chunks)
            started.append((pid, read, chunks))
    finally:
        os.close(devnull)
    poll = select.poll()
    for pipe in running:
        poll.register(pipe, select.POLLIN)
    timed_out = False
    while running:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        for pipe, _ in poll.poll(left * 1000):
            chunk = os.read(pipe, 1 << 16)
            if chunk:
                running[pipe][1].append(chunk)
            else:
                poll.unregister(pipe)
                os.close(pipe)
                del running[pipe]
    if running:  # past the deadline
        import signal

        for pipe, (pid, _) in running.items():
            os.close(pipe)
            os.kill(pid, signal.SIGKILL)
    results: list[tuple[int, bytes] | None] = []
    for item in started:
        if item is None:
            results.append(None)
            continue
        pid, pipe, chunks = item
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        results.append(None if timed_out and pipe in running else (status, b"".join(chunks)))
    return results


def _output(
    command: Sequence[str], env: Mapping[str, str], timeout: float
) -> tuple[int, bytes] | None:
    import subprocess

    try:
        done = subprocess.run(
            list(command),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.returncode, done.stdout


def rev_parse(repo: Git, rev: str) -> str | None:
    """The sha of the commit `rev` names in `repo`, or None where it names none."""
    try:
        out = repo.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    except GitError:
        return None
    return out.strip() or None


_ORIGIN = ("config", "--get", "remote.origin.url")


def origin_url(repo: Git) -> str:
    """The repository's `origin` remote as its configuration writes it, "" where none."""
    try:
        return repo.run(*_ORIGIN).strip()
    except GitError:
        return ""
