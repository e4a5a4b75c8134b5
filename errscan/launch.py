"""A rescan's command line answered from its stored output, before click, the API and the
scan's modules load: a warm `errscan extract` costs about what its output's copy costs.

The first run of an `extract` command line goes the full way (click, the API) and keeps,
beside the output stored for replay, a note of what made that output the answer to that
command line (`remember`):

    the command line, the folder it ran in, the environment, whether stderr is a
    terminal, the interpreter                    -> the note's name (`fingerprint`)
    errscan's code and LibCST's version          -> build.signature()
    the user's configuration files that could apply, present or not, and their state
    the repository's git directory, the commit the revision names, its origin remote
    what click made of the command line: where the output goes, whether quiet
    the stored output                            -> its entry, checked by its digest

A later run of the same command line (`answer`, called by the entry point) checks each
of these again: the files by their state (inode, size, modification and change times),
the repository by running the same git commands as the full way. Only where every one
is as it was does it write the stored output itself. Anything else (another command, a
changed input, a damaged note or output, a remote repository, an output path that
cannot be written) goes the full way, which is always right, and which answers errors.

What answers loads little beyond the interpreter's start: notes are `replay.pack`ed
rather than JSON, paths are strings, and SIGTERM is caught through `_signal`, so that
neither json, pathlib, contextlib nor signal's enums load (with the modules replay and
outfile leave out too, 6 ms of networkx's 31 ms warm rescan).
"""

from __future__ import annotations

import os
import sys
import time

from errscan import __version__, build
from errscan.analyzer import gitcmd
from errscan.analyzer.replay import Replay, pack, unpack
from errscan.outfile import check_writable, write_bytes
from errscan.tempname import remove, write_atomically

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import Any

    from errscan.analyzer.repo import Commit

_VERSION = 3  # 2: BLAKE2b names and signatures; 3: packed notes (replay.pack)
_FOLDER = "launches"
_SUFFIX = ".note"  # a note's name: the fingerprint, then this
KEPT = 256  # notes kept in a cache; past that, the least recently written go
# what the environment holds that neither errscan nor git reads, and a shell changes
# between two runs of the same command: the last command's path, the last folder
_IGNORED = frozenset({"_", "OLDPWD"})
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


def fingerprint(argv: Sequence[str], cwd: str, environ: Mapping[str, str], tty: bool) -> str:
    """The name of the note of a command line run so: everything that could make click
    or the API read it otherwise, but the files, checked one by one."""
    given = sorted((k, v) for k, v in environ.items() if k not in _IGNORED)
    # repr: one text for one such list, of strings, a bool and an int (as json.dumps was)
    text = repr([_VERSION, list(argv), cwd, given, tty, sys.executable, sys.version, __version__])
    return build.blake2b(text.encode("utf-8", "surrogateescape")).hexdigest()


def cache_root(argv: Sequence[str], environ: Mapping[str, str]) -> str:
    """The cache folder the full way would use: --cache-dir, ERRSCAN_CACHE_DIR, else the
    user cache. Read naively (`-o --cache-dir` makes it the output's name): a note is
    only trusted where it says it was written for this folder, and its name holds the
    whole command line."""
    for i, arg in enumerate(argv):
        if arg == "--cache-dir" and i + 1 < len(argv):
            return _as_path(argv[i + 1])
        if arg.startswith("--cache-dir="):
            return _as_path(arg.split("=", 1)[1])
    explicit = environ.get("ERRSCAN_CACHE_DIR")
    if explicit:
        return _as_path(explicit)
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return _as_path(os.path.join(base, "errscan"))  # as api.default_cache_dir names them


def _as_path(text: str) -> str:
    """The folder as str(Path(text).expanduser()) names it (the API's way): no repeated
    or trailing slash, no `.` part, two leading slashes kept, and a first part `~` or
    `~user` that user's home; ValueError where there is no such user."""
    path = _normal(text)
    if path[:1] == "~":
        first, _, rest = path.partition("/")
        home = os.path.expanduser(first)
        if home[:1] == "~":
            raise ValueError(f"no home folder for {first}")
        path = _normal(f"{home}/{rest}" if rest else home)
    return path


def _normal(path: str) -> str:
    parts = "/".join(part for part in path.split("/") if part and part != ".")
    if not path.startswith("/"):
        return parts or "."
    return ("//" if path.startswith("//") and not path.startswith("///") else "/") + parts


