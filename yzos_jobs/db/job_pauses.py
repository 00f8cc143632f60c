"""job_pauses: the jobs an operator paused. One row per paused job; every daemon on the database
reads it before a scheduled run, so a pause holds cluster-wide from each daemon's next run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, column, delete, select, table
from sqlalchemy.dialects import postgresql, sqlite

from yzos_jobs.db.column_types import UTCDateTime

JOB_PAUSES = table(
    "job_pauses",
    column("job_name"),
    column("paused_by"),
    column("paused_at", UTCDateTime()),
)


@dataclass(frozen=True)
class Pause:
    job_name: str
    paused_by: str
    paused_at: datetime


def pause_job(conn: Connection, job_name: str, paused_by: str, now: datetime) -> bool:
    """Pause `job_name`; False when it was paused already (the first pause stands)."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    stmt = (
        dialect.insert(JOB_PAUSES)
        .values(job_name=job_name, paused_by=paused_by, paused_at=now)
        .on_conflict_do_nothing(index_elements=["job_name"])
        .returning(JOB_PAUSES.c.job_name)
    )
    return conn.execute(stmt).scalar() is not None


def resume_job(conn: Connection, job_name: str) -> bool:
    """Resume `job_name`; False when it was not paused."""
    result = conn.execute(delete(JOB_PAUSES).where(JOB_PAUSES.c.job_name == job_name))
    return bool(result.rowcount)


def pause_of(conn: Connection, job_name: str) -> Pause | None:
    row = conn.execute(
        select(JOB_PAUSES.c.job_name, JOB_PAUSES.c.paused_by, JOB_PAUSES.c.paused_at).where(
            JOB_PAUSES.c.job_name == job_name
        )
    ).first()
    return Pause(*row) if row is not None else None


def all_pauses(conn: Connection) -> list[Pause]:
    rows = conn.execute(
        select(JOB_PAUSES.c.job_name, JOB_PAUSES.c.paused_by, JOB_PAUSES.c.paused_at).order_by(
            JOB_PAUSES.c.job_name
        )
    )
    return [Pause(*row) for row in rows]
