"""The `errscan` command: parse options, call the API, print, return an exit code."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

import errscan
from errscan import config, launch, outfile
from errscan.analyzer import output, repo
from errscan.escape import visible
from errscan.frozen import frozen

if TYPE_CHECKING:
    from errscan.analyzer import diff as diff_stage
    from errscan.analyzer import store as store_stage
else:  # loaded by the commands that use them
    from errscan.lazy import LazyModule

    diff_stage = LazyModule("errscan.analyzer.diff")
    store_stage = LazyModule("errscan.analyzer.store")

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT, EXIT_SOME_FAILED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_NO_MATCH = 1  # lookup, as grep: 0 a match, 1 none, 2 bad input


class Terminated(KeyboardInterrupt):
    """SIGTERM (`timeout`, a CI cancel, systemd), raised in the main thread so that the
    scan unwinds as on Ctrl-C: temp output, temp folders and pool workers cleaned up."""


def _stdout_for_dash(value: Path | None) -> Path | None:
    """`-o -` is standard output, as for other tools, never a file named `-`."""
    return None if value is not None and str(value) == "-" else value


def _output(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`-o/--output PATH` of a command that writes one file, atomically; `-`: stdout."""
    return click.option(
        "-o",
        "--output",
        "output_path",
        type=click.Path(path_type=Path, allow_dash=True),
        callback=lambda _ctx, _param, value: _stdout_for_dash(value),
        help=help_text,
    )


_TO_STDOUT = "Write here (atomically) instead of to stdout (`-`)."


def _terminate(_signum: int, _frame: object) -> None:
    raise Terminated


class TargetType(click.ParamType):  # type: ignore[type-arg]
    """REPO@REV, checked for shape here; whether it exists is the API's to say."""

    name = "REPO@REV"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        text = str(value)
        try:
            repo.parse_target(text)
        except errscan.InputError as exc:
            self.fail(str(exc), param, ctx)
        return text


@frozen
class ExtractOptions:
    """What `extract` was asked: where the output goes, and the API's scan options."""

    target: str
    fmt: str
    output: Path | None
    quiet: bool
    db: Path | None
    scan: dict[str, Any]
    configs: tuple[Path, ...] = ()  # the user's configuration files that could apply


