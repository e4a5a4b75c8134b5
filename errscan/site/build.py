"""`errscan site`: a static site of the store's latest scans, for any static host.

    index.html                      the repositories, counts, a search box
    repos/SLUG/index.html           a repository's errors, by file and by exception
    errors/ID.html                  one page per error, its address from its id alone
    api/index.json, api/repos/SLUG.json, api/errors/ID.json     the JSON API
    api/templates/SLUG.json         a repository's templates, for the paste box
    search/                         the search index (errscan/site/search.py)
    static/, 404.html, sitemap.xml

The build is incremental. What the last build made is kept beside the site
(errscan/site/state.py): a repository whose latest scan is the one built before is not
read at all; for one with a newer scan, the store says which records changed since
(their digests), and only those errors' pages, the pages that list them as related, the
repository's lists and the search shards of their words are made again. Every file is
written only where its bytes change (a temp file renamed into place), and files of
errors, repositories and shards that are no more are removed: a static host's sync
uploads little, and an unchanged store writes nothing. A full build (no state, or new
errscan code) goes the same way with every error to make, its pages in worker
processes; memory holds one chunk of records and SQLite's page caches, whatever the
number of errors.
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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from errscan import background
from errscan.analyzer.store import Store, StoredEnrichment, StoredScan
from errscan.builtin_exceptions import BUILTIN_EXCEPTIONS
from errscan.errors import InputError
from errscan.frozen import frozen
from errscan.matching import class_name, class_names, literal_length, literal_runs, templates_of
from errscan.models import ErrorRecord
from errscan.site import page, search
from errscan.site.highlight import Highlighter
from errscan.site.render import cut, environment, pygments_css, render
from errscan.site.state import SEARCH, Error, RepoState, State
from errscan.site.writer import Changed, FileWriter

_OLD_MANIFEST = ".errscan-site.json"  # what builds before the state kept
_STATIC = ("site.css", "search.js", "repo.js", "lookup.js")
_CHUNK = 64  # records a worker takes at once, whole files
_WINDOW = 32  # chunks given to the workers at once
_IN_PROCESS = 128  # errors to make below which no worker process is started


@dataclass
class Report:
    repos: int = 0
    errors: int = 0
    files: int = 0  # files the site holds
    written: int = 0  # files written because their bytes changed
    removed: int = 0
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


@frozen
class _Shared:
    """What every error page of a repository's build needs (inherited by the workers)."""

    db: Path
    out: Path
    scan: StoredScan
    version: str
    build_id: str
    href: str


@dataclass
class _Build:
    """One build's running account."""

    store: Store
    state: State
    writer: FileWriter
    jobs: int | None
    missing: set[str] = field(default_factory=set)  # files of the state the site has not
    shards: set[str] = field(default_factory=set)  # search shards to write again
    full_search: bool = False


def build(
    db: Path,
    out: Path,
    repos: Sequence[str] = (),
    *,
    version: str,
    build_id: str = "",
    base_url: str = "",
    jobs: int | None = None,
    changed: Changed | None = None,
) -> Report:
    """Build the site of the latest stored scan of each repository (of `repos` only,
    where named) into `out`, the error pages in `jobs` processes (default: the CPUs),
    telling `changed` of each file written or removed. `build_id` names errscan's code
    (a page's key holds it: new code, new pages)."""
    started = time.perf_counter()
    report = Report()
    if not db.exists():
        raise InputError(f"no store at {db}")
    out.mkdir(parents=True, exist_ok=True)
    store = Store.open(db, create=False)
    state = State.open(out)
    writer = FileWriter(out, changed, settle=True)
    try:
        scans = store.latest_scans()
        if repos:
            missing = sorted(set(repos) - {scan.repo for scan in scans})
            if missing:
                raise InputError(f"no stored scan of {missing[0]}")
            scans = [scan for scan in scans if scan.repo in set(repos)]
        run = _Build(store, state, writer, jobs)
        run.missing = set(state.missing(out, ["errors", "api/errors"]))
        key = _key(build_id or version, version)
        if state.meta("build") != key:
            state.forget_pages()
            state.set_meta("build", key)
            run.full_search = True
        built = {scan.repo for scan in scans}
        for name in state.repos():
            if name not in built:  # no longer stored, or not named
                run.shards |= state.forget_repo(name)
                _forget(run, name)
        summaries = []
        for scan in scans:
            shared = _Shared(db, out, scan, version, build_id or version, _href(scan.repo))
            summaries.append(_repository(run, shared))
            report.repos += 1
            report.errors += summaries[-1]["count"]
        _site(run, summaries, version, base_url)
        writer.wait()  # every file in place before the state says so
        report.written, report.removed = writer.written, writer.removed
        report.files = state.count_files()
        state.commit()
    except BaseException:
        writer.close()
        state.close()
        raise
    finally:
        store.close()
    report.seconds = time.perf_counter() - started
    return report


