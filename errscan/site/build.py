"""`errscan site`: a static site of the store's latest scans, for any static host.

    index.html                      the repositories, counts, a search box
    repos/SLUG/index.html           a repository's errors, by file and by exception
    errors/ID/index.html            one page per error, its address from its id alone
    api/index.json, api/repos/SLUG.json, api/errors/ID.json     the JSON API
    api/templates/SLUG.json         a repository's templates, for the paste box
    search/                         the search index (errscan/site/search.py)
    static/, 404.html, sitemap.xml

A repository is built one at a time from the store, so memory holds one repository's
records. A file is written only where its bytes change (a temp file renamed into
place), and files of an earlier build that this one no longer makes are removed (a
manifest lists them): rebuilding after a new commit rewrites what changed, an
unchanged store writes nothing, and a static host's sync uploads little.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import multiprocessing
import os
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from errscan.analyzer.index import BUILTIN_EXCEPTIONS
from errscan.analyzer.store import Store, StoredEnrichment, StoredScan
from errscan.errors import InputError
from errscan.models import ErrorRecord
from errscan.site import page, search
from errscan.site.highlight import Highlighter
from errscan.site.render import cut, pygments_css, render
from errscan.tempname import mkstemp

MANIFEST = ".errscan-site.json"
_STATIC = ("site.css", "search.js", "repo.js", "lookup.js")


@dataclass
class Report:
    repos: int = 0
    errors: int = 0
    files: int = 0  # files the site holds
    written: list[str] = field(default_factory=list)  # written because their bytes changed
    removed: list[str] = field(default_factory=list)
    seconds: float = 0.0


def slug(name: str) -> str:
    """A repository's name as a path in the site: OWNER/NAME as it is where that is
    plain, else its safe characters and a digest (names come from the repositories)."""
    parts = name.split("/")
    plain = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
    if len(parts) == 2 and all(plain.fullmatch(part) for part in parts):
        return name
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:60] or "repo"
    return f"{safe}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


class _Writer:
    """Writes a file only where its bytes differ from what is there. A page made from
    inputs whose digest (its key) the last build recorded, and still of the size it
    wrote, is not even made again."""

    def __init__(self, root: Path, old: dict[str, str]) -> None:
        self.root = root
        self.old = old  # the last build's keys, by path
        self.made: dict[str, str] = {}  # path -> key ("" for none)
        self.written: list[str] = []

    def kept(self, path: str, key: str) -> bool:
        """Whether the page at `path` the last build made from `key` is there still."""
        if not key or self.old.get(path) != key or not (self.root / path).is_file():
            return False
        self.made[path] = key
        return True

    def put(self, path: str, data: str | bytes, key: str = "") -> None:
        body = data.encode("utf-8") if isinstance(data, str) else data
        self.made[path] = key
        target = self.root / path
        with contextlib.suppress(OSError):
            if target.stat().st_size == len(body) and target.read_bytes() == body:
                return
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = mkstemp(f".{target.name}.", ".tmp", target.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(body)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self.written.append(path)


def build(
    db: Path,
    out: Path,
    repos: Sequence[str] = (),
    *,
    version: str,
    build_id: str = "",
    base_url: str = "",
    jobs: int | None = None,
) -> Report:
    """Build the site of the latest stored scan of each repository (of `repos` only,
    where named) into `out`, the error pages in `jobs` processes (default: the CPUs).
    `build_id` names errscan's code (a page's key holds it: new code, new pages)."""
    started = time.perf_counter()
    report = Report()
    if not db.exists():
        raise InputError(f"no store at {db}")
    out.mkdir(parents=True, exist_ok=True)
    writer = _Writer(out, _manifest(out))
    found = search.Index()
    store = Store.open(db, create=False)
    try:
        scans = store.latest_scans()
        if repos:
            missing = sorted(set(repos) - {scan.repo for scan in scans})
            if missing:
                raise InputError(f"no stored scan of {missing[0]}")
            scans = [scan for scan in scans if scan.repo in set(repos)]
        summaries = []
        for scan in scans:
            settings = _Shared(db, out, scan, version, build_id or version, writer.old)
            summaries.append(_repository(store, settings, writer, jobs, found))
            report.repos += 1
            report.errors += summaries[-1]["count"]
    finally:
        store.close()
    root_view = {"root": "", "version": version}
    writer.put("index.html", render("index.html", repos=summaries, **root_view))
    writer.put("404.html", render("404.html", root="/", version=version))
    index = {"repos": [{k: v for k, v in s.items() if k != "href"} for s in summaries]}
    writer.put("api/index.json", _json(index))
    static = resources.files("errscan.site") / "static"
    for name in _STATIC:
        writer.put(f"static/{name}", (static / name).read_bytes())
    writer.put("static/pygments.css", pygments_css())
    pages = ["", *(s["href"] for s in summaries), *(page.error_path(i) for i in _ids(writer))]
    writer.put("sitemap.xml", render("sitemap.xml", base=base_url, paths=pages))
    found.write(writer.put)
    report.removed = _remove_stale(out, writer.old, writer.made)
    made = {path: key for path, key in sorted(writer.made.items()) if path != MANIFEST}
    writer.put(MANIFEST, _json({"files": made}))
    report.written = writer.written
    report.files = len(writer.made)
    report.seconds = time.perf_counter() - started
    return report


def _manifest(out: Path) -> dict[str, str]:
    """The paths the last build made, with their keys."""
    try:
        files = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(files, dict):
        return {}
    return {p: k for p, k in files.items() if isinstance(p, str) and isinstance(k, str)}


def _ids(writer: _Writer) -> Iterable[str]:
    return sorted(p[7:-5] for p in writer.made if p.startswith("errors/") and p.endswith(".html"))


def _json(value: object) -> str:
    # compact: with an indent, json encodes in Python, a third of a build's time
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


class Brief(NamedTuple):
    """What a list or a related error shows of a record."""

    id: str
    kind: str
    exception: str | None
    message: str | None
    file: str
    line: int
    area: str
    function: str


@dataclass(frozen=True)
class _Shared:
    """What every error page of a repository's build needs (inherited by the workers)."""

    db: Path
    out: Path
    scan: StoredScan
    version: str
    build_id: str
    old: dict[str, str]