class ErrscanGroup(click.Group):
    """Turns what the API raises into one line on stderr and the documented exit code."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            command = exc.ctx.command_path if exc.ctx is not None else "errscan"
            hint = f" (see '{command} --help')"
            click.echo(f"errscan: error: {exc.format_message()}{hint}", err=True)
            ctx.exit(EXIT_INPUT)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            # the reader stopped early (`errscan extract ... | head`): not an error of ours
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(EXIT_OK)
        except Terminated:
            click.echo("errscan: terminated", err=True)
            ctx.exit(EXIT_TERMINATED)
        except KeyboardInterrupt:
            click.echo("errscan: interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except errscan.InputError as exc:
            click.echo(f"errscan: error: {visible(repo.redact(str(exc)))}", err=True)
            ctx.exit(EXIT_INPUT)
        except Exception as exc:
            sqlite3 = sys.modules.get("sqlite3")  # not loaded: the error is not SQLite's
            if sqlite3 is not None and isinstance(exc, sqlite3.OperationalError):
                # a locked or unreadable cache database
                click.echo(f"errscan: error: cache database: {exc}", err=True)
                ctx.exit(EXIT_INPUT)
            if os.environ.get("ERRSCAN_DEBUG"):
                raise
            message = visible(repo.redact(" ".join(str(exc).split())))
            click.echo(f"errscan: internal error: {type(exc).__name__}: {message}", err=True)
            ctx.exit(EXIT_INTERNAL)


_CACHE_DIR_OPTION = click.option(
    "--cache-dir",
    type=click.Path(path_type=Path),
    envvar="ERRSCAN_CACHE_DIR",
    help="Remote clones, results and outputs [default: ~/.cache/errscan].",
)
_CONFIG = click.option(
    "--config", "config_path", type=click.Path(path_type=Path, dir_okay=False),
    help="Settings from this errscan.toml or pyproject.toml [default: the nearest one].",
)  # fmt: skip
_ISOLATED = click.option(
    "--isolated", is_flag=True,
    help="Read no configuration file, neither yours nor the scanned repository's.",
)  # fmt: skip
_DB = click.option(
    "--db",
    type=click.Path(path_type=Path),
    envvar="ERRSCAN_DB",
    help="The store, SQLite [default: errscan.db; for track, the config's db first].",
)


@click.group(cls=ErrscanGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(errscan.__version__, "--version", "-V", prog_name="errscan")
def cli() -> None:
    """errscan: error records from a Git repository at a pinned commit."""


@cli.command()
@click.argument("target", type=TargetType())
@click.option(
    "--format",
    "fmt",
    type=click.Choice(output.FORMATS),
    default="jsonl",
    show_default=True,
    help="jsonl: a record a line; json: one document.",
)
@_output(_TO_STDOUT)
@click.option(
    "--include-tests/--no-include-tests", default=None,
    help="Scan test code too [default: no, or the configuration's include-tests].",
)  # fmt: skip
@click.option(
    "--test-path", "test_paths", multiple=True, metavar="GLOB",
    help="Paths of test code besides tests/, test_*.py, ... and the project's pytest testpaths.",
)  # fmt: skip
@click.option(
    "--kind", "kinds", metavar="KIND[,KIND...]", multiple=True,
    help="Keep records of these kinds only: raise, reraise, assert, exit, warning.",
)  # fmt: skip
@click.option(
    "--include-vendored/--no-include-vendored", default=None,
    help="Scan vendored code too (_vendor/, vendor/, third_party/, extern/) [default: no].",
)  # fmt: skip
@click.option("--include", multiple=True, metavar="GLOB", help="Only paths matching GLOB.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching GLOB.")
@click.option(
    "--context",
    type=click.IntRange(min=0),
    help="Lines of code kept on each side of a site [default: 15].",
)
@_CONFIG
@_ISOLATED
@click.option(
    "--no-repo-config", is_flag=True,
    help="Do not read the scanned repository's [tool.errscan] and pytest settings.",
)  # fmt: skip
@_CACHE_DIR_OPTION
@click.option(
    "--repo-name",
    metavar="OWNER/NAME",
    help="Name the repository so (a GitHub name or URL gives pinned links).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    help="Worker processes [default: the number of CPUs].",
)
@click.option(
    "--file-timeout",
    type=click.FloatRange(min=0),
    default=60,
    show_default=True,
    help="Seconds of work on one file before it becomes a file error (0: no limit).",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary line.")
@_DB
def extract(
    target: str,
    fmt: str,
    output_path: Path | None,
    include_tests: bool | None,
    test_paths: tuple[str, ...],
    kinds: tuple[str, ...],
    include_vendored: bool | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    context: int | None,
    config_path: Path | None,
    isolated: bool,
    no_repo_config: bool,
    cache_dir: Path | None,
    repo_name: str | None,
    jobs: int | None,
    file_timeout: float,
    no_cache: bool,
    quiet: bool,
    db: Path | None,
) -> int:
    """Write one record per raise and assert of REPO at REV.

    REPO is a GitHub OWNER/NAME, a git URL or a local path; REV a sha, tag or branch
    (HEAD where a local path has no @REV).
    """
    given = {
        "include_tests": include_tests,
        "include_vendored": include_vendored,
        "kinds": tuple(k.strip() for group in kinds for k in group.split(",") if k.strip()),
        "include": include,
        "exclude": exclude,
        "test_paths": test_paths,
        "context": context,
        "repo_name": repo_name,
    }
    scan = {
        **_configured(given, config_path, isolated, no_repo_config),
        "cache_dir": cache_dir,
        "jobs": jobs,
        "file_timeout": file_timeout or None,
        "use_cache": not no_cache,
    }
    if config_path is not None:
        configs = [config_path]
    else:
        configs = [] if isolated else config.candidates(Path.cwd().resolve())
    return run_extract(ExtractOptions(target, fmt, output_path, quiet, db, scan, tuple(configs)))


def _configured(
    given: dict[str, Any], path: Path | None, isolated: bool, no_repo_config: bool = False
) -> dict[str, Any]:
    """The scan options: each flag given, else the user's configuration file's value
    (`--config FILE`, or the nearest errscan.toml or pyproject.toml with [tool.errscan]);
    what neither sets is left to the scanned repository's configuration and the defaults.
    A flag not given is None, or an empty tuple for a repeatable one."""
    if isolated and path is not None:
        raise click.UsageError("give --config FILE or --isolated, not both")
    chosen = {key: value if value != () else None for key, value in given.items()}
    if isolated:
        return {**chosen, "repo_config": False}
    found = config.load(path) if path is not None else config.discover()
    for key, value in found.options.items():
        if chosen.get(key) is None:
            chosen[key] = value
    return {**chosen, "repo_config": not no_repo_config}


def _warn(message: str) -> None:
    click.echo(visible(f"errscan: warning: {message}"), err=True)


def run_extract(options: ExtractOptions) -> int:
    if options.output is not None:
        outfile.check_writable(options.output)
    bar = _ProgressBar() if not options.quiet and sys.stderr.isatty() else None
    warned: list[str] = []

    def warn(message: str) -> None:
        warned.append(message)
        _warn(message)

    def kept(commit: repo.Commit, root: Path, entry: str) -> None:
        # the next run of this command line may answer from the output stored, where
        # this run printed nothing it would not print again
        if _command_line is not None and bar is None and not warned:
            launch.remember(_command_line, root, commit, entry, output=options.output,
                            quiet=options.quiet, configs=options.configs)  # fmt: skip

    settings = {**options.scan, "progress": bar, "warn": None if options.quiet else warn}
    if options.db is None:
        stats = errscan.export(
            options.target, options.fmt, options.output, sys.stdout, kept=kept, **settings
        )
    else:  # kept in the store as well: the whole result is needed at once
        result = errscan.extract(options.target, **settings)
        output.write(result, options.fmt, options.output, sys.stdout, errscan.__version__)
        errscan.store_scan(result, options.db, target=options.target, **settings)
        stats = result.stats
    if bar is not None:
        bar.close()
    if not options.quiet:
        click.echo(launch.summary(stats.files, stats.sites, stats.file_errors, stats.seconds),
                   err=True)  # fmt: skip
    return EXIT_OK


def _records(
    source: str | None, scan_target: str | None, db: Path | None = None
) -> list[errscan.ErrorRecord]:
    """From --from FILE, --scan REPO@REV (with the configuration's settings), or else the
    store (latest scan of each repo)."""
    settings = _configured({}, None, False) if scan_target is not None else {}
    return errscan.records_of(source=source, target=scan_target, db=db, **settings)[0]


_FROM = click.option("--from", "source", metavar="FILE", help="Records errscan wrote (jsonl/json).")
_SCAN = click.option("--scan", "scan_target", type=TargetType(), help="Scan REPO@REV for them.")


@cli.command()
@click.argument("record_id", metavar="ID")
@_FROM
@_SCAN
@_DB
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "html", "json"]),
    default="markdown",
    show_default=True,
)
@_output("Write the page here (atomically); `-`: stdout.")
def show(
    record_id: str,
    source: str | None,
    scan_target: str | None,
    db: Path | None,
    fmt: str,
    output_path: Path | None,
) -> int:
    """Print the record ID as a knowledge-base page (ID may be a unique prefix); with the
    store's enrichment of its facts where one is stored."""
    records = _records(source, scan_target, db)
    record = errscan.find_record(record_id, records)
    text = errscan.page(record, records, fmt, errscan.enrichment_of(record, records, db))
    output.write_chunks([text], output_path, sys.stdout)
    return EXIT_OK


@cli.command()
@click.argument("targets", nargs=-1, metavar="[REPO[@REV]...]")
@_DB
@click.option("--endpoint", metavar="URL", help="An OpenAI-compatible server (its /v1 URL).")
@click.option("--model", metavar="NAME", help="The model to ask.")
@click.option(
    "--api-key-env", metavar="VAR",
    help="The environment variable holding the API key [default: OPENAI_API_KEY, if set].",
)  # fmt: skip
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True)
@click.option("--limit", type=click.IntRange(min=0), help="Enrich at most this many records.")
@click.option(
    "--timeout", type=click.FloatRange(min=0.1), default=120.0, show_default=True,
    help="Seconds per request.",
)  # fmt: skip
@click.option("--retries", type=click.IntRange(0, 20), default=4, show_default=True)
@click.option("--dry-run", is_flag=True, help="Say how many records would be sent; show a prompt.")
@click.option("--force", is_flag=True, help="Enrich again records already enriched.")
@click.option("--show-prompt", "prompt_id", metavar="ID", help="Print one record's prompt.")
def enrich(
    targets: tuple[str, ...],
    db: Path | None,
    endpoint: str | None,
    model: str | None,
    api_key_env: str | None,
    concurrency: int,
    limit: int | None,
    timeout: float,
    retries: int,
    dry_run: bool,
    force: bool,
    prompt_id: str | None,
) -> int:
    """Ask a model for What it means, Solutions and Common situations of each stored
    record with none for its current facts; exit 3 where some failed."""
    from errscan import enrichment as enrich_stage

    if prompt_id is not None:
        records = errscan.stored_records(targets, db)
        record = errscan.find_record(prompt_id, records)
        by_id = {r.id: r for r in records}
        for message in enrich_stage.messages(enrich_stage.facts(record, by_id.get)):
            click.echo(visible(f"--- {message['role']} ---\n{message['content']}"))
        return EXIT_OK
    if model is None or (endpoint is None and not dry_run):
        raise errscan.InputError("give --endpoint URL and --model NAME")
    if dry_run:
        records = errscan.stored_records(targets, db)
        store = store_stage.Store.open(db, create=False)
        try:
            jobs, skipped = enrich_stage.plan(records, store, model, force)
        finally:
            store.close()
        chosen = jobs[:limit] if limit is not None else jobs
        click.echo(f"{len(chosen)} records would be sent ({skipped} already enriched)")
        if chosen:
            for message in enrich_stage.messages(chosen[0].facts):
                click.echo(visible(f"--- {message['role']} ---\n{message['content']}"))
        return EXIT_OK
    key = _api_key(api_key_env)
    assert endpoint is not None
    where = enrich_stage.Endpoint(endpoint, model, key, timeout=timeout, retries=retries)
    summary = enrich_stage.Summary()
    drawn = _StatusLine(_enrich_line)
    try:
        errscan.enrich(where, targets, db=db, concurrency=concurrency, limit=limit,
                       force=force, progress=drawn, summary=summary)  # fmt: skip
    finally:
        drawn.close()
    for record_id, reason in summary.failures[:20]:
        click.echo(visible(f"failed {record_id}: {reason}"), err=True)
    click.echo(
        f"enriched {summary.done}, failed {summary.failed}, skipped {summary.skipped} "
        f"(already enriched); {summary.requests} requests; tokens in {summary.tokens_in:,}, "
        f"out {summary.tokens_out:,}",
        err=True,
    )
    if summary.interrupted:
        click.echo("errscan: interrupted; run again to resume", err=True)
        click.get_current_context().exit(EXIT_INTERRUPTED)
    if summary.failed:
        click.get_current_context().exit(EXIT_SOME_FAILED)
    return EXIT_OK