def _href(repo: str) -> str:
    """A repository's page in the site."""
    return f"repos/{slug(repo)}/"


def _forget(run: _Build, repo: str) -> None:
    """Remove the files of a repository the state holds, and forget them."""
    paths = run.state.files_of(repo)
    run.writer.remove(paths)
    run.state.forget_files(paths)


def _site(run: _Build, summaries: list[dict[str, Any]], version: str, base_url: str) -> None:
    """The site's own files, and the search shards that changed."""
    writer, state = run.writer, run.state
    made: list[tuple[str, str, str]] = []
    old = state.keys(state.files_of(""))

    def put(path: str, data: str | bytes | Iterable[str]) -> None:
        last = old.get(path) or None
        if isinstance(data, (str, bytes)):
            made.append((path, writer.put(path, data, last), ""))
        else:
            made.append((path, writer.stream(path, data, last), ""))

    root_view = {"root": "", "version": version}
    put("index.html", render("index.html", repos=summaries, **root_view))
    put("404.html", render("404.html", root="/", version=version))
    put("api/index.json", _json({"repos": summaries}))
    static = resources.files("errscan.site") / "static"
    for name in _STATIC:
        put(f"static/{name}", (static / name).read_bytes())
    put("static/pygments.css", _css(state))
    put("sitemap.xml", _sitemap(state, base_url, [_href(s["name"]) for s in summaries]))
    state.made(made)
    gone = sorted(old.keys() - {path for path, _, _ in made})
    writer.remove(gone)
    state.forget_files(gone)
    known = set(state.files_of(SEARCH))
    # what the index holds no more (the docs shards that builds of site state format 3 wrote)
    stale = sorted(p for p in known if p != "search/meta.json" and p[:13] != "search/words/")
    writer.remove(stale)
    state.forget_files(stale)
    known -= set(stale)
    shards = known - {"search/meta.json"}
    if run.full_search:
        run.shards |= state.all_shards()
    else:  # shards no longer in the site are made again
        shards = {p for p in shards if not (writer.root / p).is_file()}
    run.shards |= {p.removeprefix("search/").removesuffix(".json") for p in shards}
    paths = sorted([*(f"search/{shard}.json" for shard in run.shards), "search/meta.json"])
    digests = {} if run.full_search else state.keys(paths)
    written = search.write(state, sorted(run.shards), writer, digests)
    state.made((path, digest, SEARCH) for path, digest in sorted(written.items()))
    empty = sorted({f"search/{s}.json" for s in run.shards} - set(written))
    writer.remove(p for p in empty if p in known)
    state.forget_files([p for p in empty if p in known])
    _old_manifest(run)


def _css(state: State) -> str:
    """The highlighting's stylesheet, as the last build made it where errscan's code and
    Pygments are the same (making it loads Pygments' formatter and styles: 17 ms)."""
    import pygments

    key = json.dumps([state.meta("build"), pygments.__version__])
    if state.meta("css-key") == key and (kept := state.meta("css")) is not None:
        return kept
    css = pygments_css()
    state.set_meta("css", css)
    state.set_meta("css-key", key)
    return css


def _old_manifest(run: _Build) -> None:
    """The manifest a build before the state left: the files it lists that this build
    did not make are removed, and then it is."""
    path = run.writer.root / _OLD_MANIFEST
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    if isinstance(files, dict):
        known = set(run.state.keys([p for p in files if isinstance(p, str)]))
        run.writer.remove(p for p in sorted(files) if p not in known)
    with contextlib.suppress(OSError):
        path.unlink()


