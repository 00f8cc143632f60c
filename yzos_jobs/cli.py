"""The `yzos-jobs` command line. Thin: parse, build the settings once, call the module that acts."""

from __future__ import annotations

import errno
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property, wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, TypeVar

import click

from yzos_jobs import output_stream
from yzos_jobs.kinds import ENTITY_KINDS
from yzos_jobs.maintain import JOB_ALIASES, JOB_NAMES

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session, sessionmaker

    from yzos_jobs.config import Settings
    from yzos_jobs.jobcontext import JobContext

# Every import of the package's machinery is made inside the command that needs it: `--help`
# and quick commands start without loading the database layer, the LLM client or migrations.

EXIT_FAILURE = 1
EXIT_USAGE = 2
# `once` on a paused job without --force: nothing ran, on purpose.
EXIT_PAUSED = 3


def _log() -> Any:
    from yzos_jobs.logging import get_logger

    return get_logger(__name__)


@dataclass
class AppContext:
    """What every command needs, built once per invocation and only when asked for."""

    config_path: str | None
    # -v/--verbose given this many times; --log-format (None: the settings' format).
    verbose: int = 0
    log_format: str | None = None
    # The command only reads (see `pass_reading_app`).
    read_only_if_unwritable: bool = field(default=False, init=False)
    # The command acts on what is stored: a database that is not there is named, not made.
    must_exist: bool = field(default=False, init=False)
    _engine: Engine | None = field(default=None, init=False)

    @cached_property
    def settings(self) -> Settings:
        from yzos_jobs.config import load_settings

        return load_settings(self.config_path)

    def logging(self, default_level: str = "warning") -> None:
        """Configure structured logging, for the commands that log (jobs, imports, scans): to
        stderr, at warning unless -v or [logging] level asks for more (`default_level`: the
        daemon's is info)."""
        from yzos_jobs.logging import configure_logging

        configure_logging(
            self.settings.logging,
            verbose=self.verbose,
            default_level=default_level,
            log_format=self.log_format,
        )

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            from yzos_jobs.db.connection import check_connection, create_db_engine

            self._engine = create_db_engine(
                self.settings.database.sqlalchemy_url,
                read_only_if_unwritable=self.read_only_if_unwritable,
                must_exist=self.must_exist,
            )
            check_connection(self._engine)
        return self._engine

    def ready_engine(self) -> Engine:
        """The engine, with the schema at head (migrated on first use where allowed)."""
        from yzos_jobs.db.auto_migrate import ensure_schema

        ensure_schema(self.engine, self.settings.database)
        return self.engine

    @cached_property
    def session_factory(self) -> sessionmaker[Session]:
        from yzos_jobs.db.connection import make_session_factory

        return make_session_factory(self.ready_engine())

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()


def _one_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__


class _Text(click.ParamType):
    """Text the command stores or looks up (a name, a reason): an argument that is not UTF-8
    (bytes a shell passed from another encoding) is a usage error, where the database would
    otherwise fail on it in a traceback."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            str(value).encode("utf-8")
        except UnicodeEncodeError:
            shown = (
                str(value).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            )
            self.fail(f"'{shown}' is not UTF-8 text", param, ctx)
        return str(value)


TEXT = _Text()


class _Cli(click.Group):
    """Turns the errors a user can cause into one line and an exit code, never a traceback."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        output_stream.prepare()
        try:
            try:
                return super().main(*args, **kwargs)
            finally:
                # what stdout holds is written before the exit code is settled: a result that
                # cannot be written is an error of the command, not a warning at exit
                sys.stdout.flush()
        except OSError:
            lost = output_stream.lost()
            if lost is None:
                raise
            output_stream.drop()
            if lost.errno != errno.EPIPE:
                click.echo(f"yzos-jobs: error: cannot write the output: {lost.strerror}", err=True)
            raise SystemExit(EXIT_FAILURE) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            known = _user_error(exc)
            if known is None:
                raise
            _fail(ctx, *known)
        finally:
            if isinstance(ctx.obj, AppContext):
                ctx.obj.close()


