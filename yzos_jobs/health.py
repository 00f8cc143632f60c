"""The daemon's health, as /healthz reports it: healthy while the scheduler loop ticks, the
database answers, and `status --check` finds no problem (no failed or overdue job, not too much
decided by the fallback). A spent LLM budget and paused jobs are said, not failed: they are the
operator's own settings, and the daemon is doing what it was told."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine

from yzos_jobs.config import Settings
from yzos_jobs.db.connection import bounded_read
from yzos_jobs.db.job_pauses import all_pauses
from yzos_jobs.entity.budget_rules import spent_reason, today_usage
from yzos_jobs.status import collect_status, shown_time

# The scheduler's own tick (a job of the daemon) runs this often; a loop that has not ticked
# for STALLED_AFTER_S is taken for stuck.
TICK_S = 5
STALLED_AFTER_S = 30
# The longest the database may take to answer a health check on PostgreSQL; and the longest
# the probe waits for any answer at all (a database that hangs answers nothing).
CHECK_TIMEOUT_MS = 5000
PROBE_DEADLINE_S = 6.0


@dataclass
class Health:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def body(self) -> str:
        head = "ok" if self.ok else "unhealthy"
        return "\n".join([head, *self.problems, *self.notes]) + "\n"


def check_health(engine: Engine, settings: Settings, tick_age_s: float) -> Health:
    health = check_database(engine, settings)
    if (stall := stalled(tick_age_s)) is not None:
        health.problems.insert(0, stall)
    return health


def stalled(tick_age_s: float) -> str | None:
    if tick_age_s > STALLED_AFTER_S:
        return f"scheduler loop stalled: last tick {tick_age_s:.0f} s ago"
    return None


def no_answer(deadline_s: float) -> Health:
    """The health of a database that did not answer the probe in time."""
    return Health(problems=[f"database does not answer: no reply within {deadline_s:.0f} s"])


def check_database(engine: Engine, settings: Settings) -> Health:
    """What the database says: `status --check`'s problems, a spent budget, paused jobs."""
    health = Health()
    try:
        with bounded_read(engine, CHECK_TIMEOUT_MS) as conn:
            health.problems.extend(collect_status(conn, settings)["problems"])
            if (reason := spent_reason(settings.llm, today_usage(conn))) is not None:
                health.notes.append(reason)
            for pause in all_pauses(conn):
                health.notes.append(
                    f"{pause.job_name} paused by {pause.paused_by} since "
                    f"{shown_time(pause.paused_at.isoformat())}"
                )
            conn.rollback()
    except Exception as exc:  # whatever the database did, the probe answers
        first = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        health.problems.append(f"database does not answer: {first[0] if first else exc!r}")
    return health