def _api_key(variable: str | None) -> str | None:
    """The key from the environment only: a variable named but unset is an error."""
    if variable is None:
        return os.environ.get("OPENAI_API_KEY") or None
    value = os.environ.get(variable)
    if not value:
        raise errscan.InputError(f"the environment variable {variable} is not set")
    return value


class _StatusLine:
    """One line on a terminal's stderr, redrawn from what `render` makes of each state
    it is given; nothing where stderr is not a terminal."""

    def __init__(self, render: Callable[[Any], str]) -> None:
        self.render = render
        self.drawn = False
        self.live = sys.stderr.isatty()

    def __call__(self, state: Any) -> None:
        if self.live:
            sys.stderr.write(f"\r{self.render(state)}   ")
            sys.stderr.flush()
            self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")


def _clock(seconds: float | None) -> str:
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}" if seconds is not None else "?"


def _enrich_line(summary: Any) -> str:
    return (f"enrich: {summary.done + summary.failed}/{summary.total} done, {summary.failed} "
            f"failed, {summary.tokens_in + summary.tokens_out:,} tokens, "
            f"ETA {_clock(summary.eta)}")  # fmt: skip


@cli.command()
@click.argument("list_path", metavar="LIST", type=click.Path(path_type=Path))
@_DB
@click.option(
    "--ray", "ray_address", is_flag=False, flag_value="", default=None, metavar="[ADDRESS]",
    help="Run each repository as a Ray task: on the cluster at ADDRESS (auto, HOST:PORT), "
    "or on a Ray started here when no address is given.",
)  # fmt: skip
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Repositories at once [CPUs].")
@click.option(
    "--repo-timeout", type=click.FloatRange(min=0.1), metavar="S",
    help="Give up on a repository after S seconds.",
)  # fmt: skip
@click.option("--retries", type=click.IntRange(0, 10), default=2, show_default=True,
              help="Times a repository whose worker died is tried again.")  # fmt: skip
