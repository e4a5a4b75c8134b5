"""The store, scans over time, the diff, export and SARIF (schema and Microsoft's multitool)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

import errscan
from errscan.analyzer import store as store_stage
from errscan.cli import cli
from tests.support import ROOT, commit_all, git, write

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-2.1.0-rtm.5.json").read_text())


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_extract_stores_once_and_lists_scans(basic_repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "errscan.db"
    for _ in range(2):
        assert (
            run("extract", str(basic_repo), "-q", "--db", str(db), "-o", str(tmp_path / "o"))[0]
            == 0
        )
    code, out, _ = run("scans", "--db", str(db))
    assert code == 0 and len(out.splitlines()) == 2  # a header, and the one scan
    assert "29 sites  1 file errors" in out
    store = store_stage.Store.open(db)
    (scan,) = store.scans()
    assert scan.commit_date and scan.commit_date.startswith("2026-01-01")
    assert len(store.records(scan)) == 29 and len(store.file_errors(scan)) == 1
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_diff_added_removed_reworded_moved(basic_repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "errscan.db"
    assert (
        run("extract", str(basic_repo), "-q", "--db", str(db), "-o", str(tmp_path / "a.jsonl"))[0]
        == 0
    )
    engine = (basic_repo / "pkg" / "engine.py").read_text()
    engine = engine.replace(
        'raise LookupError(f"cannot load {path!r}")',
        'raise LookupError(f"could not load {path!r}")',
    )
    engine = "\n\n" + engine.replace("            assert value < 100\n", "")
    write(basic_repo, "pkg/engine.py", engine)
    write(basic_repo, "pkg/new.py", 'raise ValueError("brand new")\n')
    commit_all(basic_repo, "change")
    assert (
        run("extract", str(basic_repo), "-q", "--db", str(db), "-o", str(tmp_path / "b.jsonl"))[0]
        == 0
    )
    for args in (
        ["diff", f"{basic_repo}@HEAD~1", "HEAD", "--db", str(db), "--json"],
        ["diff", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--json"],
    ):
        code, out, err = run(*args)
        assert code == 0, err
        result = json.loads(out)
        assert result["counts"] == {"added": 1, "removed": 1, "reworded": 1, "moved": 7}
        kinds = {c["kind"]: c for c in result["changes"]}
        assert kinds["added"]["new"]["message"] == "brand new"
        assert kinds["reworded"]["old"]["message"] == "cannot load {path!r}"
        assert kinds["reworded"]["new"]["message"] == "could not load {path!r}"
        assert kinds["removed"]["old"]["exception"] == "AssertionError"
    files = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    assert run("diff", *files, "--exit-code")[0] == 1  # a CI gate: errors changed
    assert run("diff", files[0], files[0], "--exit-code")[0] == 0
    assert run("diff", *files)[0] == 0
    code, out, _ = run(
        "diff", f"{basic_repo}@HEAD~1", "HEAD", "--db", str(db), "--format", "markdown"
    )
    assert code == 0 and "| 1 | 1 | 1 | 7 |" in out and "#### Reworded" in out


def test_diff_scans_a_side_not_in_the_store(basic_repo: Path, tmp_path: Path) -> None:
    write(basic_repo, "pkg/new.py", 'raise ValueError("brand new")\n')
    commit_all(basic_repo, "add")
    code, out, _ = run("diff", f"{basic_repo}@HEAD~1", "HEAD", "--db", str(tmp_path / "empty.db"))
    assert code == 0 and "1 added, 0 removed, 0 reworded, 0 moved" in out


def test_export_formats(basic_repo: Path, tmp_path: Path) -> None:
    db = tmp_path / "errscan.db"
    assert (
        run(
            "extract",
            str(basic_repo),
            "-q",
            "--db",
            str(db),
            "--repo-name",
            "acme/x",
            "-o",
            str(tmp_path / "o"),
        )[0]
        == 0
    )
    for fmt in ("jsonl", "json", "sarif", "csv"):
        code, out, err = run("export", f"{basic_repo}@HEAD", "--db", str(db), "--format", fmt)
        assert code == 0, err
        assert "Engine.__init__" in out
    code, _, err = run("export", f"{basic_repo}@HEAD", "--db", str(tmp_path / "none.db"))
    assert code == 2 and "no stored scan" in err


def test_sarif_is_valid_and_fingerprinted(basic_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.sarif"
    code, _, err = run(
        "extract",
        str(basic_repo),
        "--format",
        "sarif",
        "-o",
        str(out),
        "-q",
        "--repo-name",
        "acme/engine",
    )
    assert code == 0, err
    document = json.loads(out.read_text())
    jsonschema.validate(document, SCHEMA)
    run_ = document["runs"][0]
    assert run_["tool"]["driver"]["name"] == "errscan"
    assert run_["tool"]["driver"]["version"] == errscan.__version__
    records = errscan.extract(str(basic_repo), repo_name="acme/engine").records
    assert run_["versionControlProvenance"][0]["revisionId"] == records[0].commit
    assert [r["partialFingerprints"]["errscanId/v1"] for r in run_["results"]] == [
        r.id for r in records
    ]
    first = run_["results"][0]["locations"][0]["physicalLocation"]
    assert first["region"]["startLine"] == records[0].line
    # SARIF 2.1.0 3.27.10: a result whose kind is not "fail" has level "none"
    assert {(r["kind"], r["level"]) for r in run_["results"]} == {("informational", "none")}
    assert all(
        r["defaultConfiguration"]["level"] == "none" for r in run_["tool"]["driver"]["rules"]
    )
    assert "helpUri" not in out.read_text() and "informationUri" not in out.read_text()


def test_sarif_of_a_local_repository_names_no_local_path(basic_repo: Path, tmp_path: Path) -> None:
    for target in (str(basic_repo), f"file://{basic_repo}@HEAD"):
        out = tmp_path / "local.sarif"
        code, _, err = run("extract", target, "--format", "sarif", "-o", str(out), "-q")
        assert code == 0, err
        text = out.read_text()
        document = json.loads(text)
        jsonschema.validate(document, SCHEMA)
        assert str(tmp_path) not in text and "file:" not in text
        run_ = document["runs"][0]
        assert "versionControlProvenance" not in run_
        uris = [
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in run_["results"]
        ]
        assert uris and all(not uri.startswith("/") and ".." not in uri for uri in uris)


MULTITOOL = shutil.which("sarif-multitool")


@pytest.mark.skipif(
    MULTITOOL is None,
    reason="npm's @microsoft/sarif-multitool is not installed (.ci/run installs it)",
)
def test_sarif_multitool_finds_no_errors_or_warnings(basic_repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.sarif"
    assert run("extract", str(basic_repo), "--format", "sarif", "-o", str(out), "-q")[0] == 0
    report = tmp_path / "validation.sarif"
    assert MULTITOOL is not None
    subprocess.run(
        [MULTITOOL, "validate", str(out), "-o", str(report)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    found = json.loads(report.read_text())["runs"][0].get("results", [])
    assert [
        (r["ruleId"], r.get("level")) for r in found if r.get("level") in ("error", "warning")
    ] == []


def test_older_database_is_migrated_forward(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    store_stage.MIGRATIONS[0](db)
    db.execute("PRAGMA user_version = 1")
    db.close()
    store = store_stage.Store.open(path)
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == store_stage.SCHEMA_VERSION
    columns = [row[1] for row in store.db.execute("PRAGMA table_info(scans)")]
    assert "commit_date" in columns
    store.close()


_STATS = '{"files": 1, "sites": 2, "file_errors": 0}'


def test_a_version_4_store_gets_each_record_digest_without_its_commit(tmp_path: Path) -> None:
    path = tmp_path / "v4.db"
    db = sqlite3.connect(path, isolation_level=None)
    for migrate in store_stage.MIGRATIONS[:4]:
        migrate(db)
    db.execute("PRAGMA user_version = 4")
    for scan, commit in ((1, "a" * 40), (2, "b" * 40)):
        db.execute(
            "INSERT INTO scans (id, repo, commit_sha, errscan_version, options, stats, "
            "scanned_at) VALUES (?, 'o/n', ?, '1', '', ?, ?)",
            (scan, commit, _STATS, scan),
        )
        # r0 in the first scan only, r3 in the second only
        for record, text in (("r1", "same"), ("r2", f"moved {scan}"), (f"r{3 * (scan - 1)}", "")):
            data = json.dumps({"commit": commit, "url": f"https://x/blob/{commit}/f.py", "m": text})
            db.execute("INSERT INTO records (scan_id, id, exception, file, line, data) VALUES "
                       "(?, ?, NULL, 'f.py', 1, ?)", (scan, record, data))  # fmt: skip
    db.close()
    store = store_stage.Store.open(path)
    scans = store.scans("o/n")
    # r1 differs in its commit only
    assert sorted(store.changed(scans[0], scans[1])) == ["r2", "r3"]
    assert store.gone(scans[0], scans[1]) == ["r0"]
    store.close()


def test_corrupt_or_locked_store_is_one_line_and_exit_2(
    basic_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"not a database at all" * 100)
    code, _out, err = run("scans", "--db", str(corrupt))
    assert (
        code == 2
        and err.startswith("errscan: error: cannot use the store")
        and len(err.splitlines()) == 1
    )
    locked = tmp_path / "locked.db"
    store_stage.Store.open(locked).close()
    monkeypatch.setattr(store_stage, "_LOCK_WAIT", 0.5)
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        code, _out, err = run(
            "extract", str(basic_repo), "-q", "--db", str(locked), "-o", str(tmp_path / "o")
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 2 and "locked" in err and len(err.strip().splitlines()) == 1


def test_show_and_lookup_read_the_store_by_default(
    basic_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run("extract", str(basic_repo), "-q", "--db", "errscan.db", "-o", "o.jsonl")[0] == 0
    code, out, _ = run("lookup", "cannot load 'setup.cfg'")
    assert code == 0 and "pkg/engine.py:35" in out
    record_id = out.split()[0]
    code, out, _ = run("show", record_id)
    assert code == 0 and "Thrown at pkg/engine.py:35" in out


def test_two_processes_writing_one_store_lose_nothing(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.support import build_repo

    repos = [build_repo(tmp_path / f"r{i}", "basic") for i in range(4)]
    db = tmp_path / "shared.db"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "errscan",
                "extract",
                str(r),
                "-q",
                "--db",
                str(db),
                "--no-cache",
                "-o",
                str(tmp_path / f"o{i}.jsonl"),
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, r in enumerate(repos)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, results
    store = store_stage.Store.open(db)
    scans = store.scans()
    assert sorted(s.repo for s in scans) == sorted(str(r) for r in repos)
    assert all(len(store.records(s)) == 29 for s in scans)
    store.close()


def test_a_failed_save_leaves_no_half_scan(basic_repo: Path, tmp_path: Path) -> None:
    result = errscan.extract(str(basic_repo))
    store = store_stage.Store.open(tmp_path / "db")

    class Boom(Exception):
        pass

    broken = errscan.ScanResult(
        result.repo,
        result.commit,
        result.errscan_version,
        result.records,
        result.file_errors,
        result.stats,
    )
    original = store.db

    class Failing:
        def __getattr__(self, name: str) -> object:
            return getattr(original, name)

        def executemany(self, sql: str, rows: object) -> object:
            if "file_errors" in sql:
                raise Boom
            return original.executemany(sql, rows)  # type: ignore[arg-type]

    store.db = Failing()  # type: ignore[assignment]
    with pytest.raises(Boom):
        store.save(broken, "{}", None)
    store.db = original
    assert store.scans() == []
    assert store.db.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 0
    store.close()


def test_commit_date_is_stored_for_a_target_with_a_revision(
    basic_repo: Path, tmp_path: Path
) -> None:
    db = tmp_path / "errscan.db"
    code, _, err = run(
        "extract", f"{basic_repo}@main", "-q", "--db", str(db), "-o", str(tmp_path / "o")
    )
    assert code == 0, err
    store = store_stage.Store.open(db)
    (scan,) = store.scans()
    store.close()
    assert scan.commit_date is not None and scan.commit_date.startswith("2026-01-01")


def test_another_program_s_database_is_refused_unchanged(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE accounts (name TEXT)")
    db.commit()
    db.close()
    before = other.read_bytes()
    for args in (["scans"], ["export", "o/n@" + "a" * 40], ["extract", "--help"]):
        run(*args, "--db", str(other))
    code, _, err = run("scans", "--db", str(other))
    assert code == 2 and "not an errscan store" in err
    assert other.read_bytes() == before
    assert not [name for name in os.listdir(tmp_path) if name.startswith("other.db-")]


@pytest.mark.parametrize(
    "damage", [b"not a database at all", b"SQLite format 3\x00" + b"\xff" * 200]
)
def test_a_damaged_store_is_bad_input(tmp_path: Path, damage: bytes) -> None:
    store = tmp_path / "damaged.db"
    store.write_bytes(damage)
    code, _, err = run("scans", "--db", str(store))
    assert code == 2 and err.startswith("errscan: error: ") and err.count("\n") == 1


def test_read_only_commands_make_no_store(tmp_path: Path) -> None:
    missing = tmp_path / "new.db"
    for args in (["scans"], ["export", "o/n@" + "a" * 40], ["show", "abcd"]):
        code, _, _ = run(*args, "--db", str(missing))
        assert code == 2
    assert not missing.exists()


def test_export_of_a_stored_remote_scan_by_its_sha_asks_no_network(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT / "fixtures" / "repos" / "basic", source)
    git(source, "init", "-q", "-b", "main")
    sha = commit_all(source, "one")
    db, cache = tmp_path / "s.db", tmp_path / "cache"
    target = f"file://{source}@{sha}"
    assert run("extract", target, "--db", str(db), "--cache-dir", str(cache), "-q",
               "-o", os.devnull)[0] == 0  # fmt: skip
    shutil.rmtree(source)
    shutil.rmtree(cache)  # nothing left to fetch from, nor fetched: a resolve would fail
    out = tmp_path / "x.sarif"
    code, _, err = run("export", target, "--db", str(db), "--format", "sarif", "-o", str(out))
    assert code == 0, err
    assert json.loads(out.read_text())["runs"][0]["results"]
