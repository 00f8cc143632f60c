"""Job slots: which run a daemon may start, and keeping its job_runs row alive while it works.

A scheduled purge slot is the same instant on every daemon, so one row, one run per cluster; a
manual `once` or a daemon's promote run gets a private slot that never collides.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from blake3 import blake3
from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.db import job_runs as run_db
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import run_in_transaction, transaction
from yzos_jobs.db.leases import LeaseKeeper

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


def claim_slot(
    sessions: sessionmaker[Session], job_name: str, slot: str, owner: str, lease_s: float
) -> RunHandle | None:
    """Start the run of (job, slot) unless another daemon has it (or has finished it)."""
    with transaction(sessions) as s:
        run_id = run_db.claim_run(s, job_name, slot, owner, utcnow(), lease_s)
    return RunHandle(run_id, job_name, slot, owner) if run_id is not None else None


def finish_run(
    sessions: sessionmaker[Session], run: RunHandle, stats: dict[str, Any], error: str | None
) -> None:
    """Record how the run ended. Once its work is committed a dropped connection must not leave
    the row `running` until its lease runs out (and then `failed`, its counts lost): recording
    the end is the same update each time, so it is tried again on a fresh connection."""
    finished = utcnow()
    run_in_transaction(
        sessions,
        lambda s: run_db.finish_run(s, run.id, run.owner, stats, error, finished),
        idempotent=True,
    )


@contextmanager
def keep_alive(sessions: sessionmaker[Session], run: RunHandle, lease_s: float) -> Iterator[None]:
    def renew() -> None:
        with transaction(sessions) as s:
            run_db.renew_run(s, run.id, run.owner, utcnow() + timedelta(seconds=lease_s))

    with LeaseKeeper(renew, lease_s):
        yield
