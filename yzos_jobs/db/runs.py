"""job_runs: one row per (job, slot). INSERT … ON CONFLICT DO NOTHING makes each shared slot run
once across every daemon; a running row's lease is renewed while it works, and a row whose owner
died is marked failed when the lease runs out, so a later attempt may take the slot over."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import JobRun


@dataclass(frozen=True)
class RunRow:
    id: int
    job_name: str
    slot: str
    status: str
    owner: str
    started_at: datetime
    finished_at: datetime | None
    stats: dict[str, Any] | None
    error: str | None


def expire_dead_runs(session: Session, now: datetime) -> int:
    result = session.execute(
        update(JobRun)
        .where(JobRun.status == "running", JobRun.lease_until < now)
        .values(
            status="failed",
            finished_at=now,
            error=func.coalesce(JobRun.error, "owner stopped renewing its lease (died?)"),
        )
    )
    return int(result.rowcount or 0)


def claim_run(
    session: Session, job_name: str, slot: str, owner: str, now: datetime, lease_s: float
) -> int | None:
    """Start the run of (job, slot) unless another daemon has it (or has finished it); a failed
    attempt (its owner died or it raised) is taken over. Returns the run's id, or None."""
    lease = now + timedelta(seconds=lease_s)
    expire_dead_runs(session, now)
    stmt = (
        upsert_insert(session, JobRun)
        .values(
            job_name=job_name,
            slot=slot,
            status="running",
            owner=owner,
            started_at=now,
            lease_until=lease,
        )
        .on_conflict_do_nothing(index_elements=["job_name", "slot"])
        .returning(JobRun.id)
    )
    run_id = session.scalar(stmt)
    if run_id is not None:
        return int(run_id)
    taken = session.scalar(
        update(JobRun)
        .where(JobRun.job_name == job_name, JobRun.slot == slot, JobRun.status == "failed")
        .values(
            status="running",
            owner=owner,
            started_at=now,
            lease_until=lease,
            finished_at=None,
            error=None,
        )
        .returning(JobRun.id)
    )
    return int(taken) if taken is not None else None


def renew_run(session: Session, run_id: int, owner: str, lease_until: datetime) -> None:
    session.execute(
        update(JobRun)
        .where(JobRun.id == run_id, JobRun.owner == owner, JobRun.status == "running")
        .values(lease_until=lease_until)
    )


def finish_run(
    session: Session,
    run_id: int,
    owner: str,
    stats: dict[str, Any],
    error: str | None,
    now: datetime,
) -> None:
    session.execute(
        update(JobRun)
        .where(JobRun.id == run_id, JobRun.owner == owner)
        .values(
            status="failed" if error else "succeeded",
            finished_at=now,
            lease_until=None,
            stats=stats,
            error=error[:2000] if error else None,
        )
    )


def prune_runs(session: Session, older_than: datetime) -> int:
    result = session.execute(
        delete(JobRun).where(JobRun.status != "running", JobRun.started_at < older_than)
    )
    return int(result.rowcount or 0)


_ROW_COLUMNS = (
    JobRun.id,
    JobRun.job_name,
    JobRun.slot,
    JobRun.status,
    JobRun.owner,
    JobRun.started_at,
    JobRun.finished_at,
    JobRun.stats,
    JobRun.error,
)


def last_runs(session: Session) -> dict[str, RunRow]:
    """The latest run of each job."""
    latest = (
        select(JobRun.job_name, func.max(JobRun.started_at).label("at"))
        .group_by(JobRun.job_name)
        .subquery()
    )
    rows = session.execute(
        select(*_ROW_COLUMNS).join(
            latest, (JobRun.job_name == latest.c.job_name) & (JobRun.started_at == latest.c.at)
        )
    )
    return {r.job_name: r for r in (RunRow(*row) for row in rows)}


def recent_owners(session: Session, since: datetime) -> list[tuple[str, datetime]]:
    rows = session.execute(
        select(JobRun.owner, func.max(JobRun.started_at))
        .where(JobRun.started_at >= since)
        .group_by(JobRun.owner)
        .order_by(JobRun.owner)
    )
    return [(owner, at) for owner, at in rows]


def recent_runs(session: Session, job_name: str, limit: int) -> list[RunRow]:
    """The job's latest runs, newest first."""
    rows = session.execute(
        select(*_ROW_COLUMNS)
        .where(JobRun.job_name == job_name)
        .order_by(JobRun.started_at.desc())
        .limit(limit)
    )
    return [RunRow(*row) for row in rows]
