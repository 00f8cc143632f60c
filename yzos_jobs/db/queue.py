"""The candidate queue, and every state change of a candidate: insert, claim with a lease,
extend, release back to pending (the lease itself is `lease_claim.py`'s, shared with the triage
queue), finish (promoted or rejected), relink on a merge, requeue on a correction; and the task
names a session's segments proposed, by line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import ColumnElement, and_, or_, select, text, update
from sqlalchemy.orm import Session

from yzos_jobs.db import lease_claim
from yzos_jobs.db.dialect import (
    by_key_only,
    chunks,
    insert_rows,
    is_postgres,
    row_source,
    time_param,
)
from yzos_jobs.db.lease_claim import Claim
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
    project_path: str | None = None  # the session's repository, normalised
    source_line: int | None = None  # the line of the source file it rests on


@dataclass(frozen=True)
class QueuedCandidate:
    """What the judge is shown of a queued candidate (and its id), whatever its state."""

    id: int
    raw_text: str
    suggested_kind: str | None
    source_kind: str
    source_id: str
    app_bundle_id: str | None
    surrounding_text: str | None


@dataclass(frozen=True)
class ClaimedCandidate(QueuedCandidate):
    attempts: int
    created_at: datetime
    project_path: str | None = None


@dataclass(frozen=True)
class FinishedCandidate:
    """The final state of one owned candidate: its entity (if any), verdict and reason."""

    id: int
    entity_id: int | None
    verdict: dict[str, Any] | None
    reason: str | None = None


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
    C.project_path,
)


def insert_candidates(
    session: Session, rows: Sequence[NewCandidate], now: datetime, *, held: bool = False
) -> int:
    """Queue new candidates: pending, or held while their session waits for triage."""
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
            "created_at": r.created_at or now,
            "project_path": r.project_path,
            "source_line": r.source_line,
        }
        for r in rows
    ]
    fixed = {"status": "held" if held else "pending", "attempts": 0, "updated_at": now}
    insert_rows(session, "entity_candidates", _NEW_COLUMNS, full, fixed)
    return len(full)


_NEW_COLUMNS = (
    ("raw_text", "text"),
    ("suggested_kind", "text"),
    ("source_kind", "text"),
    ("source_id", "text"),
    ("app_bundle_id", "text"),
    ("surrounding_text", "text"),
    ("created_at", "timestamptz"),
    ("project_path", "text"),
    ("source_line", "int"),
)


def claim_batch(
    session: Session,
    request: Claim,
    *,
    source_ids: Sequence[str] | None = None,
    with_suggested_kind: bool = False,
) -> list[ClaimedCandidate]:
    """Claim pending candidates (of the given sources, if any; only those with a suggested
    kind, if asked), in id order (see `lease_claim.claim`)."""
    conditions: list[ColumnElement[bool]] = []
    if source_ids is not None:
        conditions.append(C.source_id.in_(list(source_ids)))
    if with_suggested_kind:
        conditions.append(C.suggested_kind.is_not(None))
    where = and_(*conditions) if conditions else None
    claimed = lease_claim.claim(session, C, request, where, _CLAIMED_COLUMNS)
    rows = [ClaimedCandidate(*row) for row in claimed]
    rows.sort(key=lambda c: c.id)
    return rows


def extend_lease(
    session: Session, owner: str, ids: Sequence[int], lease_s: float, now: datetime
) -> int:
    return lease_claim.extend(session, C, owner, ids, lease_s, now)


def release_candidates(
    session: Session, owner: str, ids: Sequence[int], now: datetime, *, unasked: bool = False
) -> int:
    """Hand these claimed candidates back to the queue (`unasked`: their attempt back too)."""
    return sum(
        lease_claim.release(
            session, C, and_(C.id.in_(chunk), C.claimed_by == owner), now, unasked=unasked
        )
        for chunk in chunks(ids)
    )


def release_owned(session: Session, owner: str, now: datetime) -> int:
    """Hand back every candidate this owner holds (a failed or interrupted run)."""
    return lease_claim.release_owned(session, C, owner, now)


def reclaim_expired(session: Session, now: datetime) -> int:
    """Claims whose lease ran out go back to pending (their owner died or stalled)."""
    return lease_claim.reclaim_expired(session, C, now)


def lock_owned(session: Session, owner: str, ids: Sequence[int]) -> set[int]:
    """Lock the candidates this owner still holds (the rest were lost: lease expired, taken)."""
    if is_postgres(session):
        # A row lock, not a write: the final UPDATE is the only new row version.
        return set(
            session.connection().scalars(
                text(
                    "SELECT id FROM entity_candidates WHERE id = ANY(CAST(:ids AS bigint[])) "
                    "AND status = 'claimed' AND claimed_by = :owner FOR UPDATE"
                ),
                {"ids": list(ids), "owner": owner},
            )
        )
    # SQLite: this transaction began IMMEDIATE and holds the only write lock until it ends, so
    # reading the rows is as good as locking them.
    owned: set[int] = set()
    for chunk in chunks(ids):
        owned.update(
            session.connection().scalars(
                select(C.id).where(C.id.in_(chunk), lease_claim.owned(C, owner))
            )
        )
    return owned


FinalStatus = Literal["promoted", "rejected"]


def finish_candidates(
    session: Session,
    owner: str,
    status: FinalStatus,
    rows: Sequence[FinishedCandidate],
    now: datetime,
) -> int:
    """Set the final state of owned candidates. Returns how many this owner still held."""
    if not rows:
        return 0
    params = [{"cid": r.id, "eid": r.entity_id, "v": r.verdict, "reason": r.reason} for r in rows]
    # One statement for the whole batch, whatever its size, on both backends.
    source, bound = row_source(session, _FINISH_COLUMNS, params)
    owned = by_key_only("c.status = 'claimed' AND c.claimed_by = :owner")
    result = session.connection().execute(
        text(
            "UPDATE entity_candidates AS c SET status = :status, entity_id = v.eid, "
            "verdict = v.v, reject_reason = v.reason, decided_at = :now, updated_at = :now, "
            f"claimed_by = NULL, lease_until = NULL FROM {source} "
            f"WHERE c.id = v.cid AND {owned}"
        ),
        {**bound, "status": status, "now": time_param(session, now), "owner": owner},
    )
    return int(result.rowcount or 0)


_FINISH_COLUMNS = (("cid", "bigint"), ("eid", "bigint"), ("v", "jsonb"), ("reason", "text"))


def relink_candidates(session: Session, from_entity: int, to_entity: int) -> int:
    """A merge: candidates that named the source entity name the target."""
    result = session.connection().execute(
        update(C).where(C.entity_id == from_entity).values(entity_id=to_entity)
    )
    return int(result.rowcount or 0)


def requeue_candidate(session: Session, candidate_id: int, now: datetime) -> bool:
    """A user's correction: a rejected candidate goes back to the queue with fresh attempts (its
    earlier verdict stays in the decision trail)."""
    result = session.connection().execute(
        update(C)
        .where(C.id == candidate_id, C.status == "rejected")
        .values(
            status="pending",
            attempts=0,
            entity_id=None,
            verdict=None,
            reject_reason=None,
            decided_at=None,
            updated_at=now,
        )
    )
    return bool(result.rowcount)


def proposed_task_names(
    session: Session, source_kind: str, source_ids: Sequence[str]
) -> dict[int, str]:
    """The names the task candidates of these sources (the segments of one session) were
    proposed under, by the line each rests on; where two rest on one line, the first proposed."""
    rows = session.execute(
        select(C.source_line, C.raw_text)
        .where(
            C.source_kind == source_kind,  # with the source id: the index the lookup reads
            C.source_id.in_(sorted(set(source_ids))),
            C.suggested_kind == "task",
            C.source_line.is_not(None),
        )
        .order_by(C.id.desc())
    )
    return {line: name for line, name in rows}  # the first proposed is written last


def entities_proposed_by(session: Session, source_kind: str, source_ids: Sequence[str]) -> set[int]:
    """The entities the candidates of these sources (the segments of one session) name."""
    return set(
        session.scalars(
            select(C.entity_id)
            .where(
                C.source_kind == source_kind,
                C.source_id.in_(sorted(set(source_ids))),
                C.entity_id.is_not(None),
            )
            .distinct()
        )
    )


def move_sources_project(
    session: Session,
    source_kind: str,
    source_ids: Sequence[str],
    old_path: str | None,
    new_path: str,
    staying: set[int],
) -> None:
    """The candidates of these sources that were proposed in `old_path` (None: no repository
    known) say `new_path`: the session, read further, showed it worked there. Those of the
    entities `staying` where they are keep saying `old_path`."""
    was = C.project_path.is_(None) if old_path is None else C.project_path == old_path
    stays = C.entity_id.in_(sorted(staying)) if staying else None
    session.connection().execute(
        update(C)
        .where(
            C.source_kind == source_kind,
            C.source_id.in_(sorted(set(source_ids))),
            was,
            *([] if stays is None else [or_(C.entity_id.is_(None), ~stays)]),
        )
        .values(project_path=new_path)
    )


def task_entities_on_lines(
    session: Session, source_kind: str, source_ids: Sequence[str], lines: Sequence[int]
) -> dict[int, int]:
    """The task each of these lines of these sources (the segments of one session) was
    proposed as, by line; where two task candidates rest on one line, the first proposed's."""
    rows = session.execute(
        select(C.source_line, C.entity_id)
        .where(
            C.source_kind == source_kind,
            C.source_id.in_(sorted(set(source_ids))),
            C.suggested_kind == "task",
            C.source_line.in_(sorted(set(lines))),
            C.entity_id.is_not(None),
        )
        .order_by(C.id.desc())
    )
    return {line: entity_id for line, entity_id in rows}  # the first proposed is written last
