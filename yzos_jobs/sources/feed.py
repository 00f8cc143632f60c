"""The `import_sources` job: the daemon feeds itself from `[sources]`. Each run finds the files
of every source, and imports each one this host's other processes are not importing (a lock per
file, see file_locks): only what changed since the last run is read (importer_files marks,
importer_seen rows), sessions idle for `importers.session_idle_s` are closed, and closed
sessions are handed on as `yzos-jobs import` hands them on (promoted inline without a model,
queued for triage with one). Application folders are scanned when they change."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from yzos_jobs.db.apps import AppRecord, upsert_app_metadata
from yzos_jobs.db.connection import database_identity, transaction
from yzos_jobs.db.importer_state import FileMark, load_mark, save_mark
from yzos_jobs.files import describe
from yzos_jobs.importers.aider import AiderImporter
from yzos_jobs.importers.base import FileImporter
from yzos_jobs.importers.claude_code import ClaudeCodeImporter
from yzos_jobs.importers.jsonl import JsonlImporter
from yzos_jobs.importers.transcript_groups import transcript_groups
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.logging import get_logger
from yzos_jobs.observe.app_meta import AppFileError, default_app_dirs, scan_apps
from yzos_jobs.sources.discovery import aider_histories, expand_paths, files_below
from yzos_jobs.sources.file_locks import file_lock

log = get_logger(__name__)

SOURCES = ("claude_code", "aider", "jsonl", "apps")
# The counters a source reports (an importer's, and how many files another process held).
COUNTERS = (
    "files",
    "files_unchanged",
    "locked",
    "records",
    "sessions",
    "sessions_open",
    "files_waiting",
    "candidates",
    "apps",
    "digests",
    "sessions_ended",
    "promoted",
    "merged",
    "skipped",
    "errors",
    "missing_paths",
)
# What a run did, summed over the sources. Files read are not in it: a file whose last session
# is still open is read on every run and yields nothing until the session closes.
WORK = (
    "records",
    "sessions",
    "candidates",
    "apps",
    "digests",
    "sessions_ended",
    "promoted",
    "merged",
    "skipped",
    "errors",
    "locked",
)
APPS_IMPORTER = "apps"  # importer_files rows of application folders: their mtime when scanned
MAX_WARNINGS = 20

# A unit of work: the path its lock is keyed by, and the files imported together.
Unit = tuple[Path, list[Path]]


def run_import_sources(ctx: JobContext) -> dict[str, Any]:
    started = time.monotonic()
    per_source: dict[str, dict[str, int]] = {}
    # which database the run writes to, for the file locks: once a run (on PostgreSQL, asked
    # of the server)
    database = database_identity(ctx.sessions.kw["bind"])
    for name in SOURCES:
        if ctx.stop.is_set():
            break
        per_source[name] = _SOURCE_RUNS[name](ctx, database)
    # The run's own counters say what it did (an idle run has none); what each source holds
    # (files unchanged, sessions still open) is in its table, which status shows.
    totals = {k: sum(s.get(k, 0) for s in per_source.values()) for k in WORK}
    return {
        **totals,
        "sources": per_source,
        "stopped": ctx.stop.is_set(),
        "seconds": round(time.monotonic() - started, 3),
    }


# A path that cannot be read stays so from run to run (a FIFO, a dangling link, a folder this
# user cannot enter): its line is logged the first time this process meets it, not every
# interval. Bounded, so that a tree of unreadable folders cannot grow it without end.
_REPORTED_MAX = 10_000
_reported: set[tuple[str, str]] = set()


def _warn_once(event: str, key: str, **fields: str) -> bool:
    """Log the line unless this process logged it before; whether it was logged now."""
    if (event, key) in _reported:
        return False
    if len(_reported) < _REPORTED_MAX:
        _reported.add((event, key))
    log.warning(event, **fields)
    return True


def _report(path: Path, exc: OSError) -> None:
    reason = describe(exc)
    _warn_once("source file skipped", f"{path}\0{reason}", path=str(path), reason=reason)


def _claude_code(ctx: JobContext, database: str) -> dict[str, int]:
    dirs, missing = expand_paths(ctx.settings.sources.claude_code)
    files = files_below(dirs, ClaudeCodeImporter.PATTERN, _report)
    units = [(group[0], group) for group in transcript_groups(files)]
    return _import(ctx, ClaudeCodeImporter(ctx), units, missing, database)


def _aider(ctx: JobContext, database: str) -> dict[str, int]:
    sources = ctx.settings.sources
    roots, missing = expand_paths(sources.aider)
    files = aider_histories(roots, sources.aider_max_depth, _report)
    return _import(ctx, AiderImporter(ctx), [(f, [f]) for f in files], missing, database)


def _jsonl(ctx: JobContext, database: str) -> dict[str, int]:
    paths, missing = expand_paths(ctx.settings.sources.jsonl)
    files = files_below(paths, JsonlImporter.PATTERN, _report)
    return _import(ctx, JsonlImporter(ctx), [(f, [f]) for f in files], missing, database)


def _import(
    ctx: JobContext,
    importer: FileImporter,
    units: Sequence[Unit],
    missing: list[Path],
    database: str,
) -> dict[str, int]:
    """Import each unit whose lock this process gets (for `database`); the others are another
    process's now."""
    locked = 0
    with importer.importing():
        for key, files in units:
            if ctx.stop.is_set():
                break
            with file_lock(key, database) as held:
                if held:
                    importer.import_unit(files)
                else:
                    locked += 1
    stats = importer.stats
    # A record or file that fails the same way at every run (a file that cannot be read) was
    # reported at the first: counted apart, so an interval that met nothing new stays quiet
    again = 0
    for message in stats.error_messages[:MAX_WARNINGS]:
        if not _warn_once("source record skipped", message, importer=importer.NAME, error=message):
            again += 1
    counts = stats.counts()
    found = {k: int(counts.get(k, 0)) for k in COUNTERS if k in counts}
    if again:
        found["errors"] = found.get("errors", again) - again
        found["errors_again"] = again
    return {**found, "locked": locked, "missing_paths": len(missing)}


def _apps(ctx: JobContext, database: str) -> dict[str, int]:
    """The application folders, once the listing of one changed since they were last scanned:
    all of them, since entries of one folder and another can name one window class (the
    editor's entry in one, its URL handler's in another) and the scan keeps the best of them."""
    if not ctx.settings.sources.apps:
        return {}
    folders = [d for d in default_app_dirs() if d.is_dir()]
    changed: list[tuple[Path, FileMark]] = []
    marks: list[tuple[Path, FileMark]] = []
    with ctx.sessions() as s:
        for folder in folders:
            now = FileMark(0, folder.stat().st_mtime_ns, 0, "")
            marks.append((folder, now))
            if load_mark(s, APPS_IMPORTER, str(folder)) != now:
                changed.append((folder, now))
    if not changed:
        return {"files_unchanged": len(folders)}
    found: list[AppRecord] = []
    errors = 0
    with file_lock(Path("/") / APPS_IMPORTER, database) as held:
        if not held:
            return {"locked": len(changed)}
        for item in scan_apps(folders):
            if isinstance(item, AppFileError):
                errors += 1
            else:
                found.append(item)
        with transaction(ctx.sessions) as s:
            stored = upsert_app_metadata(s, found)
            for folder, mark in marks:
                save_mark(s, APPS_IMPORTER, str(folder), mark)
    return {"files": len(folders), "apps": stored, "errors": errors}


_SOURCE_RUNS = {"claude_code": _claude_code, "aider": _aider, "jsonl": _jsonl, "apps": _apps}
