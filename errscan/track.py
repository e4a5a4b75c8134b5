"""The scheduled job: follow repositories, scan each new commit, store it, report changes.

# errscan.toml
db = "errscan.db"            # optional
[[repos]]
repo = "owner/name"
branch = "main"              # or rev = "v1.2"; HEAD when neither
include_tests = false        # also: include = [...], exclude = [...], name, context, ...

Top-level settings (include-tests, include, exclude, test-paths, include-vendored, kinds,
context: errscan.config's keys) apply to every [[repos]] table that does not set its own.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import errscan
from errscan import config
from errscan.analyzer import diff as diff_stage
from errscan.analyzer import output, repo
from errscan.analyzer import store as store_stage
from errscan.errors import InputError
from errscan.escape import inline
from errscan.frozen import frozen

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_TOP_KEYS = {"db", "repos"}
_REPO_KEYS = {"repo", "branch", "rev", "name"}  # and errscan.config's settings
_TYPES: dict[str, tuple[type, ...]] = {
    "db": (str,),
    "repo": (str,),
    "branch": (str,),
    "rev": (str,),
    "name": (str,),
}


@frozen
class Tracked:
    repo: str
    rev: str
    options: dict[str, Any]


@dataclass
class Outcome:
    repo: str
    status: str  # scanned, unchanged (already stored), failed
    commit: str = ""
    error: str = ""
    sites: int = 0
    file_errors: int = 0
    previous: str = ""
    changes: diff_stage.Diff | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "repo": self.repo,
            "status": self.status,
            "commit": self.commit,
            "sites": self.sites,
            "file_errors": self.file_errors,
            "previous_commit": self.previous or None,
        }
        if self.error:
            data["error"] = self.error
        if self.changes is not None:
            data["counts"] = self.changes.counts()
            data["changes"] = [c.to_dict() for c in self.changes.changes]
        return data


def load_config(path: Path) -> tuple[list[Tracked], str | None]:
    """The repositories a config follows, and its `db`; InputError names a bad key's line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read config {path}: {exc.strerror}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from exc
    defaults = _settings(data, path, text, _TOP_KEYS)
    repos = data.get("repos")
    if not isinstance(repos, list) or not repos:
        raise InputError(f"{path}: no [[repos]] table")
    tracked = []
    for entry in repos:
        if not isinstance(entry, dict):
            raise InputError(f"{path}:{_line_of(text, 'repos')}: 'repos' must be [[repos]] tables")
        for key, value in entry.items():
            if key in _REPO_KEYS and not isinstance(value, _TYPES[key]):
                raise InputError(f"{path}:{_line_of(text, key)}: {key!r} has the wrong type")
        own = _settings(entry, path, text, _REPO_KEYS, " in [[repos]]")
        if isinstance(entry.get("repo"), str):
            try:
                repo.parse_target(f"{entry['repo']}@HEAD")
                repo.check_address(entry["repo"])
            except InputError as exc:
                raise InputError(f"{path}:{_line_of(text, 'repo')}: {exc}") from None
        if "repo" not in entry:
            raise InputError(f"{path}: a [[repos]] table has no 'repo'")
        if "branch" in entry and "rev" in entry:
            raise InputError(f"{path}:{_line_of(text, 'rev')}: give 'branch' or 'rev', not both")
        options = {**defaults, **own, "repo_name": entry.get("name")}
        tracked.append(
            Tracked(entry["repo"], entry.get("branch") or entry.get("rev") or "HEAD", options)
        )
    db = data.get("db")
    if db is not None and not isinstance(db, str):
        raise InputError(f"{path}:{_line_of(text, 'db')}: 'db' has the wrong type")
    return tracked, db