@click.option("--report", "report_path", type=click.Path(path_type=Path),
              help="Write the JSON report here (atomically) rather than to stdout.")  # fmt: skip
@_CACHE_DIR_OPTION
def batch(
    list_path: Path,
    db: Path | None,
    ray_address: str | None,
    jobs: int | None,
    repo_timeout: float | None,
    retries: int,
    report_path: Path | None,
    cache_dir: Path | None,
) -> int:
    """Scan and store every repository of LIST (REPO@REV lines, or a TOML of [[repos]]
    tables); one run again after an interruption skips what it stored. Exit 3 where
    some repositories failed."""
    from errscan import batch as batch_stage

    items = batch_stage.read_list(list_path)
    drawn = _StatusLine(_batch_line)
    try:
        report = batch_stage.run(items, db, jobs=jobs, ray=ray_address, repo_timeout=repo_timeout,
                                 retries=retries, cache_dir=cache_dir, progress=drawn)  # fmt: skip
    finally:
        drawn.close()
    body = json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
    output.write_chunks([body], report_path, sys.stdout)
    counts = report.to_dict()["summary"]
    click.echo(
        f"{report.total} repositories: {counts.get('scanned', 0)} scanned, "
        f"{counts.get('done before', 0)} done before, {report.failed} failed; "
        f"{report.records:,} records in {counts['seconds']:.1f} s",
        err=True,
    )
    for outcome in report.outcomes:
        if outcome.status == "failed":
            click.echo(visible(f"failed {outcome.target}: {outcome.error}"), err=True)
    if report.interrupted:
        click.echo("errscan: interrupted; run again to resume", err=True)
        click.get_current_context().exit(EXIT_INTERRUPTED)
    if report.failed:
        click.get_current_context().exit(EXIT_SOME_FAILED)
    return EXIT_OK