def _sitemap(state: State, base: str, repo_pages: list[str]) -> Iterator[str]:
    from markupsafe import escape

    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    yield '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    yield from (f"<url><loc>{escape(base + path)}</loc></url>\n" for path in ["", *repo_pages])
    before, after = page.error_path("\0").split("\0")  # an error's address about its id
    head, tail = f"<url><loc>{escape(base + before)}", f"{escape(after)}</loc></url>\n"
    ids = state.all_ids()
    while part := list(itertools.islice(ids, 1024)):
        if "".join(part).isalnum() and "".join(part).isascii():  # nothing to escape
            yield head + (tail + head).join(part) + tail
        else:
            yield "".join(f"<url><loc>{escape(base + page.error_path(i))}</loc></url>\n"
                          for i in part)  # fmt: skip
    yield "</urlset>\n"


def _compact(value: object) -> str:
    # compact: with an indent, json encodes in Python, a third of a build's time
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _json(value: object) -> str:
    return _compact(value) + "\n"


def _key(*parts: object) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _stamp(store: Store, scans: Sequence[StoredScan], scan: StoredScan) -> dict[str, Any]:
    """What, besides its records, decides a repository's pages: the scans up to this
    one (a page's history), and how many enrichments its records have, and the latest's
    time."""
    count, latest, _ = store.enriched(scan)
    return {"scans": _upto(scans, scan.id), "enriched": [count, latest]}


def _upto(scans: Sequence[StoredScan], scan_id: int) -> str | None:
    """A key of the repository's scans up to this one; None where it is not among them."""
    ids = [s.id for s in scans]
    return _key(ids[: ids.index(scan_id) + 1]) if scan_id in ids else None


def _repository(run: _Build, shared: _Shared) -> dict[str, Any]:
    """Make what changed of one repository's pages and JSON; its summary for the index."""
    store, state, scan = run.store, run.state, shared.scan
    before = state.repo(scan.repo)
    scans = store.scans(scan.repo)
    stamp = _stamp(store, scans, scan)
    stamp_text = json.dumps(stamp, sort_keys=True)
    href = shared.href
    name = href[len("repos/") : -1]
    own = [f"{href}index.html", f"api/repos/{name}.json", f"api/templates/{name}.json"]
    lost = [p for p in own if not (shared.out / p).is_file()]
    same = before is not None and before.scan == scan.id and before.stamp == stamp_text
    if same and not lost and not (run.missing and run.missing & set(state.files_of(scan.repo))):
        assert before is not None
        return before.summary
    todo, gone = _todo(run, shared, before, stamp, scans)
    afresh = todo is None  # every error made, its files not made again removed
    ids: list[str] | None = None
    if todo is not None:  # and the pages that show an error whose brief changed, or is no more
        shown = state.briefed(todo) | set(gone)
        ids = sorted(todo.keys() | (state.linking(shown) - set(gone)))
    else:
        state.begin_made()
    fresh = afresh and not state.count_errors(scan.repo)  # nothing of it held: inserted

    def drop() -> None:  # the errors no more: none of them among those made
        run.shards |= state.drop(gone)
        gone_paths = _paths(gone)
        run.writer.remove(gone_paths)
        state.forget_files(gone_paths)

    # in one go: the workers forked once
    for errors in _make(run, shared, ids, afresh, meanwhile=drop):
        if fresh:
            run.shards |= state.add(errors)
            continue
        run.shards |= state.put(errors)
    if afresh:  # its files the last build made that this one did not
        stale = state.not_made(scan.repo, own)
        run.writer.remove(stale)
        state.forget_files(stale)
    summary = _summary(state, scan, name)
    state.made((path, digest, scan.repo) for path, digest in _lists(run, shared, summary, name))
    state.set_repo(scan.repo, scan.id, stamp_text, summary)
    return summary


