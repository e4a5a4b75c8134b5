"""`errscan batch`: local processes always; Ray against a real local cluster on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import build_repo, commit_all, interruptible, many_errors_repo

ERRSCAN = [sys.executable, "-m", "errscan"]


def _repos(tmp_path: Path, count: int) -> list[Path]:
    found = []
    for i in range(count):
        repo = build_repo(tmp_path / f"repo{i}", "basic")
        (repo / "pkg" / f"own{i}.py").write_text(f"def g():\n    raise KeyError('own {i}')\n")
        commit_all(repo, "own")
        found.append(repo)
    return found


def _batch(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ERRSCAN, "batch", *args, "--db", str(tmp_path / "errscan.db"),
         "--cache-dir", str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


def _stored(tmp_path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(tmp_path / "errscan.db") as db:
        return list(db.execute("SELECT repo, commit_sha FROM scans ORDER BY repo"))


def _stored_yet(tmp_path: Path) -> int:
    """Scans stored so far by a batch still running: none while its store is being made
    (the file may exist before its tables do)."""
    if not (tmp_path / "errscan.db").exists():
        return 0
    try:
        return len(_stored(tmp_path))
    except sqlite3.OperationalError:
        return 0


def test_a_list_is_scanned_and_stored_and_a_failure_does_not_stop_it(tmp_path: Path) -> None:
    repos = _repos(tmp_path, 3)
    listing = tmp_path / "repos.txt"
    listing.write_text(
        "# three repositories and a bad revision\n"
        f"{repos[0]}@HEAD\n\n{repos[1]}\n{repos[2]}@main  # a comment\n{repos[0]}@nosuchrev\n"
    )
    done = _batch(tmp_path, str(listing), "-j", "2")
    assert done.returncode == 3, done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["scanned"] == 3 and report["summary"]["failed"] == 1
    failed = [r for r in report["repos"] if r["status"] == "failed"]
    assert "nosuchrev" in failed[0]["error"]
    assert len(_stored(tmp_path)) == 3
    again = _batch(tmp_path, str(listing))
    assert json.loads(again.stdout)["summary"]["done before"] == 3  # nothing scanned twice
    assert len(_stored(tmp_path)) == 3
    alone = tmp_path / "alone.db"  # a batch stores what extract --db stores, byte for byte
    subprocess.run([*ERRSCAN, "extract", str(repos[1]), "--db", str(alone), "-q", "-o",
                    os.devnull], check=True)  # fmt: skip
    query = "SELECT r.id, r.exception, r.file, r.line, r.data FROM records r JOIN scans s "
    query += "ON r.scan_id = s.id WHERE s.repo = ? ORDER BY r.id"
    with sqlite3.connect(tmp_path / "errscan.db") as batch, sqlite3.connect(alone) as single:
        name = str(repos[1])
        assert list(batch.execute(query, (name,))) == list(single.execute(query, (name,)))
        assert list(single.execute(query, (name,)))


def test_a_toml_list_as_track_reads_it(tmp_path: Path) -> None:
    (repo,) = _repos(tmp_path, 1)
    listing = tmp_path / "repos.toml"
    listing.write_text(f'[[repos]]\nrepo = "{repo}"\nbranch = "main"\ninclude_tests = true\n')
    done = _batch(tmp_path, str(listing))
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(tmp_path / "errscan.db") as db:
        (options,) = db.execute("SELECT options FROM scans").fetchone()
    assert json.loads(options)["include_tests"] is True


def test_a_repository_past_its_timeout_fails_alone(tmp_path: Path) -> None:
    slow = many_errors_repo(tmp_path / "slow", files=120, per_file=100)  # about 6 s
    (quick,) = _repos(tmp_path, 1)  # well under a second, even on a loaded machine
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{slow}\n{quick}\n")
    done = _batch(tmp_path, str(listing), "--repo-timeout", "2", "-j", "2")
    assert done.returncode == 3
    outcomes = {r["target"]: r for r in json.loads(done.stdout)["repos"]}
    assert "timed out" in outcomes[f"{slow}@HEAD"]["error"]
    assert outcomes[f"{quick}@HEAD"]["status"] == "scanned"


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


def test_a_killed_worker_is_retried_and_each_repository_stored_once(tmp_path: Path) -> None:
    slow = many_errors_repo(tmp_path / "slow", files=60, per_file=100)
    repos = _repos(tmp_path, 2)
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{slow}\n{repos[0]}\n{repos[1]}\n")
    args = [*ERRSCAN, "batch", str(listing), "--db", str(tmp_path / "errscan.db"),
            "--cache-dir", str(tmp_path / "cache"), "-j", "1"]  # fmt: skip
    running = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not _children(running.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # into the scan of the slow repository
    for child in _children(running.pid):
        os.kill(child, signal.SIGKILL)
    out, err = running.communicate(timeout=120)
    assert running.returncode == 0, err
    report = json.loads(out)
    first = next(r for r in report["repos"] if r["target"] == f"{slow}@HEAD")
    assert first["status"] == "scanned" and first["attempts"] == 2
    stored = _stored(tmp_path)
    assert len(stored) == 3 == len(set(stored))


def test_an_interrupted_batch_resumes_where_it_stopped(tmp_path: Path) -> None:
    slow = many_errors_repo(tmp_path / "slow", files=60, per_file=100)
    repos = _repos(tmp_path, 3)
    listing = tmp_path / "repos.txt"
    listing.write_text("".join(f"{r}\n" for r in [*repos[:1], slow, *repos[1:]]))
    args = [*ERRSCAN, "batch", str(listing), "--db", str(tmp_path / "errscan.db"),
            "--cache-dir", str(tmp_path / "cache"), "-j", "1"]  # fmt: skip
    running = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=interruptible)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if _stored_yet(tmp_path) >= 1:
            break
    time.sleep(0.3)  # into the slow one
    running.send_signal(signal.SIGINT)
    out, err = running.communicate(timeout=60)
    assert running.returncode == 130, err
    assert json.loads(out)["summary"]["interrupted"] is True
    kept = len(_stored(tmp_path))
    assert 1 <= kept < 4
    resumed = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)["summary"]
    assert summary["done before"] == kept and summary["scanned"] == 4 - kept
    stored = _stored(tmp_path)
    assert len(stored) == 4 == len(set(stored))


def test_ray_without_the_extra_says_how_to_get_it(tmp_path: Path) -> None:
    (repo,) = _repos(tmp_path, 1)
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{repo}\n")
    code = (
        "import sys; sys.modules['ray'] = None; from errscan.cli import main; "
        f"sys.exit(main(['batch', {str(listing)!r}, '--ray', '--db', "
        f"{str(tmp_path / 'errscan.db')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2
    assert "pip install 'errscan[ray]'" in done.stderr and len(done.stderr.splitlines()) == 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Ray cluster on 127.0.0.1 (head node, two CPUs), for this module's tests."""
    pytest.importorskip("ray", reason="the [ray] extra, which .ci/run installs")
    ray = shutil.which("ray", path=os.path.dirname(sys.executable)) or shutil.which("ray")
    assert ray is not None
    port = _free_port()
    temp = tmp_path_factory.mktemp("ray")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    subprocess.run(
        [ray, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}",
         "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats",
         f"--temp-dir={temp}"],
        check=True, capture_output=True, env=env, timeout=120,
    )  # fmt: skip
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([ray, "stop", "--force"], capture_output=True, env=env, timeout=120)