def _settings(
    table: dict[str, Any], path: Path, text: str, others: set[str], where: str = ""
) -> dict[str, Any]:
    """The scan options a table sets besides its `others` keys; InputError names the
    line of the first bad one."""
    options, problems = config.read_table(table, trusted=True, ignore=others)
    if "repo_name" in options:  # a repository's name is its [[repos]] table's `name`
        problems.insert(0, "'repo-name' is not a setting here: give a [[repos]] table 'name'")
    if problems:
        bad = next((k for k in table if k not in others and repr(k) in problems[0]), "")
        line = _line_of(text, bad) if bad else 1
        raise InputError(f"{path}:{line}: {problems[0]}{where}")
    return options


def _line_of(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=|^\s*\[+\s*{re.escape(key)}\s*\]+", re.M)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def track(
    config: Path, db: Path | None, report_dir: Path, cache_dir: Path | None = None
) -> list[Outcome]:
    """Scan what is new in every tracked repository; write report.md and report.json."""
    tracked, configured_db = load_config(config)
    # a relative `db` of the config is the config's neighbour, wherever track runs from
    where = db if db is not None else config.parent / configured_db if configured_db else None
    report_dir.mkdir(parents=True, exist_ok=True)
    outcomes = [_one(item, where, cache_dir) for item in tracked]
    output.write_chunks([markdown(outcomes)], report_dir / "report.md", sys.stdout)
    body = json.dumps({"repos": [o.to_dict() for o in outcomes]}, indent=2, ensure_ascii=False)
    output.write_chunks([body + "\n"], report_dir / "report.json", sys.stdout)
    return outcomes


def _one(item: Tracked, db: Path | None, cache_dir: Path | None) -> Outcome:
    target = f"{item.repo}@{item.rev}"
    try:
        cache = cache_dir if cache_dir is not None else errscan.default_cache_dir()
        commit = repo.resolve(repo.parse_target(target), cache, item.options["repo_name"])
        options = errscan.scan_options(**item.options)
        store = store_stage.Store.open(db)
        try:
            found = store.find(commit.repo, commit.sha, options)
            if found is not None:
                return Outcome(
                    commit.repo,
                    "unchanged",
                    commit.sha,
                    sites=found.stats.sites,
                    file_errors=found.stats.file_errors,
                )
            previous = store.latest(commit.repo)
            result = errscan.extract(
                f"{item.repo}@{commit.sha}", cache_dir=cache_dir, **item.options
            )
            stored = store.save(result, options, repo.commit_date(commit))
            changes = None
            if previous is not None and previous.id != stored.id:
                changes = diff_stage.diff(
                    store.records(previous), result.records, previous.commit, result.commit
                )
            return Outcome(
                result.repo,
                "scanned",
                result.commit,
                sites=result.stats.sites,
                file_errors=result.stats.file_errors,
                previous=previous.commit if previous else "",
                changes=changes,
            )
        finally:
            store.close()
    except InputError as exc:
        return Outcome(_shown(item.repo), "failed", error=repo.redact(str(exc)))
    except Exception as exc:  # one repository's failure, whatever it is, is that repository's
        reason = repo.redact(" ".join(f"{type(exc).__name__}: {exc}".split()))
        return Outcome(_shown(item.repo), "failed", error=f"internal error: {reason}")


def _shown(target: str) -> str:
    """The repository as a report names it: credentials, query and fragment taken out."""
    return repo.display_name(target)[0] if "://" in target else repo.redact(target)


def markdown(outcomes: list[Outcome]) -> str:
    lines = [
        "## errscan: tracked repositories",
        "",
        "| repository | status | commit | sites | added | removed | reworded | moved |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for o in outcomes:
        counts = o.changes.counts() if o.changes else {}
        cells = [
            o.repo,
            o.status if not o.error else f"failed: {o.error}",
            o.commit[:12],
            str(o.sites),
        ] + [str(counts.get(k, "")) for k in diff_stage.KINDS]
        lines.append("| " + " | ".join(inline(c) for c in cells) + " |")
    lines.append("")
    for o in outcomes:
        if o.changes is not None and o.changes.changes:
            lines.append(diff_stage.markdown(o.changes, o.repo))
    return "\n".join(lines) + "\n"
