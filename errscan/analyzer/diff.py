"""Two scans -> the errors added, removed, reworded and moved between them.

moved:    the same id at another file or line (ids never include the line);
reworded: an error gone and one come at the same file, function and exception,
          with another message (the id includes the message, so it changed);
added / removed: the rest.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from errscan.escape import code_span, inline, visible
from errscan.models import ErrorRecord


@dataclass(frozen=True)
class Change:
    kind: str  # added, removed, reworded, moved
    new: ErrorRecord | None
    old: ErrorRecord | None

    def to_dict(self) -> dict[str, Any]:
        def side(record: ErrorRecord | None) -> dict[str, Any] | None:
            if record is None:
                return None
            return {
                "id": record.id,
                "exception": record.exception,
                "message": record.message,
                "file": record.file,
                "line": record.line,
                "function": record.function,
            }

        return {"kind": self.kind, "new": side(self.new), "old": side(self.old)}


@dataclass(frozen=True)
class Diff:
    old_commit: str
    new_commit: str
    changes: tuple[Change, ...]

    def of(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    def counts(self) -> dict[str, int]:
        return {kind: len(self.of(kind)) for kind in KINDS}


KINDS = ("added", "removed", "reworded", "moved")


def diff(
    old: Sequence[ErrorRecord],
    new: Sequence[ErrorRecord],
    old_commit: str = "",
    new_commit: str = "",
) -> Diff:
    old_by_id = {r.id: r for r in old}
    new_by_id = {r.id: r for r in new}
    changes: list[Change] = []
    for record in new:
        before = old_by_id.get(record.id)
        if before is not None and (before.file, before.line) != (record.file, record.line):
            changes.append(Change("moved", record, before))
    gone = [r for r in old if r.id not in new_by_id]
    come = [r for r in new if r.id not in old_by_id]
    # reworded: pair what left and what came at one place (file, function, exception)
    waiting: dict[tuple[str, str, str | None], list[ErrorRecord]] = defaultdict(list)
    for record in gone:
        waiting[(record.file, record.function, record.exception)].append(record)
    for record in come:
        place = waiting.get((record.file, record.function, record.exception))
        if place:
            before = min(place, key=lambda r: (abs(r.line - record.line), r.id))
            place.remove(before)
            changes.append(Change("reworded", record, before))
        else:
            changes.append(Change("added", record, None))
    changes += [Change("removed", None, r) for rs in waiting.values() for r in rs]
    order = {kind: i for i, kind in enumerate(KINDS)}
    changes.sort(key=lambda c: (order[c.kind], _where(c)))
    return Diff(old_commit, new_commit, tuple(changes))


def _where(change: Change) -> tuple[str, int, str]:
    record = change.new or change.old
    assert record is not None
    return (record.file, record.line, record.id)


def text(result: Diff) -> str:
    counts = result.counts()
    lines = [
        f"{result.old_commit[:12]}..{result.new_commit[:12]}: "
        + ", ".join(f"{counts[k]} {k}" for k in KINDS)
    ]
    for change in result.changes:
        record = change.new or change.old
        assert record is not None
        where = f"{record.file}:{record.line}"
        if change.kind == "moved" and change.old is not None:
            where = f"{change.old.file}:{change.old.line} -> {where}"
        message = _message(record.message)
        line = f"{change.kind:<8} {record.id}  {record.exception}  {where}  {message}"
        lines.append(visible(line))
        if change.kind == "reworded" and change.old is not None:
            line = f"{'':<8} {change.old.id}  was: {_message(change.old.message)}"
            lines.append(visible(line))
    return "\n".join(lines) + "\n"


def _message(message: str | None) -> str:
    return "(no message)" if message is None else message


def markdown(result: Diff, repo: str = "") -> str:
    counts = result.counts()
    title = f"errscan: {inline(repo)} " if repo else "errscan: "
    out = [
        f"### {title}{result.old_commit[:10]}..{result.new_commit[:10]}",
        "",
        "| added | removed | reworded | moved |",
        "| --- | --- | --- | --- |",
        "| " + " | ".join(str(counts[k]) for k in KINDS) + " |",
        "",
    ]
    for kind in KINDS:
        changes = result.of(kind)
        if not changes:
            continue
        out += [f"#### {kind.capitalize()}", ""]
        for change in changes:
            record = change.new or change.old
            assert record is not None
            line = (
                f"- {code_span(record.id)} {inline(str(record.exception or 're-raise'))}: "
                f"{code_span(_message(record.message))} "
                f"({inline(f'{record.file}:{record.line}')})"
            )
            if kind == "reworded" and change.old is not None:
                line += f", was: {code_span(_message(change.old.message))}"
            if kind == "moved" and change.old is not None:
                line += f", was at {inline(f'{change.old.file}:{change.old.line}')}"
            out.append(line)
        out.append("")
    return "\n".join(out)


def as_json(result: Diff) -> str:
    return (
        json.dumps(
            {
                "old_commit": result.old_commit,
                "new_commit": result.new_commit,
                "counts": result.counts(),
                "changes": [c.to_dict() for c in result.changes],
            },
            indent=2,
            ensure_ascii=False,
            sort_keys=True,
        )
        + "\n"
    )
