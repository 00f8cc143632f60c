"""Claiming queued rows with a lease, for both queues (`entity_candidates` and `session_triage`):
pending → claimed with an owner, a lease and one more attempt; a lease extended by its owner;
claimed → pending when the owner hands rows back or their lease runs out.

A claim is committed before any LLM call, so a daemon that dies holding rows loses nothing: its
leases expire and the rows go back to the queue. Every write after the claim names the owner and
the state it expects; a row that changed hands is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Row, and_, any_, case, func, select, update
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import chunks, is_postgres
from yzos_jobs.db.models import EntityCandidate, SessionTriage

# The queue tables: each has id, status, claimed_by, lease_until, attempts and updated_at.
Queue = type[EntityCandidate] | type[SessionTriage]


@dataclass(frozen=True)
class Claim:
    """Who claims how many rows past which id, for how long, as of when."""

    owner: str
    limit: int
    lease_s: float
    now: datetime
    after_id: int = 0


def claim(
    session: Session,
    queue: Queue,
    request: Claim,
    where: ColumnElement[bool] | None,
    returning: Sequence[Any],
) -> list[Row[Any]]:
    """Claim up to `request.limit` pending rows with an id past `request.after_id` that match
    `where`, in id order, and return their `returning` columns. PostgreSQL skips rows another
    daemon is claiming (FOR UPDATE SKIP LOCKED); SQLite serialises writers."""
    ids = (
        select(queue.id)
        .where(queue.status == "pending", queue.id > request.after_id)
        .order_by(queue.id)
        .limit(request.limit)
        .with_for_update(skip_locked=True)
    )
    if where is not None:
        ids = ids.where(where)
    # PostgreSQL plans `id IN (subquery)` as a hash join over the whole queue; `id = ANY(ARRAY(
    # subquery))` looks the claimed rows up by primary key, however long the queue is.
    picked = (
        queue.id == any_(func.array(ids.scalar_subquery()))
        if is_postgres(session)
        else queue.id.in_(ids)
    )
    stmt = (
        update(queue)
        .where(picked)
        .values(
            status="claimed",
            claimed_by=request.owner,
            lease_until=request.now + timedelta(seconds=request.lease_s),
            attempts=queue.attempts + 1,
            updated_at=request.now,
        )
        .returning(*returning)
    )
    # Core execution: no ORM identity bookkeeping for rows nobody keeps as objects.
    return list(session.connection().execute(stmt))


def owned(queue: Queue, owner: str) -> ColumnElement[bool]:
    """The rows this owner still holds."""
    return and_(queue.status == "claimed", queue.claimed_by == owner)


def extend(
    session: Session, queue: Queue, owner: str, ids: Sequence[int], lease_s: float, now: datetime
) -> int:
    """Renew the lease of the rows among `ids` this owner still holds; returns how many."""
    total = 0
    for chunk in chunks(ids):
        result = session.connection().execute(
            update(queue)
            .where(queue.id.in_(chunk), owned(queue, owner))
            .values(lease_until=now + timedelta(seconds=lease_s))
        )
        total += int(result.rowcount or 0)
    return total


def attempt_given_back(queue: Queue) -> ColumnElement[int]:
    """A row's attempts less the claim's own: a claim that asked nothing (the process was
    stopping) spends none."""
    return case((queue.attempts > 0, queue.attempts - 1), else_=0)


def release(
    session: Session,
    queue: Queue,
    condition: ColumnElement[bool],
    now: datetime,
    *,
    unasked: bool = False,
) -> int:
    """The one claimed → pending transition. Attempts stay counted (a claim that ended without a
    decision may be what stops every daemon that takes it), except where nothing was asked
    (`unasked`: the process was stopping), which gives the claim's attempt back."""
    values: dict[str, Any] = {
        "status": "pending",
        "claimed_by": None,
        "lease_until": None,
        "updated_at": now,
    }
    if unasked:
        values["attempts"] = attempt_given_back(queue)
    result = session.connection().execute(
        update(queue).where(queue.status == "claimed", condition).values(**values)
    )
    return int(result.rowcount or 0)


def release_owned(session: Session, queue: Queue, owner: str, now: datetime) -> int:
    """Hand back every row this owner holds (a failed or interrupted run)."""
    return release(session, queue, queue.claimed_by == owner, now)


def reclaim_expired(session: Session, queue: Queue, now: datetime) -> int:
    """Claims whose lease ran out go back to pending (their owner died or stalled)."""
    return release(session, queue, queue.lease_until < now, now)