def _todo(
    run: _Build,
    shared: _Shared,
    before: RepoState | None,
    stamp: dict[str, Any],
    scans: Sequence[StoredScan],
) -> tuple[dict[str, str] | None, list[str]]:
    """The errors of the scan whose pages are to be made, each with its brief as the
    state keeps it (None: all of them, the repository built afresh), and the errors of
    the last build that the scan has not."""
    store, state, scan = run.store, run.state, shared.scan
    at = {s.id: i for i, s in enumerate(scans)}
    old = json.loads(before.stamp) if before is not None else {}
    if (before is None or before.scan not in at or at[before.scan] > at[scan.id]
            or _upto(scans, before.scan) != old.get("scans")):  # fmt: skip
        # never built, or the scans before the one built last changed: all afresh
        return None, _missing(state.ids(scan.repo), store.ids(scan))
    wanted: set[str] = set()
    line = scans[at[before.scan] : at[scan.id] + 1]
    gone = store.gone(line[0], scan) if len(line) > 1 else []
    for older, newer in itertools.pairwise(line):
        wanted.update(store.changed(older, newer))
        wanted.update(gone if len(line) == 2 else store.gone(older, newer))  # one step: gone
    if old.get("enriched") != stamp["enriched"]:
        count, latest = stamp["enriched"]
        old_count, old_latest = old.get("enriched", [0, 0.0])
        if count >= old_count and latest >= old_latest:  # enrichments added
            wanted.update(store.enriched(scan, old_latest)[2])
        else:
            wanted.update(row[0] for row in store.briefs(scan))
    for path in run.missing:
        folder, _, file_name = path.rpartition("/")
        if folder in ("errors", "api/errors"):
            wanted.add(file_name.rsplit(".", 1)[0])
    # those the scan holds
    todo = {row[0]: _brief_text(Brief(*row)) for row in store.briefs(scan, sorted(wanted))}
    return todo, sorted(gone)


def _missing(held: Iterable[str], kept: Iterable[str]) -> list[str]:
    """The ids of `held` that `kept` has not, both in order (read, not held)."""
    missing: list[str] = []
    kept_ids = iter(kept)
    kept_id = next(kept_ids, None)
    for held_id in held:
        while kept_id is not None and kept_id < held_id:
            kept_id = next(kept_ids, None)
        if held_id != kept_id:
            missing.append(held_id)
    return missing


