"""A record as a page of an error knowledge base, as the seed pages lay it out:

    owner/name · error · ValueError
    the message cut at about 60 characters (the heading), then "Error message" in full
    What it means*, Source (thrown at FILE:LINE, the code, the pinned link), Solutions*,
    When it happens (trigger, conditions, environment variables, common situations*),
    Related errors, History (the site's), the footer (data as JSON, commit, version)

* where an enrichment of the record's facts is stored, marked "AI-assisted (MODEL)": the
model's answer is data, every text of it escaped like the repository's. Markdown and
HTML come from the same view of the record, through errscan/site/templates.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from errscan.analyzer.store import StoredEnrichment
from errscan.escape import link_url
from errscan.frozen import frozen
from errscan.models import ErrorRecord
from errscan.site.highlight import record_block
from errscan.site.render import cut, markup, pygments_css, render


class Related(Protocol):
    """What a page shows of a related error: a record, or its brief."""

    @property
    def id(self) -> str: ...
    @property
    def exception(self) -> str | None: ...
    @property
    def message(self) -> str | None: ...
    @property
    def file(self) -> str: ...
    @property
    def line(self) -> int: ...


Find = Callable[[str], "Related | None"]
# the kind as a reader says it
KIND_WORDS = {"raise": "error", "reraise": "error", "assert": "assertion", "exit": "exit",
              "warning": "warning"}  # fmt: skip


@frozen
class Seen:
    """The site in one stored scan: its commit, the commit's date, its message then."""

    commit: str
    date: str | None
    message: str | None


def simple_name(exception: str | None) -> str:
    return (exception or "re-raise").rsplit(".", 1)[-1]


def title(record: ErrorRecord) -> str:
    word = KIND_WORDS.get(record.kind, record.kind)
    return f"{record.repo or '(source)'} · {word} · {simple_name(record.exception)}"


def error_path(record_id: str) -> str:
    """Where an error's page is in the site, from its id alone (ids are stable, so the
    address is too)."""
    return f"errors/{record_id}.html"


def _enrichment(found: StoredEnrichment | None) -> dict[str, Any] | None:
    if found is None:
        return None
    answer = found.answer

    def said(key: str) -> str:
        value = answer.get(key)
        return value if isinstance(value, str) else ""

    steps = []
    given = answer.get("solutions")
    for step in given if isinstance(given, list) else []:
        if isinstance(step, dict) and isinstance(step.get("step"), str):
            code = step.get("code")
            steps.append({"step": step["step"], "code": code if isinstance(code, str) else ""})
    view = {"marked": f"AI-assisted ({found.model})", "what_it_means": said("what_it_means"),
            "solutions": steps, "common_situations": said("common_situations")}  # fmt: skip
    has_any = view["what_it_means"] or steps or view["common_situations"]
    return view if has_any else None


def changes(seen: Sequence[Seen]) -> list[Seen]:
    """The scans where the error first appeared, and where its message changed: its
    history as it reads, the same whatever later scans changed nothing of it."""
    return [now for i, now in enumerate(seen) if i == 0 or now.message != seen[i - 1].message]


def _history(seen: Sequence[Seen], since: Seen | None) -> dict[str, Any] | None:
    """First seen, each rewording with the template it replaced, and the commit since
    which the error is as it is now (where its page's link is pinned)."""
    if not seen:
        return None
    rewordings = [
        {"commit": now.commit, "date": now.date, "old": before.message, "new": now.message}
        for before, now in itertools.pairwise(seen)
        if now.message != before.message
    ]
    return {"first": seen[0], "since": since, "rewordings": rewordings}


def view(
    record: ErrorRecord,
    find: Find,
    enrichment: StoredEnrichment | None = None,
    *,
    history: Sequence[Seen] = (),
    since: Seen | None = None,
    commit_date: str | None = None,
    version: str = "",
    root: str | None = None,
    repo_href: str = "",
) -> dict[str, Any]:
    """What a page of the record shows. `root`: the site's root relative to the page
    (related errors and the JSON become links), None for a page of its own."""
    start = record.context.start_line
    code = [
        {"marked": record.line <= start + i <= record.end_line, "number": start + i, "text": t}
        for i, t in enumerate(record.context.code.split("\n"))
    ]
    related = []
    for found in (find(i) for i in record.related):
        if found is not None:
            href = f"{root}{error_path(found.id)}" if root is not None else None
            related.append({"id": found.id, "exception": simple_name(found.exception),
                            "message": cut(found.message), "file": found.file,
                            "line": found.line, "href": href})  # fmt: skip
    if record.message == "":  # raised with no text at all: str() of it is empty
        message = "(an empty message)"
    else:
        message = record.message or f"(no message: {record.message_source})"
    return {
        "record": record,
        "title": title(record),
        "heading": cut(record.message),
        "message": message,
        "candidates": list(record.message_candidates[1:]),
        "code": code,
        "width": len(str(record.context.end_line)),
        "url": link_url(record.url),
        "related": related,
        "enrichment": _enrichment(enrichment),
        "history": _history(history, since),
        "commit_date": commit_date,
        "version": version,
        "root": root,
        "repo_href": repo_href,
        # for a page of its own only: the site has the JSON API
        "record_json": None
        if root is not None
        else json.dumps(record.to_dict(), sort_keys=True, ensure_ascii=True, indent=2),
    }


def markdown(record: ErrorRecord, find: Find, enrichment: StoredEnrichment | None = None) -> str:
    """The page as Markdown that stays what it is in any renderer, HTML-allowing ones
    included: every text from the repository (or a model) escaped, every block fenced."""
    return render("error.md", **view(record, find, enrichment))


def html_page(
    record: ErrorRecord,
    find: Find,
    enrichment: StoredEnrichment | None = None,
    lines: dict[int, str] | None = None,
    **site: Any,
) -> str:
    """The page as HTML: standalone (its style inline, no script), or with `site`
    (view's keywords, `root` given) a page of the site. `lines`: its file's highlighted
    lines, where the caller has them (highlight.file_lines)."""
    values = view(record, find, enrichment, **site)
    values["code_html"] = markup(record_block(record, lines))
    if values["root"] is None:
        values["inline_css"] = markup(inline_css())
    return render("error.html", **values)


def inline_css() -> str:
    """The site's style and the highlighting's, for a page of its own."""
    from importlib import resources

    own = (resources.files("errscan.site") / "static" / "site.css").read_text("utf-8")
    return own + pygments_css()
