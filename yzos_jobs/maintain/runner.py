"""Runs one job inside its job_runs row: claim the slot, keep the lease, record stats or error."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from sqlalchemy.exc import SQLAlchemyError

from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.job_pauses import Pause, pause_of
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.logging import did_something, get_logger, logs_as_json, run_fields
from yzos_jobs.maintain import slots
from yzos_jobs.maintain.jobs import JOBS, canonical_job

log = get_logger(__name__)


# How often a running job looks for a pause: a pause ends the run at its next batch.
PAUSE_POLL_S = 2.0
STOP_POLL_S = 0.1


def paused(ctx: JobContext, job: str) -> Pause | None:
    """The pause in force on `job`, read from the database (every daemon reads the same)."""
    with ctx.sessions() as s:
        return pause_of(s.connection(), job)


@contextmanager
def _stops_when_paused(ctx: JobContext, job: str, force: bool) -> Iterator[JobContext]:
    """The run's context, whose stop flag is raised by the daemon's stop and, unless `force`, by
    a pause of the job: the run ends at its next batch, as it does on SIGTERM, what it has not
    claimed left for after the resume."""
    if force:
        yield ctx
        return
    outer, run_stop, done = ctx.stop, threading.Event(), threading.Event()

    def watch() -> None:
        # Short waits: the daemon's stop reaches the run at once, and the watch ends with it.
        next_look = time.monotonic() + PAUSE_POLL_S
        while not done.wait(STOP_POLL_S):
            if outer.is_set():
                run_stop.set()
                return
            if time.monotonic() < next_look:
                continue
            next_look = time.monotonic() + PAUSE_POLL_S
            try:
                pause = paused(ctx, job)
            except Exception as exc:  # a blip: the next look, or the run's own writes, tell
                log.warning("could not look for a pause", job=job, error=str(exc)[:300])
                continue
            if pause is not None and not done.is_set():
                log.info("job paused: the run ends at its next batch", job=job)
                run_stop.set()
                return

    watcher = threading.Thread(target=watch, name=f"pause-watch-{job}", daemon=True)
    watcher.start()
    try:
        yield replace(ctx, stop=run_stop)
    finally:
        done.set()


@dataclass
class RunResult:
    job: str
    slot: str
    # paused: an operator paused the job (`yzos-jobs pause`); nothing ran.
    status: Literal["succeeded", "failed", "skipped", "paused"]
    stats: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def run_job(
    ctx: JobContext, job: str, slot: str | None = None, *, force: bool = False
) -> RunResult:
    """Run `job` once. `slot` None: a slot of its own (never blocks, never blocked); a shared slot
    (the scheduled purge) runs once across every daemon. A paused job does not run unless
    `force`; the result names who paused it and when."""
    name = canonical_job(job)
    slot = slot or slots.private_slot("once", ctx.owner, utcnow())
    lease_s = ctx.settings.jobs.run_lease_s
    try:
        pause = None if force else paused(ctx, name)
        handle = None if pause else slots.claim_slot(ctx.sessions, name, slot, ctx.owner, lease_s)
    except SQLAlchemyError as exc:
        # The database refused before the run began (gone, or its tables dropped): a failed
        # run for the metrics and the log, though no run row could record it.
        error = _error_line(exc)
        log.error("job could not start", job=name, slot=slot, owner=ctx.owner, error=error)
        return RunResult(name, slot, "failed", {}, error)
    if pause is not None:
        log.debug("job paused: run skipped", job=name, paused_by=pause.paused_by)
        note = {"paused_by": pause.paused_by, "paused_at": pause.paused_at.isoformat()}
        return RunResult(name, slot, "paused", note)
    if handle is None:
        log.debug("job slot taken by another daemon", job=name, slot=slot, owner=ctx.owner)
        return RunResult(name, slot, "skipped")
    started = time.monotonic()
    ctx = replace(ctx, run_id=handle.id, breaker=ctx.classifier.new_breaker())
    log.debug("job started", job=name, slot=slot, owner=ctx.owner)
    try:
        with (
            slots.keep_alive(ctx.sessions, handle, lease_s),
            _stops_when_paused(ctx, name, force) as run_ctx,
        ):
            stats = JOBS[name](run_ctx)
            if run_ctx.stop.is_set() and not ctx.stop.is_set():
                stats = {**stats, "paused": True}  # it stopped for the pause, not a signal
    except Exception as exc:
        error = _error_line(exc)
        seconds = round(time.monotonic() - started, 3)
        try:
            slots.finish_run(ctx.sessions, handle, {"seconds": seconds}, error)
        except Exception as record_exc:  # the lease expiry marks it failed instead
            log.error("could not record failed run", job=name, error=str(record_exc))
        log.error("job failed", job=name, slot=slot, owner=ctx.owner, error=error, seconds=seconds)
        return RunResult(name, slot, "failed", {"seconds": seconds}, error)
    slots.finish_run(ctx.sessions, handle, stats, None)
    _log_finished(name, slot, ctx.owner, stats)
    return RunResult(name, slot, "succeeded", stats)


def _error_line(exc: BaseException) -> str:
    """What went wrong, in one line: the error's kind and the first line of what it says (for a
    database error, what the driver said)."""
    said = getattr(exc, "orig", None) or exc
    return f"{exc.__class__.__name__}: {said}".splitlines()[0]


def _log_finished(job: str, slot: str, owner: str, stats: dict[str, Any]) -> None:
    """One line per run that did something, at info; an idle run at debug. A person's console
    line names the job and what it did; a JSON line carries the slot, the owner and every
    counter."""
    where = {"slot": slot, "owner": owner} if logs_as_json() else {}
    emit = log.info if did_something(stats) else log.debug
    emit("job finished", job=job, **where, **run_fields(stats))