def _make(
    run: _Build,
    shared: _Shared,
    ids: Sequence[str] | None,
    afresh: bool,
    meanwhile: Callable[[], None],
) -> Iterator[list[Error]]:
    """Make the pages of these errors (None: all the scan's) whose keys changed, in
    workers where there are many; the errors as the state keeps them, a chunk at a time.
    `meanwhile` is called once, while the workers make the first pages."""
    global _WORK
    if ids is not None and not ids:
        meanwhile()
        return
    jobs = run.jobs or os.cpu_count() or 1
    # a few errors: chunks small enough that every worker has a share
    size = _CHUNK if ids is None else max(1, min(_CHUNK, len(ids) // (2 * jobs)))
    chunks = _chunks((Brief(*row) for row in run.store.briefs(shared.scan, ids)), size)
    first = list(itertools.islice(chunks, 2 * _WINDOW))
    many = sum(map(len, first)) >= _IN_PROCESS
    chunks = itertools.chain(first, chunks)
    _WORK = shared
    try:
        workers = min(jobs, len(first))
        if workers > 1 and many:
            run.writer.wait()  # no thread of ours runs when the workers fork
            background.settle()
            context = multiprocessing.get_context("fork")
            # each worker loads the page's template and the lexer as it starts, all at
            # once, while this process reads what their first tasks need
            with context.Pool(workers, initializer=_load) as pool:
                # the state is read in this thread only: a window of tasks at a time
                started = False
                while window := list(itertools.islice(chunks, _WINDOW)):
                    tasks = [(chunk, _old_keys(run, chunk)) for chunk in window]
                    done = pool.imap(_error_pages, tasks)
                    if not started:
                        meanwhile()
                        started = True
                    yield from _collect(run, shared, done, afresh)
        else:
            meanwhile()
            tasks_in = ((chunk, _old_keys(run, chunk)) for chunk in chunks)
            yield from _collect(run, shared, map(_error_pages, tasks_in), afresh)
    finally:
        _WORK = None


def _load() -> None:
    """What every page needs loaded: Jinja2's template, Pygments' lexer."""
    environment().get_template("error.html")
    Highlighter.load()


def _collect(
    run: _Build,
    shared: _Shared,
    done: Iterable[tuple[list[tuple[str, str]], list[str], list[Error]]],
    afresh: bool,
) -> Iterator[list[Error]]:
    for keys, written, errors in done:
        for path in written:
            run.writer.wrote(path)
        run.state.made((path, key, shared.scan.repo) for path, key in keys)
        if afresh:
            run.state.note_made(path for path, _ in keys)
        yield errors


def _old_keys(run: _Build, ids: Sequence[str]) -> dict[str, str]:
    """The keys of these errors' files as the last build made them, but of files no
    longer there."""
    keys = run.state.keys(_paths(ids))
    return {path: key for path, key in keys.items() if path not in run.missing}


def _paths(ids: Sequence[str]) -> list[str]:
    return [p for i in ids for p in (page.error_path(i), f"api/errors/{i}.json")]


def _chunks(briefs: Iterable[Brief], size: int = _CHUNK) -> Iterator[list[str]]:
    """The records' ids in groups of about `size`, whole files each, as they are read."""
    chunk: list[str] = []
    for _, group in itertools.groupby(briefs, key=lambda b: b.file):
        if len(chunk) >= size:
            yield chunk
            chunk = []
        chunk.extend(brief.id for brief in group)
    if chunk:
        yield chunk


def _summary(state: State, scan: StoredScan, name: str) -> dict[str, Any]:
    kinds = state.counts(scan.repo, "kind")
    exceptions = state.counts(scan.repo, "exception")
    top = sorted(exceptions, key=lambda item: (-item[1], item[0]))[:3]
    return {
        "name": scan.repo, "slug": name, "commit": scan.commit,
        "commit_date": scan.commit_date, "count": sum(n for _, n in kinds),
        "kinds": [list(k) for k in kinds], "exceptions": [list(e) for e in top],
        "all_exceptions": [list(e) for e in exceptions], "api": f"api/repos/{name}.json",
    }  # fmt: skip


def _lists(
    run: _Build, shared: _Shared, summary: dict[str, Any], name: str
) -> list[tuple[str, str]]:
    """The repository's page, its JSON and its templates for the paste box, from the
    state: each streamed into its file; their paths and digests."""
    state, writer, href = run.state, run.writer, shared.href
    page_path, templates_path = f"{href}index.html", f"api/templates/{name}.json"
    last = state.keys([page_path, summary["api"], templates_path])
    state.make_parts(shared.scan.repo)
    root = "../" * href.count("/")
    values = {
        "repo": summary, "root": root, "version": shared.version,
        "by_file": state.grouped(shared.scan.repo),
        "unresolved": state.unresolved(shared.scan.repo),
        "unresolved_count": state.count_unresolved(shared.scan.repo),
        "config": {"templates": f"{root}api/templates/{name}.json", "root": root},
    }  # fmt: skip
    made = {
        page_path: environment().get_template("repo.html").generate(**values),
        summary["api"]: _json_with(summary, "ids", run.store.ids(shared.scan)),
        templates_path: _templates_json(state.templates(shared.scan.repo)),
    }
    return [(path, writer.stream(path, chunks, last.get(path) or None))
            for path, chunks in made.items()]  # fmt: skip


def _json_with(value: dict[str, Any], key: str, items: Iterable[str]) -> Iterator[str]:
    """_json of `value` with `key` the list of these strings, streamed."""
    yield "{"
    for i, name in enumerate(sorted([*value, key])):
        yield ("," if i else "") + _compact(name) + ":"
        if name != key:
            yield _compact(value[name])
            continue
        yield "["
        strings, comma = iter(items), ""
        while part := list(itertools.islice(strings, 1024)):
            yield comma + search.json_strings(part)
            comma = ","
        yield "]"
    yield "}\n"


def _templates_json(parts: Iterable[str]) -> Iterator[str]:
    """templates() of the records whose rows these are (comma-separated, in parts), as
    _json writes it."""
    yield '{"builtins":' + _compact(_builtins()) + ',"records":['
    for i, part in enumerate(parts):
        yield part if i == 0 else "," + part
    yield "]}\n"


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


# set before the workers fork: they read it rather than have it pickled to each
_WORK: _Shared | None = None


def _error_pages(
    task: tuple[list[str], dict[str, str]],
) -> tuple[list[tuple[str, str]], list[str], list[Error]]:
    """The error pages and JSON of these records whose keys changed, and each record as
    the state keeps it (run in a worker)."""
    assert _WORK is not None
    shared = _WORK
    ids, old = task
    written: list[str] = []
    out = FileWriter(shared.out, lambda path, _: written.append(path), settle=True)
    store = Store.open(shared.db, create=False)
    keys: list[tuple[str, str]] = []
    errors: list[Error] = []
    try:
        rows = store.rows_of(shared.scan, ids)
        seen = store.history(shared.scan.repo, ids)
        enriched = store.enrichments_of(ids)
        wanted = set(ids)
        for _, related_ids, _ in rows:
            wanted.update(json.loads(related_ids or "[]"))
        briefs = {row[0]: Brief(*row) for row in store.briefs(shared.scan, sorted(wanted))}
        todo: list[tuple[ErrorRecord, str, list[page.Seen], page.Seen | None, str | None]] = []
        for record_id, related_ids, data in rows:
            held = seen.get(record_id, [])
            history = page.changes([page.Seen(*row[:3]) for row in held])
            since = _since(held)
            related = json.loads(related_ids or "[]")
            date = since.date if since is not None else shared.scan.commit_date
            # what the pages show, from the rows as read
            key = _key(shared.build_id, held[-1][3] if held else data, since, related,
                       [briefs.get(i) for i in related], enriched.get(record_id), history,
                       date)  # fmt: skip
            record = _pinned(ErrorRecord.from_dict(json.loads(data)), since)
            errors.append(_error(shared, record, briefs[record_id]))
            html_path = page.error_path(record_id)
            json_path = f"api/errors/{record_id}.json"
            keys += [(html_path, key), (json_path, key)]
            if old.get(html_path) == key and old.get(json_path) == key:
                continue
            todo.append((record, key, history, since, date))
        highlighter = Highlighter()
        for _, group in itertools.groupby(todo, key=lambda item: item[0].file):
            made = list(group)
            lines = highlighter.file_lines(item[0] for item in made)
            for record, _, history, since, date in made:
                found = _enrichment(store, record, briefs) if record.id in enriched else None
                html = page.html_page(
                    record, briefs.get, found, history=history, since=since, commit_date=date,
                    version=shared.version, root="../", repo_href=shared.href, lines=lines,
                )  # fmt: skip
                out.put(page.error_path(record.id), html)
                out.put(f"api/errors/{record.id}.json", _json(_api_error(record, history, found)))
        out.wait()  # the files in place before the task is done
    finally:
        out.close()
        store.close()
    return keys, written, errors


def _error(shared: _Shared, record: ErrorRecord, brief: Brief) -> Error:
    """The record as the state keeps it: as lists, the search and the paste box show it."""
    exception = page.simple_name(record.exception)
    item = _item(brief)
    fields = [record.message or "", exception, record.file, record.function or "", record.id,
              shared.scan.repo]  # fmt: skip
    found = set().union(*(search.words(text) for text in fields))
    return Error(
        id=record.id, repo=shared.scan.repo, file=record.file, line=record.line,
        exception=exception, kind=item["kind"], resolved=record.message is not None,
        brief=_brief_text(brief),
        item=_item_html(item, "../" * shared.href.count("/")),
        template=_compact(template_row(record)),
        related=tuple(record.related),
        words=tuple(sorted((search.shard(w), w) for w in found)),
    )  # fmt: skip


def _brief_text(brief: Brief) -> str:
    """A brief as the state keeps it: an error's page shows its related errors so."""
    return json.dumps(list(brief), ensure_ascii=False)


def _item_html(item: dict[str, Any], root: str) -> str:
    """An error's line in a repository's lists."""
    return render("repo_item.html", item=item, root=root).strip("\n")


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


def template_row(record: ErrorRecord) -> dict[str, Any]:
    """What the paste box matches a record by (templates())."""
    said = templates_of(record) if record.message is not None else []
    return {
        "id": record.id, "kind": record.kind, "names": sorted(class_names(record)),
        "cls": class_name(record),
        "bases": [b.rsplit(".", 1)[-1] for b in record.exception_bases],
        "file": record.file, "line": record.line, "end_line": record.end_line,
        "function": record.function, "reraises": list(record.reraises),
        "message": record.message, "templates": [literal_runs(t) for t in said],
        "literal": literal_length(record),
    }  # fmt: skip


def _builtins() -> dict[str, list[str]]:
    return {name: list(classes) for name, classes in sorted(BUILTIN_EXCEPTIONS.items())}


def templates(records: Iterable[ErrorRecord]) -> dict[str, Any]:
    """What the paste box matches against, by `errscan lookup`'s rules
    (errscan/site/static/lookup.js): each record's templates as literal runs between
    placeholders, its class names, place and re-raise clauses; and the builtin
    exceptions' ancestors."""
    return {"records": [template_row(r) for r in records], "builtins": _builtins()}