def _user_error(exc: Exception) -> tuple[str, int] | None:
    """The one line and exit code of an error a user can cause; None for a bug (a traceback).
    The error types are imported here, when there is an error to look at."""
    from sqlalchemy.exc import DBAPIError

    from yzos_jobs.config import ConfigError
    from yzos_jobs.db.connection import DatabaseUnavailable
    from yzos_jobs.db.schema_state import RevisionRefused, SchemaNotReady
    from yzos_jobs.shipped import ShippedFileMissing

    if isinstance(exc, ShippedFileMissing):
        return str(exc), EXIT_FAILURE
    if isinstance(exc, ConfigError):
        return f"config: {exc}", EXIT_USAGE
    if isinstance(exc, DatabaseUnavailable | SchemaNotReady):
        return str(exc), EXIT_FAILURE
    if isinstance(exc, RevisionRefused):
        return str(exc), EXIT_USAGE
    if isinstance(exc, DBAPIError):
        return f"database error: {_one_line(exc)}", EXIT_FAILURE
    return None


def _fail(ctx: click.Context, message: str, code: int) -> NoReturn:
    click.echo(f"yzos-jobs: error: {message}", err=True)
    ctx.exit(code)


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--config",
    "config_path",
    envvar="YZOS_CONFIG",
    type=click.Path(readable=False),  # load_settings reports any unusable path in one line
    help="config.toml to read (env YZOS_CONFIG; default ./config.toml if present).",
)
@click.option(
    "-v",
    "--verbose",
    count=True,
    envvar="YZOS_VERBOSE",
    help="Log more on stderr: -v info, -vv debug (default: warnings; the daemon logs info).",
)
@click.option(
    "--log-format",
    type=click.Choice(["auto", "console", "json"]),
    envvar="YZOS_LOG_FORMAT",
    help="Log lines for a person (console) or a machine (json); auto: console on a terminal.",
)
@click.version_option(package_name="yzos-jobs")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, verbose: int, log_format: str | None) -> None:
    """Scheduled jobs that keep a knowledge base of real work entities clean."""
    ctx.obj = AppContext(config_path, verbose, log_format)


pass_app = click.make_pass_decorator(AppContext)


def pass_stored_app(command: Callable[..., None]) -> Callable[..., None]:
    """`pass_app` for a command that acts on what is stored (a correction, a pause): a SQLite
    database that is not there is named, not made empty (run from another folder than the
    daemon's, a relative URL names another file)."""

    @pass_app
    @wraps(command)
    def acting(app: AppContext, *args: Any, **kwargs: Any) -> None:
        app.must_exist = True
        command(app, *args, **kwargs)

    return acting


def pass_reading_app(command: Callable[..., None]) -> Callable[..., None]:
    """`pass_stored_app` for a command that only reads the database: a SQLite file this user
    may not write (a service account's, in its folder) is read rather than refused."""

    @pass_stored_app
    @wraps(command)
    def reading(app: AppContext, *args: Any, **kwargs: Any) -> None:
        app.read_only_if_unwritable = True
        command(app, *args, **kwargs)

    return reading


@cli.group()
def db() -> None:
    """Schema migrations (Alembic revisions 017 … 028)."""


@db.command("upgrade")
@click.argument("revision", default="head")
@pass_app
def db_upgrade(app: AppContext, revision: str) -> None:
    """Upgrade the database to REVISION (default: head)."""
    from yzos_jobs.db import migrate
    from yzos_jobs.db.connection import describe_url

    migrate.upgrade(app.engine, revision)
    click.echo(f"{describe_url(app.engine)}: at revision {migrate.current_revision(app.engine)}")


@db.command("downgrade")
@click.argument("revision")
@pass_stored_app
def db_downgrade(app: AppContext, revision: str) -> None:
    """Downgrade the database to REVISION (e.g. 018, or base)."""
    from yzos_jobs.db import migrate
    from yzos_jobs.db.connection import describe_url

    dropped = migrate.downgrade(app.engine, revision)
    at = migrate.current_revision(app.engine) or "base"
    click.echo(f"{describe_url(app.engine)}: at revision {at}")
    if dropped:
        # what the revisions above held is gone with them: said, since an upgrade brings the
        # tables back empty
        tables = ", ".join(
            f"{name} ({rows} row{'s' if rows != 1 else ''})"
            for name, rows in sorted(dropped.items())
        )
        click.echo(f"note: dropped with the revisions above {at}: {tables}")


