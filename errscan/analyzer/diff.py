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
from typing import Any

from errscan.escape import code_span, inline, visible
from errscan.frozen import frozen
from errscan.models import ErrorRecord


@frozen
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


@frozen
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


COMMENT_LIMIT = 65_536  # characters of a GitHub pull-request comment


def markdown(result: Diff, repo: str = "", limit: int = COMMENT_LIMIT) -> str:
    """The diff as Markdown of at most `limit` characters (a pull-request comment): the
    counts first, then each change while it fits, and how many more did not."""
    counts = result.counts()
    title = f"errscan: {inline(repo)} " if repo else "errscan: "
    head = [
        f"### {title}{result.old_commit[:10]}..{result.new_commit[:10]}",
        "",
        "| added | removed | reworded | moved |",
        "| --- | --- | --- | --- |",
        "| " + " | ".join(str(counts[k]) for k in KINDS) + " |",
        "",
    ]
    out = list(head)
    size = sum(len(line) + 1 for line in out)
    reserve = 80  # for the line that says how many more
    left = 0
    for kind in KINDS:
        changes = result.of(kind)
        if not changes:
            continue
        heading = [f"#### {kind.capitalize()}", ""]
        for i, change in enumerate(changes):
            line = _change_line(kind, change)
            needed = len(line) + 1 + (sum(len(h) + 1 for h in heading) if i == 0 else 0)
            if left or size + needed + reserve > limit:
                left += 1
                continue
            if i == 0:
                out += heading
                size += sum(len(h) + 1 for h in heading)
            out.append(line)
            size += len(line) + 1
        if out[-1] != "":
            out.append("")
            size += 1
    if left:
        out += [f"… and {left} more changes not shown here (the JSON report has them all).", ""]
    return "\n".join(out)


def _change_line(kind: str, change: Change) -> str:
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
    return line


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
