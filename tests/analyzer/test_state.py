"""The kept state of the last scan: an incremental rescan gives exactly a fresh scan's output."""

from __future__ import annotations

import io
import os
import random
import re
import sqlite3
from collections.abc import Generator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import errscan
from errscan.analyzer import link, related, scan, state
from errscan.analyzer.index import HeldModules, Index
from tests.support import build_repo, commit_all, git, write

_WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]


def _fresh_and_incremental(repo: Path, jobs: int | None = None) -> None:
    """The scan that reuses the kept state equals a scan from nothing, record for record
    and byte for byte."""
    kept = errscan.extract(str(repo), jobs=jobs)
    fresh = errscan.extract(str(repo), use_cache=False, jobs=jobs)
    assert kept.records == fresh.records
    assert kept.file_errors == fresh.file_errors
    assert kept.stats.sites == fresh.stats.sites
    if jobs is not None:  # a first scan as jsonl: ranked and linked by the workers
        assert _jsonl(repo, use_cache=False, jobs=jobs) == _jsonl(repo, use_cache=False, jobs=1)


def _jsonl(repo: Path, **options: object) -> str:
    out = io.StringIO()
    errscan.export(str(repo), "jsonl", stream=out, **options)  # type: ignore[arg-type]
    return out.getvalue()


