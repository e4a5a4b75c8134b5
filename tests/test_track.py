"""The scheduled job: the commands the workflow runs, on local repositories that gain
commits between two runs; the workflow and action files parsed and checked."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from typing_extensions import Unpack
import yaml
from click.testing import CliRunner

from errscan.cli import cli
from tests.support import ROOT, build_repo, commit_all, write


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "errscan.toml"
    path.write_text(body)
    return path


def test_two_track_runs_report_what_changed(tmp_path: Path) -> None:
    first = build_repo(tmp_path / "first", "basic")
    second = build_repo(tmp_path / "second", "messages")
    cfg = config(
        tmp_path,
        f'[[repos]]\nrepo = "{first}"\nbranch = "main"\n\n'
        f'[[repos]]\nrepo = "{second}"\nrev = "main"\ninclude_tests = true\n',
    )
    db, reports = tmp_path / "errscan.db", tmp_path / "report"
    code, out, err = run("track", str(cfg), "--db", str(db), "--report-dir", str(reports))
    assert code == 0, err
    assert out.count(": scanned ") == 2
    write(first, "pkg/new.py", 'raise ValueError("added between runs")\n')
    commit_all(first, "one more error")
    code, out, _ = run("track", str(cfg), "--db", str(db), "--report-dir", str(reports))
    assert code == 0
    assert f"{first}: scanned" in out and "1 added, 0 removed, 0 reworded, 0 moved" in out
    assert f"{second}: unchanged" in out
    report = json.loads((reports / "report.json").read_text())
    by_repo = {r["repo"]: r for r in report["repos"]}
    assert by_repo[str(first)]["counts"]["added"] == 1
    assert by_repo[str(second)]["status"] == "unchanged"
    markdown = (reports / "report.md").read_text()
    assert "| repository | status |" in markdown and "added between runs" in markdown
    assert run("scans", "--db", str(db))[1].count("\n") == 4  # a header, three scans


def test_one_failing_repository_does_not_stop_the_others(tmp_path: Path) -> None:
    good = build_repo(tmp_path / "good", "basic")
    cfg = config(
        tmp_path,
        f'[[repos]]\nrepo = "{tmp_path}/missing"\n\n'
        f'[[repos]]\nrepo = "{good}"\nbranch = "no-such-branch"\n\n'
        f'[[repos]]\nrepo = "{good}"\n',
    )
    code, out, _ = run(
        "track", str(cfg), "--db", str(tmp_path / "db"), "--report-dir", str(tmp_path)
    )
    assert code == 3
    assert "failed" in out and f"{good}: scanned" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert [r["status"] for r in report["repos"]] == ["failed", "failed", "scanned"]
    assert "path not found" in report["repos"][0]["error"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[[repos]]\nrepo = "x"\nbrnach = "main"\n', "errscan.toml:3: unknown key 'brnach'"),
        ('colour = "blue"\n[[repos]]\nrepo = "x"\n', "errscan.toml:1: unknown key 'colour'"),
        ('[[repos]]\nrepo = "x"\ninclude_tests = "yes"\n', "errscan.toml:3: 'include_tests'"),
        ("[[repos]]\nbranch = 'main'\n", "has no 'repo'"),
        ("repos = [\n", "not valid TOML"),
        ("db = 'x.db'\n", "no [[repos]] table"),
    ],
)
def test_bad_config_is_one_line_and_exit_2(tmp_path: Path, body: str, message: str) -> None:
    code, out, err = run("track", str(config(tmp_path, body)), "--report-dir", str(tmp_path))
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def _commands(path: Path) -> list[str]:
    document = yaml.safe_load(path.read_text())
    steps = [step for job in document.get("jobs", {}).values() for step in job["steps"]]
    steps += document.get("runs", {}).get("steps", [])
    scripts = (str(step.get("run", "")).replace("\\\n", " ") for step in steps)
    lines = [line for script in scripts for line in script.splitlines()]
    return [line.strip() for line in lines if re.match(r"\s*errscan ", line)]


@pytest.mark.parametrize("path", [".github/workflows/errscan-track.yml", "action.yml"])
def test_workflow_and_action_run_commands_that_exist(path: str) -> None:
    commands = _commands(ROOT / path)
    assert commands
    for command in commands:
        words = shlex.split(command.split("||")[0].split(">")[0])
        result = CliRunner().invoke(cli, [words[1], "--help"])
        assert result.exit_code == 0, command
        for word in words[2:]:
            if word.startswith("--"):
                assert word in result.stdout, f"{command}: {word}"


def test_workflow_is_scheduled_and_by_hand_and_the_config_parses() -> None:
    workflow = yaml.safe_load((ROOT / ".github/workflows/errscan-track.yml").read_text())
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads on: as True
    assert "schedule" in triggers and "workflow_dispatch" in triggers
    uses = [s.get("uses", "") for s in workflow["jobs"]["track"]["steps"]]
    assert any(u.startswith("actions/cache@") for u in uses)
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    from errscan.track import load_config

    tracked, db = load_config(ROOT / "errscan.toml")
    assert db == "errscan.db" and [t.repo for t in tracked] == ["sgl-project/sglang", "pypa/pip"]


def test_the_action_trusts_nothing_in_the_pull_request_s_checkout() -> None:
    """A pull request could commit a forged store or report: the action keeps its own in
    $RUNNER_TEMP, and no expression is pasted into a script where it could inject."""
    document = yaml.safe_load((ROOT / "action.yml").read_text())
    scripts = [str(step.get("run", "")) for step in document["runs"]["steps"]]
    joined = "\n".join(scripts).replace("\\\n", " ")
    assert "${{" not in "".join(scripts[1:])
    targets = re.findall(r"(?:--db|--body-file|>>?)\s+(\S+)", joined)
    assert targets and all(
        t.startswith('"$RUNNER_TEMP/') or t == '"$GITHUB_STEP_SUMMARY"' for t in targets
    ), targets


def test_any_failure_of_one_repository_is_that_repository_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only bad input: a bug, a database error, anything one repository raises."""
    import errscan

    broken = build_repo(tmp_path / "broken", "basic")
    good = build_repo(tmp_path / "good", "messages")
    real = errscan.extract

    def extract(target: str, **options: Unpack[errscan.ScanOptions]) -> errscan.ScanResult:
        if target.startswith(str(broken)):
            raise RuntimeError("something no one expected")
        return real(target, **options)

    monkeypatch.setattr(errscan, "extract", extract)
    cfg = config(tmp_path, f'[[repos]]\nrepo = "{broken}"\n\n[[repos]]\nrepo = "{good}"\n')
    reports = tmp_path / "report"
    code, _, _ = run(
        "track", str(cfg), "--db", str(tmp_path / "s.db"), "--report-dir", str(reports)
    )
    assert code == 3
    report = {r["repo"]: r for r in json.loads((reports / "report.json").read_text())["repos"]}
    assert report[str(broken)]["error"] == "internal error: RuntimeError: something no one expected"
    assert report[str(good)]["status"] == "scanned"