@db.command("current")
@pass_reading_app
def db_current(app: AppContext) -> None:
    """Print the database's revision and the head revision."""
    from yzos_jobs.db.connection import describe_url
    from yzos_jobs.db.schema_state import current_revision, head_revision, known_revision

    current, head = current_revision(app.engine), head_revision()
    if current == head:
        state = "up to date"
    elif current is None or known_revision(current):
        state = "behind"
    else:  # migrated by a newer yzos-jobs
        state = "newer than this yzos-jobs knows: upgrade yzos-jobs"
    click.echo(f"{describe_url(app.engine)}: {current or 'base'} (head {head}, {state})")


@cli.command("config")
@click.option(
    "--init", "init", is_flag=True, help="Write a commented config.toml (never over a file)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
@pass_app
def config_cmd(app: AppContext, init: bool, as_json: bool) -> None:
    """Print the effective settings and where each came from (default, file or environment);
    the API key is never shown. --init writes a commented config.toml (to --config's path, else
    ./config.toml) listing every key with its default and range."""
    from yzos_jobs import config_report
    from yzos_jobs.config import DEFAULT_CONFIG_FILE

    if init:
        target = Path(app.config_path or DEFAULT_CONFIG_FILE)
        try:
            config_report.write_template(target)
        except (config_report.ConfigExists, OSError) as exc:
            message = str(exc) if isinstance(exc, config_report.ConfigExists) else _os_error(exc)
            _fail(click.get_current_context(), f"config --init: {message}", EXIT_FAILURE)
            return
        click.echo(f"wrote {target}")
        return
    rows = config_report.effective(app.config_path)
    if as_json:
        _print_json(rows)
    else:
        click.echo(config_report.render(rows))


def _os_error(exc: OSError) -> str:
    return f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)


@cli.command("classify")
@click.argument("text", type=TEXT)
@click.option("--kind", type=click.Choice(["person", "project", "task"]), help="Suggested kind.")
@click.option(
    "--app",
    "app_bundle_id",
    type=TEXT,
    metavar="BUNDLE_ID",
    help="Bundle id of the app it was seen in.",
)
@click.option("--context", "context_text", type=TEXT, metavar="TEXT", help="Surrounding text.")
@click.option(
    "--source", "source_kind", type=TEXT, default="cli", show_default=True, help="Source kind."
)
@pass_app
def classify_cmd(
    app: AppContext,
    text: str,
    kind: str | None,
    app_bundle_id: str | None,
    context_text: str | None,
    source_kind: str,
) -> None:
    """Judge one candidate and print the verdict as JSON."""
    from yzos_jobs.inference.contract import ClassifyInput
    from yzos_jobs.inference.errors import ClassifierError, error_type
    from yzos_jobs.review_render import json_text
    from yzos_jobs.runtime import build_classifier

    inp = ClassifyInput(
        raw_text=text,
        source_kind=source_kind,
        source_id="cli",
        suggested_kind=kind,
        app_bundle_id=app_bundle_id,
        surrounding_text=context_text,
    )
    classifier = build_classifier(app.settings, app.session_factory)
    try:
        verdict = classifier.classify(inp)
    except ClassifierError as exc:
        click.echo(json.dumps({"error": error_type(exc), "message": str(exc)}))
        raise SystemExit(EXIT_FAILURE) from None
    click.echo(json_text(verdict.model_dump(), sys.stdout))