def _batch_line(report: Any) -> str:
    import time

    elapsed = _clock(time.monotonic() - report.started)
    return (f"batch: {len(report.outcomes)}/{report.total} done, {report.failed} failed, "
            f"{report.running} running, {report.records:,} records, {elapsed} elapsed, "
            f"ETA {_clock(report.eta)}")  # fmt: skip


@cli.command(name="lookup")
@click.argument("text", required=False)
@_FROM
@_SCAN
@_DB
@click.option("--json", "as_json", is_flag=True, help="JSON for programs (--format json).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)  # fmt: skip
@click.option(
    "--log", "log", metavar="FILE",
    help="Read a whole log (- for stdin): every traceback and `Type: message` line.",
)  # fmt: skip
def lookup_command(
    text: str | None,
    source: str | None,
    scan_target: str | None,
    db: Path | None,
    as_json: bool,
    fmt: str,
    log: str | None,
) -> int:
    """Find the records behind a message, `Type: message` or a traceback (- reads stdin)."""
    as_json = as_json or fmt == "json"
    if (text is None) == (log is None):
        raise errscan.InputError("give the TEXT to look up, or --log FILE, not both")
    settings = _configured({}, None, False) if scan_target is not None else {}
    records, key = errscan.records_of(source=source, target=scan_target, db=db, **settings)
    index = errscan.lookup_index(records, key)
    if log is not None:
        return _lookup_log(log, index, as_json)
    assert text is not None
    seen = sys.stdin.read() if text == "-" else text
    matches = index.lookup(seen)
    if as_json:
        rows = [
            {"id": m.record.id, "exception": m.record.exception, "file": m.record.file,
             "line": m.record.line, "message": m.record.message, "match": m.kind,
             "score": m.score}
            for m in matches
        ]  # fmt: skip
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        if not matches:
            click.get_current_context().exit(EXIT_NO_MATCH)
        return EXIT_OK
    for m in matches:
        r = m.record
        score = {"full": "", "frame": "  (named by a frame)"}.get(
            m.kind, f"  (close, {m.score:.2f})"
        )
        message = "(no message)" if r.message is None else r.message
        click.echo(visible(f"{r.id}  {r.exception}  {r.file}:{r.line}  {message}{score}"))
    if not matches:
        click.echo("no record matches", err=True)
        click.get_current_context().exit(EXIT_NO_MATCH)
    return EXIT_OK


def _lookup_log(log: str, index: errscan.TemplateIndex, as_json: bool) -> int:
    """One annotation per error of the log, then a summary; exit 1 where none matched."""
    from errscan.logs import Summary, scan_log

    summary = Summary()
    try:
        stream = sys.stdin.buffer if log == "-" else open(log, "rb")  # noqa: SIM115
    except OSError as exc:
        raise errscan.InputError(f"cannot read {log}: {exc.strerror}") from exc
    with stream:
        for found in scan_log(stream, index, summary):
            record = found.match.record if found.match else None
            if as_json:
                row = {"log_line": found.line, "text": found.text.split("\n")[-1],
                       "match": found.match.kind if found.match else None,
                       "id": record.id if record else None,
                       "file": record.file if record else None,
                       "line": record.line if record else None,
                       "url": record.url if record else None}  # fmt: skip
                click.echo(json.dumps(row, ensure_ascii=False))
            elif record is not None and found.match is not None:
                where = f"{record.file}:{record.line}"
                click.echo(visible(f"{found.line}: {record.id} {where} {found.match.kind}"
                                   f"{' ' + record.url if record.url else ''}"))  # fmt: skip
            else:
                click.echo(visible(f"{found.line}: unmatched {found.text.split(chr(10))[-1]}"))
    counts = sorted(summary.by_id.items(), key=lambda item: (-item[1], item[0]))
    if as_json:
        click.echo(json.dumps({"summary": {"errors": summary.errors,
                                           "unmatched": summary.unmatched,
                                           "distinct": dict(counts)}}))  # fmt: skip
    else:
        click.echo(f"{summary.errors} errors, {len(counts)} distinct, "
                   f"{summary.unmatched} unmatched")  # fmt: skip
        for record_id, count in counts:
            click.echo(f"  {count:>6}  {record_id}")
    if summary.errors == summary.unmatched:
        click.get_current_context().exit(EXIT_NO_MATCH)
    return EXIT_OK


@cli.command()
@click.argument("repo", required=False)
@_DB
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)  # fmt: skip
def scans(repo: str | None, db: Path | None, fmt: str) -> int:
    """List the scans kept in the store (of REPO, or of every repository)."""
    store = store_stage.Store.open(db, create=False)
    try:
        found = store.scans(repo)
    finally:
        store.close()
    if fmt == "json":
        rows = [{"repo": scan.repo, "commit": scan.commit, "commit_date": scan.commit_date,
                 "sites": scan.stats.sites, "file_errors": scan.stats.file_errors,
                 "files": scan.stats.files, "errscan_version": scan.errscan_version,
                 "options": json.loads(scan.options), "scanned_at": scan.scanned_at}
                for scan in found]  # fmt: skip
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return EXIT_OK
    if not found:
        click.echo(visible(f"no scans of {repo} in the store" if repo else "no scans in the store"))
        return EXIT_OK
    click.echo("repository  commit  commit date  sites  file errors  errscan")
    for scan in found:
        stats = scan.stats
        click.echo(
            visible(
                f"{scan.repo}  {scan.commit[:12]}  {scan.commit_date or '-'}  "
                f"{stats.sites} sites  {stats.file_errors} file errors  "
                f"errscan {scan.errscan_version}"
            )
        )
    return EXIT_OK


