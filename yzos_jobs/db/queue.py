"""The candidate queue: insert, claim with a lease (FOR UPDATE SKIP LOCKED), reclaim expired leases.

A claim is committed before any LLM call, so a daemon that dies holding candidates loses nothing:
its leases expire and `reclaim_expired` hands the rows back to the queue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, func, insert, select, update
from sqlalchemy.orm import Session

from yzos_jobs.db.models import EntityCandidate

C = EntityCandidate


@dataclass(frozen=True)
class NewCandidate:
    """A candidate as an importer or observer queues it."""

    raw_text: str
    source_kind: str
    source_id: str
    suggested_kind: str | None = None
    app_bundle_id: str | None = None
    surrounding_text: str | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class ClaimedCandidate:
    id: int
    raw_text: str
    suggested_kind: str | None
    source_kind: str
    source_id: str
    app_bundle_id: str | None
    surrounding_text: str | None
    attempts: int
    created_at: datetime


_CLAIMED_COLUMNS = (
    C.id,
    C.raw_text,
    C.suggested_kind,
    C.source_kind,
    C.source_id,
    C.app_bundle_id,
    C.surrounding_text,
    C.attempts,
    C.created_at,
)


def insert_candidates(session: Session, rows: Sequence[NewCandidate], now: datetime) -> int:
    """Queue new candidates (status pending)."""
    if not rows:
        return 0
    full = [
        {
            "raw_text": r.raw_text,
            "suggested_kind": r.suggested_kind,
            "source_kind": r.source_kind,
            "source_id": r.source_id,
            "app_bundle_id": r.app_bundle_id,
            "surrounding_text": r.surrounding_text,
            "status": "pending",
            "attempts": 0,
            "created_at": r.created_at or now,
            "updated_at": now,
        }
        for r in rows
    ]
    session.connection().execute(insert(EntityCandidate), full)
    return len(full)


def reclaim_expired(session: Session, now: datetime) -> int:
    """Claims whose lease ran out go back to pending (their owner died or stalled)."""
    result = session.connection().execute(
        update(C)
        .where(C.status == "claimed", C.lease_until < now)
        .values(status="pending", claimed_by=None, lease_until=None, updated_at=now)
    )
    return int(result.rowcount or 0)


def claim_batch(
    session: Session,
    owner: str,
    *,
    limit: int,
    lease_s: float,
    now: datetime,
    after_id: int = 0,
    where: ColumnElement[bool] | None = None,
) -> list[ClaimedCandidate]:
    """Claim up to `limit` pending candidates with id > after_id, in id order. PostgreSQL skips
    rows another daemon is claiming (FOR UPDATE SKIP LOCKED); SQLite serialises writers."""
    condition = and_(C.status == "pending", C.id > after_id)
    if where is not None:
        condition = and_(condition, where)
    ids = (
        select(C.id).where(condition).order_by(C.id).limit(limit).with_for_update(skip_locked=True)
    )
    stmt = (
        update(C)
        .where(C.id.in_(ids))
        .values(
            status="claimed",
            claimed_by=owner,
            lease_until=now + timedelta(seconds=lease_s),
            attempts=C.attempts + 1,
            updated_at=now,
        )
        .returning(*_CLAIMED_COLUMNS)
    )
    # Core execution: no ORM identity bookkeeping for rows nobody keeps as objects.
    rows = [ClaimedCandidate(*row) for row in session.connection().execute(stmt)]
    rows.sort(key=lambda c: c.id)
    return rows


def extend_lease(
    session: Session, owner: str, ids: Sequence[int], lease_s: float, now: datetime
) -> int:
    if not ids:
        return 0
    result = session.connection().execute(
        update(C)
        .where(C.id.in_(list(ids)), C.status == "claimed", C.claimed_by == owner)
        .values(lease_until=now + timedelta(seconds=lease_s))
    )
    return int(result.rowcount or 0)


def release_owned(session: Session, owner: str, now: datetime) -> int:
    """Hand back every candidate this owner holds (a failed or interrupted run)."""
    result = session.connection().execute(
        update(C)
        .where(C.status == "claimed", C.claimed_by == owner)
        .values(status="pending", claimed_by=None, lease_until=None, updated_at=now)
    )
    return int(result.rowcount or 0)


def count_by_status(session: Session) -> dict[str, int]:
    rows = session.execute(select(C.status, func.count()).group_by(C.status))
    return {status: int(n) for status, n in rows}
