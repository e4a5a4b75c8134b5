"""Per-file sites -> records of the whole scan: stable ids and pinned links."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

from errscan.models import ErrorRecord, Site

LinkFor = Callable[[str, int], "str | None"]


def site_key(repo: str, site: Site) -> str:
    """What a site's id is made of: never its line, so moving code keeps the id.

    Repository, file, enclosing function, kind, exception and message template; where
    the message is unresolved, the message argument's source text stands in for it.
    """
    message = site.message if site.message is not None else f"<expr>{site.message_expr or ''}"
    fields = (repo, site.file, site.function, site.kind, site.exception or "", message)
    return "\x1f".join(fields)


def record_id(key: str, occurrence: int) -> str:
    """16 hex chars; the n-th identical site in one function (n > 0) mixes n in."""
    text = key if occurrence == 0 else f"{key}\x1f#{occurrence}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def link(sites: Iterable[Site], repo: str, commit: str, url_for: LinkFor) -> list[ErrorRecord]:
    """Records in (file, line, col) order, each with its id and pinned URL."""
    ordered = sorted(sites, key=Site.sort_key)
    seen: dict[str, int] = {}
    records = []
    for site in ordered:
        key = site_key(repo, site)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        records.append(
            _record(site, record_id(key, occurrence), repo, commit, url_for(site.file, site.line))
        )
    return records


def _record(site: Site, id: str, repo: str, commit: str, url: str | None) -> ErrorRecord:
    """The site's fields plus the scan's. Built through __dict__, which a frozen dataclass
    allows: ErrorRecord(**fields) cost a fifth of a warm rescan."""
    record = object.__new__(ErrorRecord)
    record.__dict__.update(site.__dict__)
    record.__dict__.update(id=id, repo=repo, commit=commit, url=url)
    return record