@cli.command(name="export")
@click.argument("target", type=TargetType())
@_DB
@click.option(
    "--format", "fmt", type=click.Choice(output.EXPORT_FORMATS), default="jsonl", show_default=True
)
@_output(_TO_STDOUT)
def export_command(target: str, db: Path | None, fmt: str, output_path: Path | None) -> int:
    """Write the stored scan of REPO@REV as jsonl, json, sarif or csv."""
    result = errscan.stored_result(target, db)
    output.write(result, fmt, output_path, sys.stdout, result.errscan_version)
    return EXIT_OK


@cli.command(name="diff")
@click.argument("old")
@click.argument("new")
@_DB
@click.option("--json", "as_json", is_flag=True, help="JSON for programs.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
)
@click.option(
    "--exit-code", is_flag=True,
    help="Exit 1 when errors were added, removed or reworded (a CI gate).",
)  # fmt: skip
@_CONFIG
@_ISOLATED
def diff_command(
    old: str,
    new: str,
    db: Path | None,
    as_json: bool,
    fmt: str,
    exit_code: bool,
    config_path: Path | None,
    isolated: bool,
) -> int:
    """What changed: `REPO@A B` (B a rev of the same repository) or `OLD.jsonl NEW.jsonl`.

    A side not in the store is scanned with the configuration's settings."""
    changes = errscan.diff(old, new, db, **_configured({}, config_path, isolated))
    if as_json or fmt == "json":
        click.echo(diff_stage.as_json(changes), nl=False)
    elif fmt == "markdown":
        click.echo(diff_stage.markdown(changes))
    else:
        click.echo(diff_stage.text(changes), nl=False)
    counts = changes.counts()
    if exit_code and any(counts.get(kind) for kind in ("added", "removed", "reworded")):
        click.get_current_context().exit(1)  # as `git diff --exit-code`; moves alone pass
    return EXIT_OK


