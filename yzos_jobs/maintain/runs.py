"""Job run history, and one run per (job, slot) across every daemon sharing the database.

A scheduled purge claims its time slot with INSERT … ON CONFLICT DO NOTHING: however many daemons
fire, one row, one run. A running row's lease is renewed while it works; a row whose owner died is
marked failed when the lease runs out, and a later attempt may take the slot over.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from blake3 import blake3
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.engine import transaction
from yzos_jobs.db.leases import LeaseKeeper
from yzos_jobs.db.models import JobRun
from yzos_jobs.db.types import utcnow

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def interval_slot(now: datetime, interval: timedelta) -> str:
    """The fixed time slot `now` falls in: every daemon computes the same one."""
    index = int((now - EPOCH) / interval)
    start = EPOCH + index * interval
    return start.strftime("%Y-%m-%dT%H:%M:%SZ")


def private_slot(kind: str, owner: str, now: datetime) -> str:
    """A slot of its own (manual `once`, or one daemon's promote run): never collides."""
    tag = blake3(owner.encode()).hexdigest()[:8]
    return f"{kind}:{now:%Y%m%dT%H%M%S.%f}@{tag}"


@dataclass(frozen=True)
class RunHandle:
    id: int
    job_name: str
    slot: str
    owner: str


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


def claim_slot(
    sessions: sessionmaker[Session], job_name: str, slot: str, owner: str, lease_s: float
) -> RunHandle | None:
    """Start the run of (job, slot) unless another daemon has it (or has finished it)."""
    now = utcnow()
    lease = now + timedelta(seconds=lease_s)
    with transaction(sessions) as s:
        expire_dead_runs(s, now)
        stmt = (
            upsert_insert(s, JobRun)
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
        run_id = s.scalar(stmt)
        if run_id is None:
            # Only a failed attempt (its owner died or it raised) may be taken over.
            run_id = s.scalar(
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
    return RunHandle(run_id, job_name, slot, owner) if run_id is not None else None


def finish_run(
    sessions: sessionmaker[Session], run: RunHandle, stats: dict[str, Any], error: str | None
) -> None:
    with transaction(sessions) as s:
        s.execute(
            update(JobRun)
            .where(JobRun.id == run.id, JobRun.owner == run.owner)
            .values(
                status="failed" if error else "succeeded",
                finished_at=utcnow(),
                lease_until=None,
                stats=stats,
                error=error[:2000] if error else None,
            )
        )


@contextmanager
def keep_alive(sessions: sessionmaker[Session], run: RunHandle, lease_s: float) -> Iterator[None]:
    def renew() -> None:
        with transaction(sessions) as s:
            s.execute(
                update(JobRun)
                .where(JobRun.id == run.id, JobRun.owner == run.owner, JobRun.status == "running")
                .values(lease_until=utcnow() + timedelta(seconds=lease_s))
            )

    with LeaseKeeper(renew, lease_s):
        yield


def prune_runs(session: Session, older_than: datetime) -> int:
    result = session.execute(
        delete(JobRun).where(JobRun.status != "running", JobRun.started_at < older_than)
    )
    return int(result.rowcount or 0)


def last_runs(session: Session) -> dict[str, JobRun]:
    latest = (
        select(JobRun.job_name, func.max(JobRun.started_at).label("at"))
        .group_by(JobRun.job_name)
        .subquery()
    )
    rows = session.scalars(
        select(JobRun).join(
            latest, (JobRun.job_name == latest.c.job_name) & (JobRun.started_at == latest.c.at)
        )
    )
    return {r.job_name: r for r in rows}


def recent_owners(session: Session, since: datetime) -> list[tuple[str, datetime]]:
    rows = session.execute(
        select(JobRun.owner, func.max(JobRun.started_at))
        .where(JobRun.started_at >= since)
        .group_by(JobRun.owner)
        .order_by(JobRun.owner)
    )
    return [(owner, at) for owner, at in rows]