def _count_links(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    linked: list[str] = []
    real = link.link

    def counting(sites, *args, **kwargs):  # type: ignore[no-untyped-def]
        sites = list(sites)
        linked.extend(sorted({site.file for site in sites}))
        return real(sites, *args, **kwargs)

    monkeypatch.setattr(link, "link", counting)
    return linked


def test_an_edit_relinks_only_what_it_reaches(
    basic_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    errscan.extract(str(basic_repo))
    linked = _count_links(monkeypatch)
    with open(basic_repo / "pkg/latin.py", "a", encoding="utf-8") as source:
        source.write('\n\ndef added():\n    raise ValueError("an added error")\n')
    commit_all(basic_repo, "edit")
    again = errscan.extract(str(basic_repo))
    assert "pkg/latin.py" in linked
    assert "pkg/engine.py" not in linked and "tests/test_engine.py" not in linked
    monkeypatch.undo()
    fresh = errscan.extract(str(basic_repo), use_cache=False)
    assert again.records == fresh.records
    assert _jsonl(basic_repo, use_cache=False) == _jsonl(basic_repo)


def test_marks_to_relink_follow_the_listing_whatever_the_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state streams its marks in SQLite's path order beside the listing's, made
    in Python: the two orders must agree for names beyond ASCII too."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    names = ["Z.py", "a b.py", "a-b.py", "a/b.py", "a0.py", "é.py", "日本/x.py", "\U0001f600.py"]
    for name in names:
        write(repo, name, f"raise ValueError({name!r})\n")
    commit_all(repo, "odd names")
    errscan.extract(str(repo))
    linked = _count_links(monkeypatch)
    with open(repo / "é.py", "a", encoding="utf-8") as source:
        source.write('\n\ndef added():\n    raise ValueError("an added error")\n')
    commit_all(repo, "edit")
    again = errscan.extract(str(repo))
    assert linked == ["é.py"]
    monkeypatch.undo()
    assert again.records == errscan.extract(str(repo), use_cache=False).records


def test_an_exception_class_change_reaches_the_files_raising_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = build_repo(tmp_path / "messages", "messages")
    before = errscan.extract(str(repo))
    errors = (repo / "msgs/errors.py").read_text(encoding="utf-8")
    assert "class MsgsError(Exception):" in errors
    write(repo, "msgs/errors.py", errors.replace("MsgsError(Exception)", "MsgsError(LookupError)"))
    commit_all(repo, "rebase an exception")
    linked = _count_links(monkeypatch)
    after = errscan.extract(str(repo))
    assert "msgs/cases.py" in linked  # it raises MsgsError's subclasses: not in the change
    bases = {r.exception_bases for r in after.records} - {r.exception_bases for r in before.records}
    assert any("LookupError" in b for b in bases)
    monkeypatch.undo()
    _fresh_and_incremental(repo)


def _module(rng: random.Random, name: str, count: int) -> str:
    lines = ["import os", "from pkg import errors", ""]
    for i in range(count):
        words = " ".join(rng.sample(_WORDS, 2))
        lines.append(f"def {name}_{i}(value):")
        if rng.random() < 0.4:
            var = rng.choice(["MODE_A", "MODE_B"])
            lines.append(f"    if os.environ.get({var!r}) and value > {i}:")
        else:
            lines.append(f"    if value > {i}:")
        exc = rng.choice(["ValueError", "errors.Problem", "errors.Other"])
        lines.append(f"        raise {exc}(f{(words + ' {value}')!r})")
        lines.append("")
    return "\n".join(lines) + "\n"


def _errors(rng: random.Random) -> str:
    base = rng.choice(["ValueError", "KeyError", "RuntimeError"])
    return (
        f"class Problem({base}):\n    '''A problem.'''\n\n\n"
        + rng.choice(["class Other(Problem):\n    pass\n\n\n", ""])  # defined or not
        + f"def fail(x):\n    raise Problem(f'{rng.choice(_WORDS)} {{x}}')\n"
    )


def _stub(rng: random.Random) -> str:
    """A stub of the errors module: its classes count where the module lacks them."""
    base = rng.choice(["LookupError", "OSError"])
    return f"class Problem(Exception): ...\nclass Other({base}): ...\n"


_SEEDS = int(os.environ.get("ERRSCAN_STATE_SEEDS", "8"))


@pytest.mark.parametrize(
    ("seed", "pooled"), [(seed, False) for seed in range(_SEEDS)] + [(100, True), (101, True)]
)
def test_random_histories_rescan_as_fresh_scans(
    seed: int, pooled: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commits that edit, add and remove files, move words across the related-errors
    thresholds (a word in over 20 records, counts crossing a power of two) and change
    exception classes: after each, the incremental scan equals a fresh one. `pooled`:
    files scanned and records ranked in a pool, a few records at a time."""
    if pooled:
        monkeypatch.setattr(scan, "_POOL_MIN_BYTES", 0)
        monkeypatch.setattr(related, "_GROUP", 3)
    jobs = 2 if pooled else None
    rng = random.Random(seed)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/errors.py", _errors(rng))
    modules = {f"pkg/m{i}.py": rng.randint(3, 12) for i in range(4)}
    for path, count in modules.items():
        write(repo, path, _module(rng, Path(path).stem, count))
    commit_all(repo, "start")
    _fresh_and_incremental(repo, jobs)
    for step in range(6):
        action = rng.choice(["edit", "edit", "edit", "add", "remove", "errors", "stub"])
        if action == "edit" or (action == "remove" and len(modules) < 2):
            path = rng.choice(sorted(modules))
            modules[path] = max(0, modules[path] + rng.randint(-4, 6))
            write(repo, path, _module(rng, Path(path).stem, modules[path]))
        elif action == "add":
            path = f"pkg/n{step}.py"
            modules[path] = rng.randint(1, 8)
            write(repo, path, _module(rng, Path(path).stem, modules[path]))
        elif action == "remove":
            path = rng.choice(sorted(modules))
            del modules[path]
            (repo / path).unlink()
        elif action == "stub" and (repo / "pkg/errors.pyi").exists() and rng.random() < 0.5:
            (repo / "pkg/errors.pyi").unlink()
        elif action == "stub":
            write(repo, "pkg/errors.pyi", _stub(rng))
        else:
            write(repo, "pkg/errors.py", _errors(rng))
        commit_all(repo, f"step {step}: {action}")
        _fresh_and_incremental(repo, jobs)


_PATHS = st.sampled_from(
    ["a/m.py", "a/m.pyi", "b/m.py", "b/m.pyi", "m.py", "m.pyi", "c/d/m.py", "c/d/m.pyi"]
)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(_PATHS, st.lists(st.sampled_from(["E", "F", "G.H"]), max_size=3)),
    st.booleans(),
)
def test_the_state_claims_a_name_for_the_file_an_index_in_memory_would(
    files: dict[str, list[str]], hold: bool
) -> None:
    """Where several files define one name (modules of one name in folders that are not
    packages, a module and its stub), the state's table picks the file the index does;
    `definitions` answers as the table does, from the names plan held or not, and
    again once it has handed those over."""
    paths = sorted(files)
    memory = Index(HeldModules(paths), lambda _path: None)
    kept = state.State.private()
    try:
        for path in paths:
            memory.register(path, files[path], files[path])
            kept.stage(path, "0" * 40, state.names_text(files[path], files[path]))
        plan = kept.plan(lambda path, text: memory.defines(path, *state.names_of(text)), hold=hold)
        assert plan.relink_all
        stored = Index(HeldModules(paths), lambda _path: None, kept.defined)
        for name in ["m.E", "m.F", "m.G.H", "m.X"]:
            assert stored._class_file(name) == memory._class_file(name)
            assert stored._factory_file(name) == memory._factory_file(name)
        # every name claimed, answered from what plan wrote, as the table answers it
        keys = {key for (key,) in kept.db.execute("SELECT key FROM defn")}
        table = {key: kept.defined(key) for key in keys}
        assert kept.definitions() == table
        assert kept.definitions() == table  # read from the table, once handed over
    finally:
        kept.close()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(st.characters(codec="utf-8")), max_size=8),  # no lone surrogate
    st.booleans(),
)
def test_what_a_file_depended_on_is_kept_as_it_was(deps: list[str], asked_first: bool) -> None:
    """What a file depended on is kept as its row's JSON array, and the rows of `dep`
    are made from it (json_each) when first asked, or as the file is kept once they
    have been: either way each is kept as the string it was, quotes, escapes, newlines
    and all, in order (one with a NUL too, which json_each would cut)."""
    from errscan.analyzer.files import BlobEntry

    kept = state.State.private()
    try:
        entry = BlobEntry("pkg/a.py", "0" * 40, 1)
        kept.stage(entry.path, entry.sha, state.names_text([], []))
        kept.plan(lambda _path, _text: set())
        if asked_first:
            kept.redo_dependents([])
        kept.keep(entry, state.deps_text(deps), "", 0, None)
        if not asked_first:  # the rows and their indexes wait for the first question
            assert not _indexes(kept.db) & {"dep_used", "dep_path"}
            assert kept.db.execute("SELECT count(*) FROM dep").fetchone()[0] == 0
        kept.redo_dependents([])
        rows = kept.db.execute("SELECT used FROM dep WHERE path = ? ORDER BY rowid", (entry.path,))
        assert [used for (used,) in rows] == sorted(deps)
        assert {"dep_used", "dep_path"} <= _indexes(kept.db)
    finally:
        kept.close()


def test_a_scan_cut_short_keeps_the_last_state(basic_repo: Path, _private_cache: Path) -> None:
    errscan.extract(str(basic_repo))
    with open(basic_repo / "pkg/latin.py", "a", encoding="utf-8") as source:
        source.write('\n\ndef added():\n    raise ValueError("an added error")\n')
    commit_all(basic_repo, "edit")
    running = errscan.scan(str(basic_repo))
    iterator = iter(running)
    assert isinstance(iterator, Generator)
    next(iterator)
    iterator.close()  # the consumer stopped: nothing of this scan is kept
    (kept,) = (_private_cache / "state").glob("*.sqlite")
    db = sqlite3.connect(kept)
    (commit,) = db.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
    db.close()
    assert commit == git(basic_repo, "rev-parse", "HEAD~1")
    _fresh_and_incremental(basic_repo)


def test_a_damaged_state_is_made_anew(basic_repo: Path, _private_cache: Path) -> None:
    errscan.extract(str(basic_repo))
    (kept,) = (_private_cache / "state").glob("*.sqlite")
    kept.write_bytes(b"not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{kept}{suffix}").unlink(missing_ok=True)
    with open(basic_repo / "pkg/latin.py", "a", encoding="utf-8") as source:
        source.write("\n\ndef added():\n    raise ValueError('x')\n")
    commit_all(basic_repo, "edit")
    _fresh_and_incremental(basic_repo)


def _boot_of(path: Path) -> str | None:
    db = sqlite3.connect(path)
    try:
        found = db.execute("SELECT value FROM meta WHERE key = 'boot'").fetchone()
    finally:
        db.close()
    return None if found is None else str(found[0])


def _synchronous(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The synchronous setting of each state connection made from now on."""
    seen: list[int] = []
    connect = state._connect

    def noting(path: Path | None, wait: float) -> sqlite3.Connection:
        db = connect(path, wait)
        if path is not None:
            seen.append(db.execute("PRAGMA synchronous").fetchone()[0])
        return db

    monkeypatch.setattr(state, "_connect", noting)
    return seen


@pytest.mark.parametrize("recorded", ["0f6a-another-boot", None])
def test_a_state_not_made_in_this_boot_is_made_anew(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch, recorded: str | None
) -> None:
    """A state is written without waiting for the disk, so one made in another boot (an
    operating system's crash may have lost its last writes) or that does not say its
    boot (a torn write) is not read: the rescan starts afresh, as a first scan."""
    monkeypatch.setattr(state, "_boots", ["a1b2-this-boot"])
    seen = _synchronous(monkeypatch)
    errscan.extract(str(basic_repo))
    (path,) = (_private_cache / "state").glob("*.sqlite")
    assert _boot_of(path) == "a1b2-this-boot"
    assert seen == [0]  # OFF: no commit waits for the disk
    db = sqlite3.connect(path, isolation_level=None)
    if recorded is None:
        db.execute("DELETE FROM meta WHERE key = 'boot'")
    else:
        db.execute("UPDATE meta SET value = ? WHERE key = 'boot'", (recorded,))
    db.close()
    with open(basic_repo / "pkg/latin.py", "a", encoding="utf-8") as source:
        source.write('\n\ndef added():\n    raise ValueError("an added error")\n')
    commit_all(basic_repo, "edit")
    fresh_states: list[bool] = []
    real = state.State.__init__

    def noting(self: state.State, db: sqlite3.Connection) -> None:
        real(self, db)
        fresh_states.append(self.fresh)

    monkeypatch.setattr(state.State, "__init__", noting)
    _fresh_and_incremental(basic_repo)
    assert fresh_states[0] is True  # the rescan found nothing kept
    assert _boot_of(path) == "a1b2-this-boot"
    # made in this boot: kept, and read by the next scan
    _fresh_and_incremental(basic_repo)
    assert fresh_states[2] is False


def test_without_a_boot_id_a_state_s_commits_wait_for_the_disk(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state, "_boots", [None])
    seen = _synchronous(monkeypatch)
    errscan.extract(str(basic_repo))
    (path,) = (_private_cache / "state").glob("*.sqlite")
    assert _boot_of(path) is None
    assert seen == [1]  # NORMAL, as before boot ids
    with open(basic_repo / "pkg/latin.py", "a", encoding="utf-8") as source:
        source.write('\n\ndef added():\n    raise ValueError("an added error")\n')
    commit_all(basic_repo, "edit")
    linked = _count_links(monkeypatch)
    again = errscan.extract(str(basic_repo))
    assert "pkg/latin.py" in linked and "pkg/engine.py" not in linked  # the state was read
    monkeypatch.undo()
    assert again.records == errscan.extract(str(basic_repo), use_cache=False).records


def test_this_boot_s_id_is_read_from_the_system(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state, "_boots", [])
    if os.path.exists(state._BOOT_ID):
        with open(state._BOOT_ID, encoding="ascii") as found:
            assert state._boot() == found.read().strip()
    else:
        assert state._boot() is None
    monkeypatch.setattr(state, "_boots", [])
    monkeypatch.setattr(state, "_BOOT_ID", "/nonexistent/boot_id")
    assert state._boot() is None


def test_a_busy_state_gives_a_private_one(basic_repo: Path, _private_cache: Path) -> None:
    errscan.extract(str(basic_repo))
    (kept,) = (_private_cache / "state").glob("*.sqlite")
    holder = sqlite3.connect(kept, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another errscan scanning this lineage
    try:
        _fresh_and_incremental(basic_repo)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_states_are_pruned_least_recently_used_first(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    for i in range(5):
        path = folder / f"{i}.sqlite"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1000 + i, 1000 + i))
    assert state.prune(tmp_path, max_bytes=10_000, max_states=3) == 2
    assert sorted(p.name for p in folder.iterdir()) == ["2.sqlite", "3.sqlite", "4.sqlite"]
    assert state.prune(tmp_path, max_bytes=250) == 1
    assert state.usage(tmp_path) == (2, 200)


def test_an_unusable_state_dir_gives_a_private_state(
    basic_repo: Path, _private_cache: Path
) -> None:
    _private_cache.mkdir(parents=True, exist_ok=True)
    (_private_cache / "state").write_text("a file where the folder goes")
    _fresh_and_incremental(basic_repo)
    assert (_private_cache / "state").read_text() == "a file where the folder goes"


def _indexes(db: sqlite3.Connection) -> set[str]:
    return {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def test_a_first_scan_builds_its_tables_indexes_at_the_end(
    basic_repo: Path, _private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first scan writes the ranking's keys and the defined names without their
    indexes, and builds those once the rows are in: the state it keeps has every index
    the schema declares, and rescans as a fresh scan would. What each file used is made
    into rows, and indexed, by the first rescan that asks which files used what."""
    schema = sqlite3.connect(":memory:")
    schema.executescript(state._SCHEMA + related.SCHEMA)
    declared = _indexes(schema)
    deferred = {"post_key", "post_id", "word_word", "word_id"}
    assert deferred | {"defn_key", "defn_path"} <= declared
    assert not declared & {"dep_used", "dep_path"}
    before: list[set[str]] = []
    build = related.Ranking.build_indexes

    def building(self: related.Ranking) -> None:
        before.append(_indexes(self._db))
        build(self)

    monkeypatch.setattr(related.Ranking, "build_indexes", building)
    errscan.extract(str(basic_repo))
    assert not before[0] & deferred
    (path,) = (_private_cache / "state").glob("*.sqlite")
    kept = sqlite3.connect(path)
    assert _indexes(kept) == declared
    assert kept.execute("SELECT count(*) FROM dep").fetchone()[0] == 0
    used = kept.execute("SELECT sum(json_array_length(deps)) FROM file").fetchone()[0]
    assert used > 0
    with open(basic_repo / "pkg/latin.py", "a", encoding="utf-8") as source:
        source.write('\n\ndef added():\n    raise ValueError("an added error")\n')
    commit_all(basic_repo, "edit")
    _fresh_and_incremental(basic_repo)
    assert _indexes(kept) == declared | {"dep_used", "dep_path"}
    rows = kept.execute("SELECT count(*) FROM dep").fetchone()[0]
    assert rows == kept.execute("SELECT sum(json_array_length(deps)) FROM file").fetchone()[0]
    kept.close()


def test_a_new_state_is_written_once_and_kept_with_a_log_after(
    basic_repo: Path, _private_cache: Path
) -> None:
    """A new state's first scan writes its pages into the file under a rollback journal
    (a write-ahead log would take them twice); the scans after it keep the log."""
    errscan.extract(str(basic_repo))
    (path,) = (_private_cache / "state").glob("*.sqlite")
    kept = sqlite3.connect(path)
    assert kept.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    kept.close()
    with open(basic_repo / "pkg/latin.py", "a", encoding="utf-8") as source:
        source.write('\n\ndef added():\n    raise ValueError("an added error")\n')
    commit_all(basic_repo, "edit")
    _fresh_and_incremental(basic_repo)
    kept = sqlite3.connect(path)
    assert kept.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    kept.close()


def test_sql_names_its_placeholders_or_numbers_none() -> None:
    """No `?1` in errscan's SQL: Python 3.12's sqlite3 deprecates numbered placeholders
    given a sequence of values, and 3.14 refuses them (named ones take a dict)."""
    import ast

    numbered = re.compile(r"\?\d")
    found = []
    for path in sorted(Path(errscan.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if numbered.search(node.value) and _SQL.search(node.value):
                found.append(f"{path.name}:{node.lineno}")
    assert not found


_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b")


def test_a_new_state_file_is_made_of_16_kb_pages(tmp_path: Path) -> None:
    """A first scan writes every file's records into the state: in 16 KB pages, a few KB
    block takes fewer overflow pages. A state file made before keeps its own pages."""
    kept = state.State.open(tmp_path, "new")
    kept.close()
    old = tmp_path / "state" / "old.sqlite"
    with sqlite3.connect(old) as db:
        db.execute("CREATE TABLE x (y)")  # a file of SQLite's default pages, not a state
    with sqlite3.connect(old) as db:
        assert db.execute("PRAGMA page_size").fetchone()[0] == 4096
    made = state._connect(tmp_path / "state" / "new.sqlite", 1.0)
    remade = state._connect(old, 1.0)  # another layout: its tables made anew, in place
    try:
        assert made.execute("PRAGMA page_size").fetchone()[0] == 16384
        assert remade.execute("PRAGMA page_size").fetchone()[0] == 4096
        assert remade.execute("PRAGMA user_version").fetchone()[0] == state._SCHEMA_VERSION
    finally:
        made.close()
        remade.close()


@pytest.mark.parametrize("hold", [False, True])
def test_plan_holds_the_names_in_memory_only_where_asked(hold: bool) -> None:
    """A first scan's names are written to the table; plan keeps them in memory too
    only where asked (for the pool's linking workers): a scan whose main process links
    its files reads the table, and its memory does not grow with the names it defines
    (60,000 here; the benchmark's 20,000 copies define 220,793)."""
    import tracemalloc

    paths = [f"pkg{i // 500}/m{i}.py" for i in range(3_000)]
    classes = [f"Error{j}" for j in range(20)]
    index = Index(HeldModules(paths), lambda _path: None)
    kept = state.State.private()
    try:
        for path in paths:
            kept.stage(path, "0" * 40, state.names_text(classes, []))
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            kept.plan(lambda path, text: index.defines(path, *state.names_of(text)), hold=hold)
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        names = kept.db.execute("SELECT count(*) FROM defn").fetchone()[0]
        assert names == 60_000
        if hold:
            assert held > 60 * names  # the keys themselves, each some 90 bytes
        else:
            assert held < 10 * names  # nothing a name
        assert len(kept.definitions()) == names
    finally:
        kept.close()