@cli.command(name="track")
@click.argument("config", type=click.Path(path_type=Path))
@_DB
@click.option(
    "--report-dir",
    type=click.Path(path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where report.md and report.json go.",
)
@_CACHE_DIR_OPTION
def track_command(config: Path, db: Path | None, report_dir: Path, cache_dir: Path | None) -> int:
    """Scan each new commit of the repositories CONFIG follows, store it, report changes.

    Exit code 0 when every repository went well, 3 when some failed, 2 for a bad config.
    """
    from errscan.track import track

    outcomes = track(config, db, report_dir, cache_dir)
    for outcome in outcomes:
        counts = outcome.changes.counts() if outcome.changes else None
        detail = outcome.error or (", ".join(f"{v} {k}" for k, v in counts.items())
                                   if counts else "")  # fmt: skip
        line = f"{outcome.repo}: {outcome.status} {outcome.commit[:12]} {detail}".rstrip()
        click.echo(visible(line))
    if any(o.status == "failed" for o in outcomes):
        click.get_current_context().exit(EXIT_SOME_FAILED)
    return EXIT_OK


@cli.command(name="site")
@click.argument("repos", nargs=-1, metavar="[REPO...]")
@_DB
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(path_type=Path),
    required=True,
    help="The site's folder (only files whose bytes change are written).",
)
@click.option(
    "--base-url", default="", metavar="URL", help="Where the site is hosted, for sitemap.xml."
)
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Page workers [the CPUs].")
@click.option("-q", "--quiet", is_flag=True, help="No summary line.")
def site_command(
    repos: tuple[str, ...],
    db: Path | None,
    out: Path,
    base_url: str,
    jobs: int | None,
    quiet: bool,
) -> int:
    """Build a static site of the store's latest scan of each repository (or of REPOs)."""
    report = errscan.build_site(out, db, repos, base_url=base_url, jobs=jobs)
    if not quiet:
        click.echo(
            f"errscan: {report.repos} repositories, {report.errors} errors, {report.files} "
            f"files; {report.written} written, {report.removed} removed, "
            f"{report.seconds:.2f}s",
            err=True,
        )
    return EXIT_OK