def test_credentials_in_a_failing_url_are_never_shown(tmp_path: Path) -> None:
    secret_url = "https://someone:hunter2@127.0.0.1:9/group/repo.git?private_token=s3cr3t#x"
    cfg = config(tmp_path, f'[[repos]]\nrepo = "{secret_url}"\nrev = "main"\n')
    reports = tmp_path / "report"
    result = CliRunner().invoke(
        cli, ["track", str(cfg), "--db", str(tmp_path / "s.db"), "--report-dir", str(reports)]
    )
    assert result.exit_code == 3
    shown = result.stdout + result.stderr
    shown += (reports / "report.md").read_text() + (reports / "report.json").read_text()
    assert "127.0.0.1:9/group/repo.git" in shown
    assert not any(secret in shown for secret in ("someone", "hunter2", "s3cr3t", "private_token"))


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            '[[repos]]\nrepo = "x"\ninclude = [1, 2]\n',
            "errscan.toml:3: 'include' must be a list of strings",
        ),
        ('repos = ["a"]\n', "'repos' must be [[repos]] tables"),
        ('repo-name = "a/b"\n[[repos]]\nrepo = "x"\n', "'repo-name' is not a setting here"),
        ('[[repos]]\nrepo = "x"\nrepo_name = "a/b"\n', "give a [[repos]] table 'name'"),
        ('[[repos]]\nrepo = "ext::sh -c touch% /tmp/x"\n', "remote helpers"),
        ('[[repos]]\nrepo = "--upload-pack=touch /tmp/x"\n', "invalid repository"),
    ],
)
def test_a_bad_config_is_bad_input(tmp_path: Path, body: str, said: str) -> None:
    code, out, err = run("track", str(config(tmp_path, body)), "--report-dir", str(tmp_path))
    assert code == 2 and said in err and err.count("\n") == 1 and not out


def test_a_relative_db_of_the_config_is_the_config_s_neighbour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = build_repo(tmp_path / "r", "basic")
    folder = tmp_path / "conf"
    folder.mkdir()
    cfg = folder / "errscan.toml"
    cfg.write_text(f'db = "kept.db"\n[[repos]]\nrepo = "{repo}"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    for expected in ("scanned", "unchanged"):  # the second run finds the first's scan
        code, out, err = run("track", str(cfg), "--report-dir", str(tmp_path / "report"))
        assert code == 0, err
        assert f": {expected} " in out
    assert (folder / "kept.db").is_file() and not list(elsewhere.iterdir())