# set before the workers fork: they read it rather than have it pickled to each
_WORK: tuple[_Shared, dict[str, Brief], str] | None = None
_CHUNK = 64  # records a worker takes at once, whole files


def _repository(
    store: Store, shared: _Shared, writer: _Writer, jobs: int | None, found: search.Index
) -> dict[str, Any]:
    """Write one repository's pages and JSON; its summary for the index."""
    global _WORK
    scan = shared.scan
    briefs = {row[0]: Brief(*row) for row in store.briefs(scan)}
    name = slug(scan.repo)
    href = f"repos/{name}/"
    for brief in briefs.values():
        exception = page.simple_name(brief.exception)
        fields = [brief.message or "", exception, brief.file, brief.function or "", brief.id]
        shown = [scan.repo, exception, cut(brief.message), page.error_path(brief.id)]
        found.add(brief.id, [*fields, scan.repo], shown)
    kinds = Counter(page.KIND_WORDS.get(b.kind, b.kind) for b in briefs.values())
    exceptions = Counter(page.simple_name(b.exception) for b in briefs.values())
    summary: dict[str, Any] = {
        "name": scan.repo, "slug": name, "href": href, "commit": scan.commit,
        "commit_date": scan.commit_date, "count": len(briefs),
        "kinds": sorted(kinds.items()), "exceptions": exceptions.most_common(3),
        "all_exceptions": sorted(exceptions.items()), "api": f"api/repos/{name}.json",
    }  # fmt: skip
    chunks = _chunks(briefs.values())
    _WORK = (shared, briefs, href)
    try:
        workers = min(jobs or os.cpu_count() or 1, len(chunks))
        if workers > 1:
            context = multiprocessing.get_context("fork")
            with context.Pool(workers) as pool:
                done = list(pool.imap_unordered(_error_pages, chunks))
        else:
            done = [_error_pages(chunk) for chunk in chunks]
    finally:
        _WORK = None
    for made, written in done:
        writer.made.update(made)
        writer.written.extend(written)
    items = [_item(b) for b in briefs.values()]
    with_message = [i for i in items if i["resolved"]]
    by_file: dict[str, list[dict[str, Any]]] = {}
    by_exception: dict[str, list[dict[str, Any]]] = {}
    for item in with_message:
        by_file.setdefault(item["file"], []).append(item)
        by_exception.setdefault(item["exception"], []).append(item)
    root = "../" * href.count("/")
    writer.put(f"{href}index.html", render(
        "repo.html", repo=summary, root=root, version=shared.version,
        by_file=sorted(by_file.items()), by_exception=sorted(by_exception.items()),
        unresolved=[i for i in items if not i["resolved"]],
        config={"templates": f"{root}api/templates/{name}.json", "root": root},
    ))  # fmt: skip
    writer.put(summary["api"], _json({**{k: v for k, v in summary.items() if k != "href"},
                                      "ids": sorted(briefs)}))  # fmt: skip
    templates_path = f"api/templates/{name}.json"
    key = _key(shared.build_id, scan.id, scan.commit, len(briefs))
    if not writer.kept(templates_path, key):
        # a few files' records parsed at a time: never the whole scan's at once
        parsed = (ErrorRecord.from_dict(json.loads(data))
                  for ids in chunks for _, _, data in store.rows_of(scan, ids))  # fmt: skip
        writer.put(templates_path, _json(templates(parsed)), key)
    return summary