def _ray_env() -> dict[str, str]:
    return {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


def test_ray_scans_each_repository_as_a_task_on_the_cluster(
    ray_cluster: str, tmp_path: Path
) -> None:
    repos = _repos(tmp_path, 3)
    listing = tmp_path / "repos.txt"
    listing.write_text("".join(f"{r}\n" for r in repos) + f"{repos[0]}@nosuchrev\n")
    done = _batch(tmp_path, str(listing), "--ray", ray_cluster, env=_ray_env())
    assert done.returncode == 3, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert summary["scanned"] == 3 and summary["failed"] == 1
    assert len(_stored(tmp_path)) == 3
    local = tmp_path / "local"
    local.mkdir()
    same = _batch(local, str(listing))  # the same records as local mode
    with sqlite3.connect(tmp_path / "errscan.db") as a, sqlite3.connect(local / "errscan.db") as b:
        query = "SELECT id, data FROM records ORDER BY id"
        assert list(a.execute(query)) == list(b.execute(query))
    assert same.returncode == 3


def test_a_ray_worker_killed_mid_batch_is_retried_and_stored_once(
    ray_cluster: str, tmp_path: Path
) -> None:
    slow = many_errors_repo(tmp_path / "slow", files=60, per_file=100)
    repos = _repos(tmp_path, 2)
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{slow}\n{repos[0]}\n{repos[1]}\n")
    args = [*ERRSCAN, "batch", str(listing), "--db", str(tmp_path / "errscan.db"),
            "--cache-dir", str(tmp_path / "cache"), "--ray", ray_cluster]  # fmt: skip
    running = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=_ray_env())  # fmt: skip
    killed: list[int] = []
    deadline = time.monotonic() + 60
    while not killed and time.monotonic() < deadline:
        time.sleep(0.1)
        found = subprocess.run(["pgrep", "-f", "ray::scan_one"], capture_output=True, text=True)
        for pid in found.stdout.split():  # a Ray worker titles itself by the task it runs
            os.kill(int(pid), signal.SIGKILL)
            killed.append(int(pid))
    _, err = running.communicate(timeout=180)
    assert killed, "no Ray worker was seen running a scan"
    assert running.returncode == 0, err
    stored = _stored(tmp_path)
    assert len(stored) == 3 == len(set(stored))