def _state(path: str) -> list[int] | None:
    """What the file system says of a path: None where nothing is there."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return [st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _note_path(root: str, argv: Sequence[str]) -> str:
    name = fingerprint(argv, os.getcwd(), os.environ, sys.stderr.isatty())
    return os.path.join(root, _FOLDER, f"{name}{_SUFFIX}")


def remember(
    argv: Sequence[str],
    root: Path,
    commit: Commit,
    entry: str,
    *,
    output: Path | None,
    quiet: bool,
    configs: Sequence[Path],
) -> None:
    """Keep the note of an `extract` command line whose output is stored as `entry`.
    Only for a repository scanned in place whose name the note can check (given, its
    origin remote, or the folder holding `.git`). Best effort: a note that cannot be
    written only costs the next run its shortcut."""
    if not commit.scanned_in_place or commit.path is None or commit.rev is None:
        return
    origin_real = None
    if commit.origin is not None:
        if commit.origin and _is_path(commit.origin):
            origin_real = os.path.realpath(os.path.join(commit.git_dir, commit.origin))
        elif not commit.origin and os.path.basename(commit.git_dir) != ".git":
            return  # named by a linked work tree's folder, read from a file: not checked
    try:
        note = {
            "version": _VERSION,
            "root": str(root),
            "build": build.signature(),
            "configs": [[str(path), _state(str(path))] for path in configs],
            "path": commit.path,
            "rev": commit.rev,
            "git_dir": commit.git_dir,
            "sha": commit.sha,
            "origin": commit.origin,
            "origin_real": origin_real,
            "entry": entry,
            "output": None if output is None else str(output),
            "quiet": quiet,
        }
        os.makedirs(os.path.join(root, _FOLDER), exist_ok=True)
        write_atomically(_note_path(str(root), argv), pack(note))
        prune(root, KEPT)
    except (OSError, ValueError):
        return


def _is_path(origin: str) -> bool:
    """An origin remote that is a folder, relative to the git directory or not, rather
    than a URL (`scheme://`, or `user@host:path`), as repo._local_name tells them."""
    from errscan.analyzer.repo import is_path_remote

    return is_path_remote(origin)


def prune(root: str | os.PathLike[str], keep: int) -> int:
    """Drop the notes of `root`'s cache but the `keep` written last: how many went (and
    any note of the JSON kind errscan kept before, which none reads now)."""
    try:
        with os.scandir(os.path.join(root, _FOLDER)) as found:
            notes, old = [], []
            for entry in found:
                if entry.name.endswith(_SUFFIX):
                    notes.append((entry.stat().st_mtime_ns, entry.path))
                elif entry.name.endswith(".json"):
                    old.append(entry.path)
    except OSError:
        return 0
    gone = [path for _, path in sorted(notes)[: max(0, len(notes) - keep)]] + old
    return sum(remove(path) for path in gone)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised as the full way's cli.Terminated is: a temp output is removed."""


def _terminate(_signum: int, _frame: object) -> None:
    raise _Terminated


def answer(argv: Sequence[str]) -> int | None:
    """The exit code of `errscan ARGV` answered from its note, or None where it must go
    the full way (nothing was written then). Interrupted, it ends as the full way does."""
    if argv[:1] != ["extract"]:
        return None
    import _signal  # type: ignore[import-not-found]  # signal's functions, not its enums

    previous = _signal.signal(_signal.SIGTERM, _terminate)
    try:
        return _answer(argv)
    except _Terminated:
        sys.stderr.write("errscan: terminated\n")
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        sys.stderr.write("errscan: interrupted\n")
        return EXIT_INTERRUPTED
    finally:
        _signal.signal(_signal.SIGTERM, previous)


def _answer(argv: Sequence[str]) -> int | None:
    started = time.perf_counter()
    try:
        root = cache_root(argv, os.environ)
        with open(_note_path(root, argv), "rb") as kept:
            note = unpack(kept.read())
        if type(note) is not dict or not _holds(note, root):
            return None
        hit = Replay(root).load(note["entry"])
        if hit is None:
            return None
        output = note["output"]
        if output is not None:
            if os.path.exists(output) and not os.path.isfile(output):
                return None  # a device or a pipe, written in place: never twice
            check_writable(output)
    except Exception:  # whatever is wrong here, the full way tells
        return None
    chunks, (files, sites, file_errors), same = hit
    if output is not None:
        try:  # atomic: where this fails, nothing was written, and the full way answers
            write_bytes(chunks, output, sys.stdout, same)
        except Exception:
            return None
    else:
        try:
            write_bytes(chunks, None, sys.stdout)
        except BrokenPipeError:  # the reader stopped early: as the full way, not an error
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 0
        except OSError as exc:
            from errscan.escape import visible

            message = visible(" ".join(str(exc).split()))
            sys.stderr.write(f"errscan: internal error: {type(exc).__name__}: {message}\n")
            return 1
    if not note["quiet"]:
        sys.stderr.write(summary(files, sites, file_errors, time.perf_counter() - started) + "\n")
    return 0


def summary(files: int, sites: int, file_errors: int, seconds: float) -> str:
    """The line `extract` ends with on stderr, unless quiet."""
    return (
        f"errscan: {files} files scanned, {sites} sites, {file_errors} file errors, {seconds:.2f}s"
    )


def _holds(note: dict[str, Any], root: str) -> bool:
    """Whether every input the note names is as it was."""
    if note.get("version") != _VERSION or note.get("root") != root:
        return False
    if any(_state(path) != state for path, state in note["configs"]):
        return False
    if note["build"] != build.signature():
        return False
    path, git_dir = note["path"], note["git_dir"]
    if not os.path.isdir(path):
        return False
    origin, real = note["origin"], note["origin_real"]
    found, origin_now = gitcmd.check_commit(
        path, note["rev"], git_dir if origin is not None else None
    )
    if found != (git_dir, note["sha"]):
        return False
    if origin is not None and origin_now != origin:
        return False
    return real is None or os.path.realpath(os.path.join(git_dir, origin)) == real