@cli.command("eval")
@click.argument(
    "dataset", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-cache", is_flag=True, help="Ignore the verdict cache (measure the model).")
@pass_app
def eval_cmd(app: AppContext, dataset: Path | None, as_json: bool, no_cache: bool) -> None:
    """Score the configured classifier on a labelled JSONL set (precision/recall per kind).
    DATASET: default the labelled cases shipped with the package."""
    from yzos_jobs.entity.evaluation import evaluate, render_report
    from yzos_jobs.runtime import build_classifier
    from yzos_jobs.shipped import eval_set

    dataset = dataset or eval_set()

    classifier = build_classifier(app.settings, app.session_factory, use_cache=not no_cache)
    report = _read_dataset(dataset, lambda: evaluate(classifier, dataset))
    _print_score(report, as_json, render_report(report), report.cases)


_Report = TypeVar("_Report")


def _read_dataset(dataset: Path, score: Callable[[], _Report]) -> _Report:
    """An evaluation's report; a dataset that is not UTF-8 text is one line, exit 1."""
    try:
        return score()
    except UnicodeDecodeError as exc:
        message = f"{dataset}: not UTF-8 text ({exc.reason})"
        _fail(click.get_current_context(), message, EXIT_FAILURE)


def _print_score(report: Any, as_json: bool, text: str, scored: int) -> None:
    """An evaluation's report, as JSON or text; nothing scored says so and exits 1."""
    click.echo(json.dumps(report.as_dict(), indent=2) if as_json else text)
    if scored == 0:
        _fail(click.get_current_context(), "no case of the dataset could be scored", EXIT_FAILURE)


@cli.command("eval-triage")
@click.argument("dataset", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-cache", is_flag=True, help="Ignore cached triage replies (measure the model).")
@pass_app
def eval_triage_cmd(app: AppContext, dataset: Path, as_json: bool, no_cache: bool) -> None:
    """Score the configured model's session triage on labelled sessions: proposed tasks against
    the work items a person named (precision, recall, duplicate rate, calls, latency)."""
    from yzos_jobs.entity.triage_evaluation import evaluate_triage, render_triage_report
    from yzos_jobs.importers.digests import session_digests
    from yzos_jobs.runtime import build_classifier

    classifier = build_classifier(app.settings, app.session_factory, use_cache=not no_cache)
    if classifier.active_model_id() is None:
        _fail(
            click.get_current_context(),
            'eval-triage needs a model: set [llm] backend = "openai" (dry_run triages nothing)',
            EXIT_USAGE,
        )
        return
    report = _read_dataset(
        dataset,
        lambda: evaluate_triage(
            classifier, app.settings, dataset, session_digests, use_cache=not no_cache
        ),
    )
    _print_score(report, as_json, render_triage_report(report), report.sessions)


def _job_context(app: AppContext, log_level: str = "warning") -> JobContext:
    from yzos_jobs.jobcontext import JobContext
    from yzos_jobs.runtime import build_classifier

    app.logging(log_level)
    stop = threading.Event()  # a job's, and its classifier's: no new call once it is set
    return JobContext(
        settings=app.settings,
        sessions=app.session_factory,
        classifier=build_classifier(app.settings, app.session_factory, stopping=stop),
        stop=stop,
    )


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """Within: a stop signal lets the job finish the batch in hand and record its run as
    stopped early (the next run goes on from there), as the daemon does, instead of leaving it
    running in job_runs; a second signal exits at once (the leases cover what was in hand). A
    signal ignored from the start (`nohup`) stays ignored."""

    def on_signal(signum: int, _frame: object) -> None:
        if stop.is_set():
            os._exit(128 + signum)
        stop.set()

    from yzos_jobs.daemon import STOP_SIGNALS

    kept = {s: h for s in STOP_SIGNALS if (h := signal.getsignal(s)) is not signal.SIG_IGN}
    for signum in kept:
        signal.signal(signum, on_signal)
    try:
        yield
    finally:
        for signum, handler in kept.items():
            signal.signal(signum, handler)


@cli.command("once")
@click.argument("job", type=click.Choice(sorted([*JOB_NAMES, *JOB_ALIASES])))
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@click.option("--force", is_flag=True, help="Run it even if it is paused.")
@pass_app
def once_cmd(app: AppContext, job: str, as_json: bool, force: bool) -> None:
    """Run one job now, in a slot of its own, and print its counts. A paused job exits 3
    without running unless --force."""
    from yzos_jobs.logging import logs_as_json
    from yzos_jobs.maintain.runner import run_job
    from yzos_jobs.progress import progress_bar, render_counts

    base = _job_context(app)
    with progress_bar(job, enabled=not logs_as_json()) as bar, _stop_on_signals(base.stop):
        ctx = replace(base, progress=bar.advance, total=bar.set_total)
        result = run_job(ctx, job, force=force)
    if result.status == "paused":
        _say_paused(result.job, result.stats, as_json)
    if as_json:
        click.echo(
            json.dumps(
                {"job": result.job, "status": result.status, **result.stats, "error": result.error}
            )
        )
    else:
        click.echo(render_counts(result))
    if result.status == "failed":
        raise SystemExit(EXIT_FAILURE)


IMPORT_COUNTS = (
    "files",
    "files_unchanged",
    "records",
    "sessions",
    "sessions_open",
    "files_waiting",
    "candidates",
    "apps",
    "triaged",
    "digests",
    "sessions_ended",
    "promoted",
    "merged",
    "skipped",
    "errors",
)
MAX_LINES_SHOWN = 20

json_option = click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")


def _run_import(
    app: AppContext, importer_cls: type, paths: list[Path], label: str, as_json: bool
) -> None:
    from yzos_jobs.importers.base import check_import_path
    from yzos_jobs.importers.records import ImportPathError
    from yzos_jobs.logging import logs_as_json
    from yzos_jobs.progress import IMPORT_COUNT_NAMES, counters_text, progress_bar

    try:
        for path in paths:  # before the database is opened, which makes a SQLite file
            check_import_path(path)
    except ImportPathError as exc:
        _fail(click.get_current_context(), str(exc), EXIT_FAILURE)
        return
    ctx = _job_context(app)
    with progress_bar(label, enabled=not logs_as_json(), in_bytes=True) as bar:
        importer = importer_cls(ctx, progress=bar.advance, total=bar.set_total)
        try:
            stats = importer.import_paths(paths)
        except ImportPathError as exc:
            _fail(click.get_current_context(), str(exc), EXIT_FAILURE)
            return
    notes = [*stats.notes, *_pending_note(ctx)]
    for message in stats.error_messages[:MAX_LINES_SHOWN]:
        click.echo(f"skipped {message}", err=True)
    if stats.errors > MAX_LINES_SHOWN:
        click.echo(f"… and {stats.errors - MAX_LINES_SHOWN} more skipped records", err=True)
    counts = stats.counts()
    if as_json:
        click.echo(json.dumps({"importer": label, **counts, "notes": notes}))
    else:
        click.echo(f"{label}: {counters_text(counts, IMPORT_COUNTS, IMPORT_COUNT_NAMES)}")
        for note in notes[:MAX_LINES_SHOWN]:
            click.echo(f"note: {note}")
    _log().info("import finished", importer=label, **counts)


def _pending_note(ctx: JobContext) -> list[str]:
    """Where candidates are left pending (an import stopped before its sessions' promote, a
    model that failed at session end, a session not ended yet), who decides them: an import
    read again has no new session to end, and without a daemon nothing else would say so."""
    from yzos_jobs.db.overview import candidates_waiting

    model = ctx.classifier.active_model_id() is not None
    with ctx.sessions() as s:
        waiting = candidates_waiting(s.connection(), model=model)
    if not waiting:
        return []
    which = "1 candidate waits" if waiting == 1 else f"{waiting} candidates wait"
    return [f"{which} for entity_promote (the daemon's next run, or yzos-jobs once entity_promote)"]


@cli.group("import")
def import_group() -> None:
    """Import observations: aider histories, JSONL records, Claude Code sessions."""


@import_group.command("aider")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@json_option
@pass_app
def import_aider(app: AppContext, paths: tuple[Path, ...], as_json: bool) -> None:
    """Import .aider.chat.history.md files (PATH: a file, or a directory to search)."""
    from yzos_jobs.importers.aider import AiderImporter

    _run_import(app, AiderImporter, list(paths), "aider", as_json)


@import_group.command("jsonl")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@json_option
@pass_app
def import_jsonl(app: AppContext, paths: tuple[Path, ...], as_json: bool) -> None:
    """Import generic JSONL records: candidate, app, triage, session_end."""
    from yzos_jobs.importers.jsonl import JsonlImporter

    _run_import(app, JsonlImporter, list(paths), "jsonl", as_json)


@import_group.command("claude-code")
@click.argument("directory", required=False, type=click.Path(path_type=Path))
@json_option
@pass_app
def import_claude_code(app: AppContext, directory: Path | None, as_json: bool) -> None:
    """Import Claude Code session transcripts (default: the [sources] claude_code directories,
    ~/.claude/projects and where CLAUDE_CONFIG_DIR or ~/.config/claude keeps them)."""
    from yzos_jobs.importers.claude_code import ClaudeCodeImporter, default_dir
    from yzos_jobs.sources.discovery import expand_paths

    if directory is not None:
        dirs = [directory]
    else:
        found, _ = expand_paths(app.settings.sources.claude_code)
        dirs = found or [default_dir()]  # none there: the error names Claude Code's own folder
    _run_import(app, ClaudeCodeImporter, dirs, "claude-code", as_json)


@cli.group("apps")
def apps_group() -> None:
    """App metadata (bundle id, name, category) the classifier shows the model."""


@apps_group.command("scan")
@click.argument("dirs", nargs=-1, type=click.Path(path_type=Path))
@pass_app
def apps_scan(app: AppContext, dirs: tuple[Path, ...]) -> None:
    """Read *.app bundles (Info.plist) and .desktop entries below DIRS into app_metadata.
    Default: /Applications and ~/Applications on macOS, the XDG application directories
    elsewhere."""
    from yzos_jobs.db.apps import AppRecord, upsert_app_metadata
    from yzos_jobs.db.connection import transaction
    from yzos_jobs.observe.app_meta import AppFileError, default_app_dirs, scan_apps

    app.logging()
    targets = list(dirs) or default_app_dirs()
    missing = [d for d in dirs if not d.is_dir()]
    if missing:
        why = "not a directory" if missing[0].exists() else "no such directory"
        _fail(click.get_current_context(), f"{missing[0]}: {why}", EXIT_FAILURE)
    found: list[AppRecord] = []
    errors = 0
    for item in scan_apps(targets):
        if isinstance(item, AppFileError):
            errors += 1
            click.echo(f"skipped {item}", err=True)
        else:
            found.append(item)
    with transaction(app.session_factory) as s:
        n = upsert_app_metadata(s, found)
    skipped = f" ({errors} files skipped)" if errors else ""
    click.echo(f"apps: {n} upserted from {', '.join(str(t) for t in targets)}{skipped}")
    _log().info("apps scanned", upserted=n, skipped=errors)


@cli.command("run")
@pass_app
def run_cmd(app: AppContext) -> None:
    """Run the daemon: entity_promote every interval_s, entity_purge_v06 every interval_h,
    import_sources (the [sources] section) every sources.interval_s, prune once a UTC day."""
    from yzos_jobs.daemon import run_daemon

    raise SystemExit(run_daemon(_job_context(app, log_level="info")))


@cli.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--check", is_flag=True, help="Exit 1 when a job's last run failed or is overdue.")
@pass_reading_app
def status_cmd(app: AppContext, as_json: bool, check: bool) -> None:
    """Queue depth, entity counts, the last run of each job, daemons seen recently."""
    from yzos_jobs.status import collect_status, render_status

    # A connection, not an ORM session: a status check loads no models (see db/overview.py).
    with app.ready_engine().connect() as conn:
        report = collect_status(conn, app.settings)
    click.echo(json.dumps(report, indent=2) if as_json else render_status(report))
    if check:
        for problem in report["problems"]:
            click.echo(f"yzos-jobs: check: {problem}", err=True)
        if report["problems"]:
            raise SystemExit(EXIT_FAILURE)


# -- review: list, inspect, explain, correct, export -------------------------------------------


def _print_json(data: Any) -> None:
    from yzos_jobs.review_render import json_text

    click.echo(json_text(data, sys.stdout, indent=2))


def _print_report(report: Any, as_json: bool, render: Callable[[Any, TextIO], None]) -> None:
    if as_json:
        _print_json(report)
    else:
        render(report, sys.stdout)


def _report_on(
    app: AppContext,
    ref: str,
    as_json: bool,
    build: Callable[[Session, Any], dict[str, Any]],
    render: Callable[[Any, TextIO], None],
) -> None:
    """Build a report on what REF names and print it."""
    from yzos_jobs.entity.refs import resolve

    with app.session_factory() as session, _reference_errors(as_json):
        report = build(session, resolve(session, ref))
    _print_report(report, as_json, render)


@contextmanager
def _reference_errors(as_json: bool) -> Iterator[None]:
    """A reference that names nothing is one line (exit 1); one that names several lists them
    and exits 2."""
    from yzos_jobs import review_render
    from yzos_jobs.entity.refs import AmbiguousRef, RefNotFound
    from yzos_jobs.review_reports import ambiguity_report

    try:
        yield
    except RefNotFound as exc:
        _fail(click.get_current_context(), str(exc), EXIT_FAILURE)
    except AmbiguousRef as exc:
        _print_report(ambiguity_report(exc), as_json, review_render.render_matches)
        _fail(click.get_current_context(), str(exc), EXIT_USAGE)


@cli.command("entities")
@click.option("--kind", type=click.Choice(ENTITY_KINDS), help="Only entities of this kind.")
@click.option("--status", type=click.Choice(["active", "archived"]), help="Only this status.")
@click.option(
    "--project", type=TEXT, metavar="P", help="Only the tasks of project P (a name or e:ID)."
)
@click.option("--search", type=TEXT, metavar="TEXT", help="Only names containing TEXT (any case).")
@click.option(
    "--limit", type=click.IntRange(1, 100_000), default=50, show_default=True, help="Lines shown."
)
@click.option("--json", "as_json", is_flag=True, help="Print the entities as JSON.")
@pass_reading_app
def entities_cmd(
    app: AppContext,
    kind: str | None,
    status: str | None,
    project: str | None,
    search: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """List entities, most recently seen first: name, kind, project, sightings, first and last
    seen, source of the last verdict."""
    from yzos_jobs import review_render, review_reports

    with app.session_factory() as session, _reference_errors(as_json):
        # one more than shown says whether the list must not pass for all there is
        lines = review_reports.entities_report(
            session, kind=kind, status=status, project=project, search=search, limit=limit + 1
        )
        total = len(lines)
        if total > limit:
            lines = lines[:limit]
            total = review_reports.entities_matching(
                session, kind=kind, status=status, project=project, search=search
            )
    _print_report(lines, as_json, review_render.render_entities)
    if total > len(lines):
        # beside the JSON list rather than in it, which stays the entities alone
        note = f"{len(lines)} of {total} shown, most recently seen first; --limit shows more"
        click.echo(note, err=as_json)


@cli.command("show")
@click.argument("ref", type=TEXT)
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON.")
@pass_reading_app
def show_cmd(app: AppContext, ref: str, as_json: bool) -> None:
    """Show an entity (its newest sightings, its tasks if a project, its decisions) or a
    candidate. REF: a name, e:ID (entity) or c:ID (candidate)."""
    from yzos_jobs import review_render, review_reports

    _report_on(app, ref, as_json, review_reports.show_report, review_render.render_show)


@cli.command("explain")
@click.argument("ref", type=TEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the chain as JSON.")
@pass_reading_app
def explain_cmd(app: AppContext, ref: str, as_json: bool) -> None:
    """The chain of decisions that led to an entity's or a candidate's state, each with its
    reason, source and model. REF: a name, e:ID or c:ID."""
    from yzos_jobs import review_render, review_reports

    _report_on(app, ref, as_json, review_reports.explain_report, review_render.render_explain)


@cli.command("correct")
@click.argument("ref", type=TEXT)
@click.option("--not-entity", is_flag=True, help="It is not an entity: archive it for good.")
@click.option("--kind", type=click.Choice(ENTITY_KINDS), help="It is an entity of kind K.")
@click.option("--rename", type=TEXT, metavar="NEW", help="Its name is NEW.")
@click.option(
    "--merge-into", type=TEXT, metavar="OTHER", help="It is the entity OTHER (name, e:ID)."
)
@click.option("--restore", is_flag=True, help="Bring an archived entity back.")
@click.option("--requeue", is_flag=True, help="Put a rejected candidate back to pending.")
@click.option("--reason", type=TEXT, metavar="TEXT", help="Why; kept with the correction.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_stored_app
def correct_cmd(
    app: AppContext,
    ref: str,
    not_entity: bool,
    kind: str | None,
    rename: str | None,
    merge_into: str | None,
    restore: bool,
    requeue: bool,
    reason: str | None,
    as_json: bool,
) -> None:
    """Correct an entity or a candidate (REF: a name, e:ID or c:ID). Final: the purge never
    re-judges it and later sightings never undo it; recent corrections teach the judge."""
    from yzos_jobs.entity.corrections import CorrectionRefused, correct

    given = {
        "not_entity": not_entity or None,
        "kind": kind,
        "rename": rename,
        "merge_into": merge_into,
        "restore": restore or None,
        "requeue": requeue or None,
    }
    chosen = [(name, value) for name, value in given.items() if value is not None]
    if len(chosen) != 1:
        raise click.UsageError(
            "give exactly one of --not-entity, --kind, --rename, --merge-into, --restore, --requeue"
        )
    action, value = chosen[0]
    from yzos_jobs.entity.corrections import REASON_CHARS
    from yzos_jobs.entity.policy import NAME_CHARS
    from yzos_jobs.runtime import build_classifier

    # what is kept cut, said once the correction is made
    notes = []
    if rename is not None and len(rename) > NAME_CHARS:
        notes.append(f"note: the name is kept cut to {NAME_CHARS} characters")
    if reason is not None and len(reason) > REASON_CHARS:
        notes.append(f"note: the reason is kept cut to {REASON_CHARS} characters")

    cache_keys = build_classifier(app.settings, app.session_factory).cache_keys
    with _reference_errors(as_json):
        try:
            done = correct(
                app.session_factory,
                ref,
                action,  # type: ignore[arg-type]
                value if isinstance(value, str) else None,
                reason,
                cache_keys,
            )
        except CorrectionRefused as exc:
            _fail(click.get_current_context(), str(exc), EXIT_USAGE)
            return
    for note in notes:
        click.echo(note, err=True)
    if as_json:
        _print_json(done.as_dict())
    else:
        click.echo(done.message)


@cli.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv"]),
    default="jsonl",
    show_default=True,
    help="JSON lines or CSV (with a header).",
)
@click.option("--include-archived", is_flag=True, help="Archived entities too.")
@pass_reading_app
def export_cmd(app: AppContext, fmt: str, include_archived: bool) -> None:
    """Export entities with kind, project, sighting count, first and last seen, to stdout."""
    from yzos_jobs.review_render import write_export
    from yzos_jobs.review_reports import export_rows

    with app.session_factory() as session:
        write_export(export_rows(session, include_archived), sys.stdout, fmt)


# -- operations: pause and resume ----------------------------------------------------------------

PAUSABLE = sorted([*JOB_NAMES, *JOB_ALIASES])


def _say_paused(job: str, note: dict[str, Any], as_json: bool) -> None:
    """`once` on a paused job: say who paused it and since when, and exit 3."""
    from yzos_jobs.status import shown_time

    if as_json:
        click.echo(json.dumps({"job": job, "status": "paused", **note}))
    else:
        click.echo(
            f"{job} is paused (by {note['paused_by']} since {shown_time(note['paused_at'])}); "
            f"`yzos-jobs resume {job}` resumes it, `once {job} --force` runs it anyway"
        )
    raise SystemExit(EXIT_PAUSED)


def _operator() -> str:
    """Who pauses: the user and host the command runs as."""
    import getpass
    import socket

    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a bare container)
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


@cli.command("pause")
@click.argument("job", type=click.Choice(PAUSABLE))
@pass_stored_app
def pause_cmd(app: AppContext, job: str) -> None:
    """Pause a scheduled job: every daemon on the database skips it from its next run on, until
    `resume`."""
    from yzos_jobs.db.column_types import utcnow
    from yzos_jobs.db.job_pauses import pause_job, pause_of
    from yzos_jobs.maintain.jobs import canonical_job
    from yzos_jobs.status import shown_time

    name = canonical_job(job)
    with app.ready_engine().begin() as conn:
        new = pause_job(conn, name, _operator(), utcnow())
        pause = pause_of(conn, name)
    assert pause is not None
    since = f"by {pause.paused_by} since {shown_time(pause.paused_at.isoformat())}"
    click.echo(f"{name} paused ({since})" if new else f"{name} was already paused ({since})")


@cli.command("resume")
@click.argument("job", type=click.Choice(PAUSABLE))
@pass_stored_app
def resume_cmd(app: AppContext, job: str) -> None:
    """Resume a paused job: daemons run it again from their next scheduled run."""
    from yzos_jobs.db.job_pauses import resume_job
    from yzos_jobs.maintain.jobs import canonical_job

    name = canonical_job(job)
    with app.ready_engine().begin() as conn:
        resumed = resume_job(conn, name)
    click.echo(f"{name} resumed" if resumed else f"{name} was not paused")


def main() -> None:
    sys.exit(cli.main(prog_name="yzos-jobs"))
