"""Runs one job inside its job_runs row: claim the slot, keep the lease, record stats or error."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.job_pauses import Pause, pause_of
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.logging import did_something, get_logger, logs_as_json, run_fields
from yzos_jobs.maintain import slots
from yzos_jobs.maintain.jobs import JOBS, canonical_job

log = get_logger(__name__)


def paused(ctx: JobContext, job: str) -> Pause | None:
    """The pause in force on `job`, read from the database (every daemon reads the same)."""
    with ctx.sessions() as s:
        return pause_of(s.connection(), job)


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
    if not force and (pause := paused(ctx, name)) is not None:
        log.debug("job paused: run skipped", job=name, paused_by=pause.paused_by)
        note = {"paused_by": pause.paused_by, "paused_at": pause.paused_at.isoformat()}
        return RunResult(name, slot, "paused", note)
    lease_s = ctx.settings.jobs.run_lease_s
    handle = slots.claim_slot(ctx.sessions, name, slot, ctx.owner, lease_s)
    if handle is None:
        log.debug("job slot taken by another daemon", job=name, slot=slot, owner=ctx.owner)
        return RunResult(name, slot, "skipped")
    started = time.monotonic()
    ctx = replace(ctx, run_id=handle.id, breaker=ctx.classifier.new_breaker())
    log.debug("job started", job=name, slot=slot, owner=ctx.owner)
    try:
        with slots.keep_alive(ctx.sessions, handle, lease_s):
            stats = JOBS[name](ctx)
    except Exception as exc:
        error = f"{exc.__class__.__name__}: {exc}".splitlines()[0]
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


def _log_finished(job: str, slot: str, owner: str, stats: dict[str, Any]) -> None:
    """One line per run that did something, at info; an idle run at debug. A person's console
    line names the job and what it did; a JSON line carries the slot, the owner and every
    counter."""
    where = {"slot": slot, "owner": owner} if logs_as_json() else {}
    emit = log.info if did_something(stats) else log.debug
    emit("job finished", job=job, **where, **run_fields(stats))