@cli.command(name="serve")
@click.argument("site", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
def serve_command(site: Path, host: str, port: int) -> int:
    """Preview a built site: serve SITE over HTTP (127.0.0.1 by default)."""
    from errscan.site.serve import server

    running = server(site, host, port)
    click.echo(
        f"errscan: serving {visible(str(site))} at http://{host}:{running.server_port}/", err=True
    )
    try:
        running.serve_forever()
    finally:
        running.server_close()
    return EXIT_OK


@cli.command()
def schema() -> int:
    """Print the JSON Schema of a record (what extract writes, a line or an item each)."""
    click.echo(json.dumps(errscan.record_schema(), indent=2))
    return EXIT_OK


@cli.group("cache")
def cache_group() -> None:
    """Inspect or shrink the result cache."""


@cache_group.command("info")
@_CACHE_DIR_OPTION
def cache_info(cache_dir: Path | None) -> int:
    """Where the result cache is, what it holds (file results, outputs, scan states,
    compiled lookup indexes, repositories' settings)."""
    info = errscan.cache_info(cache_dir)
    click.echo(
        f"{info.path}: {info.entries} file results, {info.bytes / 1e6:.1f} MB; "
        f"{info.outputs} stored outputs, {info.output_bytes / 1e6:.1f} MB; "
        f"{info.states} scan states, {info.state_bytes / 1e6:.1f} MB; "
        f"{info.indexes} lookup indexes, {info.index_bytes / 1e6:.1f} MB; "
        f"{info.configs} repository settings, {info.config_bytes / 1e6:.1f} MB"
    )
    return EXIT_OK


@cache_group.command("prune")
@_CACHE_DIR_OPTION
@click.option(
    "--max-mb",
    type=click.FloatRange(min=0),
    default=1024,
    show_default=True,
    help="Drop the least recently used results until this much is left.",
)
def cache_prune(cache_dir: Path | None, max_mb: float) -> int:
    """Drop least recently used results down to --max-mb."""
    dropped, info = errscan.prune_cache(cache_dir, int(max_mb * 1e6))
    left = (info.bytes + info.output_bytes + info.state_bytes + info.index_bytes
            + info.config_bytes) / 1e6  # fmt: skip
    count = info.entries + info.outputs + info.states + info.indexes + info.configs
    click.echo(f"dropped {dropped} entries; {count} left, {left:.1f} MB")
    return EXIT_OK


class _ProgressBar:
    """A one-line bar on a terminal's stderr."""

    def __init__(self) -> None:
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if total and (done == total or done % 20 == 0):
            width = 30
            filled = width * done // total
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
            sys.stderr.flush()
            self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return its exit code (0 done, 1 internal error, 2 bad input)."""
    from errscan import api

    global _command_line
    api.tune_allocator()  # done where a scan runs its pipeline, never by a warm replay
    signal.signal(signal.SIGTERM, _terminate)
    args = list(argv) if argv is not None else sys.argv[1:]
    _command_line = args
    try:
        # without standalone mode, click returns the command's value or an Exit's code
        code = cli.main(args=args, prog_name="errscan", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("errscan: interrupted", err=True)
        return EXIT_INTERRUPTED
    finally:
        _command_line = None
    return code if isinstance(code, int) else EXIT_OK


# the arguments `main` runs, for the note errscan.launch keeps of an `extract` (None where
# the commands are run otherwise, as click's test runner does: no note then)
_command_line: list[str] | None = None
