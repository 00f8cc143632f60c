"""job_runs: one row per (job, slot). INSERT … ON CONFLICT DO NOTHING makes each shared slot run
once across every daemon; a running row's lease is renewed while it works, and a row whose owner
died is marked failed when the lease runs out, so a later attempt may take the slot over."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, update
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import JobRun


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