def _chunks(briefs: Iterable[Brief]) -> list[list[str]]:
    """The records' ids in groups of about _CHUNK, whole files each."""
    chunks: list[list[str]] = [[]]
    for _, group in itertools.groupby(briefs, key=lambda b: b.file):
        if len(chunks[-1]) >= _CHUNK:
            chunks.append([])
        chunks[-1].extend(brief.id for brief in group)
    return [chunk for chunk in chunks if chunk]


def _since(rows: Sequence[tuple[str, str | None, str | None, str]]) -> page.Seen | None:
    """The first of the latest scans in which the record is as in the last one (its
    commit, URL and related ids aside): where its code is still the code shown."""
    if not rows:
        return None
    first = len(rows) - 1
    while first > 0 and rows[first - 1][3] == rows[-1][3]:
        first -= 1
    return page.Seen(*rows[first][:3])


def _pinned(record: ErrorRecord, since: page.Seen | None) -> ErrorRecord:
    """The record with its commit and link those of `since`: a page that changes only
    when the error does (a static host's sync then uploads little)."""
    if since is None or since.commit == record.commit:
        return record
    url = record.url.replace(record.commit, since.commit) if record.url else record.url
    return dataclasses.replace(record, commit=since.commit, url=url)


def _key(*parts: object) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _error_pages(ids: list[str]) -> tuple[dict[str, str], list[str]]:
    """The error pages and JSON of these records (run in a worker)."""
    assert _WORK is not None
    shared, briefs, repo_href = _WORK
    writer = _Writer(shared.out, shared.old)
    store = Store.open(shared.db, create=False)
    try:
        rows = store.rows_of(shared.scan, ids)
        seen = store.history(shared.scan.repo, ids)
        enriched = store.enrichments_of(ids)
        todo: list[tuple[ErrorRecord, str, list[page.Seen], page.Seen | None, str | None]] = []
        for record_id, related_ids, data in rows:
            held = seen.get(record_id, [])
            history = page.changes([page.Seen(*row[:3]) for row in held])
            since = _since(held)
            related = json.loads(related_ids or "[]")
            date = since.date if since is not None else shared.scan.commit_date
            # what the pages show, from the rows as read: a page kept is never parsed
            key = _key(shared.build_id, held[-1][3] if held else data, since, related,
                       [briefs.get(i) for i in related], enriched.get(record_id), history,
                       date)  # fmt: skip
            html_path = page.error_path(record_id)
            json_path = f"api/errors/{record_id}.json"
            if writer.kept(html_path, key) and writer.kept(json_path, key):
                continue
            record = _pinned(ErrorRecord.from_dict(json.loads(data)), since)
            todo.append((record, key, history, since, date))
        highlighter = Highlighter()
        for _, group in itertools.groupby(todo, key=lambda item: item[0].file):
            made = list(group)
            lines = highlighter.file_lines(item[0] for item in made)
            for record, key, history, since, date in made:
                found = _enrichment(store, record, briefs) if record.id in enriched else None
                html = page.html_page(
                    record, briefs.get, found, history=history, since=since, commit_date=date,
                    version=shared.version, root="../", repo_href=repo_href, lines=lines,
                )  # fmt: skip
                writer.put(page.error_path(record.id), html, key)
                writer.put(f"api/errors/{record.id}.json",
                           _json(_api_error(record, history, found)), key)  # fmt: skip
    finally:
        store.close()
    return writer.made, writer.written


def _item(brief: Brief) -> dict[str, Any]:
    return {"href": page.error_path(brief.id), "kind": page.KIND_WORDS.get(brief.kind, ""),
            "exception": page.simple_name(brief.exception), "message": cut(brief.message),
            "file": brief.file, "line": brief.line, "area": brief.area or "code",
            "resolved": brief.message is not None}  # fmt: skip


def _enrichment(
    store: Store, record: ErrorRecord, by_id: dict[str, Brief]
) -> StoredEnrichment | None:
    """The stored enrichment of the record's current facts, if any."""
    from errscan.enrichment import digest, facts

    return store.enrichment(record.id, digest(facts(record, by_id.get)))  # type: ignore[arg-type]


def _api_error(
    record: ErrorRecord, history: Sequence[page.Seen], found: StoredEnrichment | None
) -> dict[str, Any]:
    return {
        "record": record.to_dict(),
        "history": [{"commit": s.commit, "date": s.date, "message": s.message} for s in history],
        "enrichment": None if found is None else {"model": found.model, "prompt": found.prompt,
                                                  **found.answer},
    }  # fmt: skip


def templates(records: Iterable[ErrorRecord]) -> dict[str, Any]:
    """What the paste box matches against, by `errscan lookup`'s rules
    (errscan/site/static/lookup.js): each record's templates as literal runs between
    placeholders, its class names, place and re-raise clauses; and the builtin
    exceptions' ancestors."""
    from errscan.matching import class_name, class_names, literal_length, literal_runs, templates_of

    rows = []
    for record in records:
        said = templates_of(record) if record.message is not None else []
        rows.append({
            "id": record.id, "kind": record.kind, "names": sorted(class_names(record)),
            "cls": class_name(record),
            "bases": [b.rsplit(".", 1)[-1] for b in record.exception_bases],
            "file": record.file, "line": record.line, "end_line": record.end_line,
            "function": record.function, "reraises": list(record.reraises),
            "message": record.message, "templates": [literal_runs(t) for t in said],
            "literal": literal_length(record),
        })  # fmt: skip
    builtins = {
        name: [c.__name__ for c in cls.__mro__ if issubclass(c, BaseException)]
        for name, cls in sorted(BUILTIN_EXCEPTIONS.items())
    }
    return {"records": rows, "builtins": builtins}


def _remove_stale(out: Path, old: dict[str, str], made: dict[str, str]) -> list[str]:
    """Files the last build made (its manifest lists them) that this one did not."""
    removed = []
    for path in sorted(old):
        if path not in made and ".." not in path.split("/") and not path.startswith("/"):
            with contextlib.suppress(OSError):
                (out / path).unlink()
                removed.append(path)
    return removed
