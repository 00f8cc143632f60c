"""session_triage: closed coding sessions (or segments of one) and JSONL `triage` records waiting
for `entity_promote` to triage them, with their state, attempts and lease.

A `digest` row's payload is what one triage call reads about a session:

    {"source": "aider" | "claude_code", "file": "/path/of/the/history",
     "project": "repo-name" | null, "project_path": "/normalised/repository" | null,
     "started_at": "ISO-8601", "ended_at": "ISO-8601",
     "lines": [{"line": 130, "kind": "request" | "commit" | "file", "text": "…"}, …]}

`line` is the 1-based line of the source file the entry rests on; the session's held candidates
carry the same number in `entity_candidates.source_line`, so a triaged task names its evidence.
A `proposals` row's payload is a JSONL triage record: {"projects": [...], "tasks": [...],
"persons": [...]}.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from yzos_jobs.db import lease_claim
from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.lease_claim import Claim
from yzos_jobs.db.models import ActivitySession, Entity, EntityCandidate, SessionTriage

TriageKind = Literal["digest", "proposals"]


def queue_triage(
    session: Session,
    source_kind: str,
    external_id: str,
    part: str,
    kind: TriageKind,
    payload: dict[str, Any],
    now: datetime,
) -> int | None:
    """Queue one triage of an activity session (which must exist); a (session, part) already
    queued is left as it is. Returns the new row's id (None if it was queued before)."""
    activity_id = session.scalar(
        select(ActivitySession.id).where(
            ActivitySession.source_kind == source_kind, ActivitySession.external_id == external_id
        )
    )
    if activity_id is None:
        raise LookupError(f"no activity session {source_kind}:{external_id}")
    stmt = (
        upsert_insert(session, SessionTriage)
        .values(
            activity_session_id=activity_id,
            part=part,
            kind=kind,
            payload=payload,
            status="pending",
            attempts=0,
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing(index_elements=["activity_session_id", "part"])
        .returning(SessionTriage.id)
    )
    return session.scalar(stmt)


@dataclass(frozen=True)
class ClaimedTriage:
    id: int
    source_kind: str  # the activity session's (aider, claude_code, jsonl)
    external_id: str
    project_path: str | None
    part: str
    kind: str
    payload: dict[str, Any]
    attempts: int


T = SessionTriage
A = ActivitySession


def claim_triage(
    session: Session, request: Claim, *, only: Sequence[int] | None = None
) -> list[ClaimedTriage]:
    """Claim pending triages (of `only`, if given), oldest first, with a lease, like candidates
    (see `lease_claim.claim`)."""
    where = T.id.in_(list(only)) if only is not None else None
    claimed = lease_claim.claim(session, T, request, where, (T.id,))
    claimed_ids = sorted(row[0] for row in claimed)
    if not claimed_ids:
        return []
    rows = session.connection().execute(
        select(
            T.id,
            A.source_kind,
            A.external_id,
            A.project_path,
            T.part,
            T.kind,
            T.payload,
            T.attempts,
        )
        .join(A, A.id == T.activity_session_id)
        .where(T.id.in_(claimed_ids))
        .order_by(T.id)
    )
    return [ClaimedTriage(*row) for row in rows]


def extend_triage_lease(
    session: Session, owner: str, ids: Sequence[int], lease_s: float, now: datetime
) -> None:
    lease_claim.extend(session, T, owner, ids, lease_s, now)


TriageEnd = Literal["done", "pending", "exhausted"]


def settle_triage(
    session: Session,
    owner: str,
    triage_id: int,
    status: TriageEnd,
    now: datetime,
    error: str | None = None,
    *,
    unasked: bool = False,
) -> bool:
    """Done (applied), back to pending (to be tried again), or exhausted (given up). False if
    this owner no longer held it. `unasked`: back to pending with its attempt given back (no call
    of it reached the model: the process was stopping, the endpoint could not be reached or was
    not serving, the run's circuit breaker was open)."""
    values: dict[str, Any] = {
        "status": status,
        "claimed_by": None,
        "lease_until": None,
        "updated_at": now,
        "error": error[:1000] if error else None,
        "finished_at": now if status != "pending" else None,
    }
    if unasked:
        values["attempts"] = lease_claim.attempt_given_back(T)
    result = session.connection().execute(
        update(T).where(T.id == triage_id, lease_claim.owned(T, owner)).values(**values)
    )
    return bool(result.rowcount)


def reclaim_expired_triage(session: Session, now: datetime) -> int:
    return lease_claim.reclaim_expired(session, T, now)


def release_owned_triage(session: Session, owner: str, now: datetime) -> int:
    return lease_claim.release_owned(session, T, owner, now)


@dataclass(frozen=True)
class HeldCandidate:
    id: int
    raw_text: str
    suggested_kind: str | None
    source_kind: str
    source_id: str
    source_line: int | None
    surrounding_text: str | None
    created_at: datetime


def held_candidates(session: Session, source_id: str) -> list[HeldCandidate]:
    """The candidates held for the triage of the session (or segment) `source_id`."""
    C = EntityCandidate
    rows = session.connection().execute(
        select(
            C.id,
            C.raw_text,
            C.suggested_kind,
            C.source_kind,
            C.source_id,
            C.source_line,
            C.surrounding_text,
            C.created_at,
        )
        .where(C.status == "held", C.source_id == source_id)
        .order_by(C.id)
    )
    return [HeldCandidate(*row) for row in rows]


def release_held(session: Session, source_id: str, now: datetime) -> int:
    """Held → pending: the line-level path takes them (triage was given up, or never ran)."""
    C = EntityCandidate
    result = session.connection().execute(
        update(C)
        .where(C.status == "held", C.source_id == source_id)
        .values(status="pending", updated_at=now)
    )
    return int(result.rowcount or 0)


def settle_held(
    session: Session,
    promoted: Mapping[int, tuple[int, dict[str, Any] | None]],
    rejected: Mapping[int, tuple[str, int | None]],
    now: datetime,
) -> int:
    """After a triage: held candidates kept as evidence of the entity they were merged into
    (promoted, id -> (entity id, verdict)), the rest rejected with the reason given and the
    entity that held them off, if any (rejected, id -> (reason, entity id))."""
    C = EntityCandidate
    done = 0
    base = {"decided_at": now, "updated_at": now, "claimed_by": None, "lease_until": None}
    for cid, (eid, verdict) in sorted(promoted.items()):
        result = session.connection().execute(
            update(C)
            .where(C.id == cid, C.status == "held")
            .values(status="promoted", entity_id=eid, verdict=verdict, **base)
        )
        done += int(result.rowcount or 0)
    for cid, (reason, eid) in sorted(rejected.items()):
        result = session.connection().execute(
            update(C)
            .where(C.id == cid, C.status == "held")
            .values(status="rejected", reject_reason=reason[:1000], entity_id=eid, **base)
        )
        done += int(result.rowcount or 0)
    return done


def open_tasks(session: Session, key: str, limit: int) -> list[tuple[int, str]]:
    """Active tasks of the project with this project key, most recently seen first."""
    if not key or limit <= 0:
        return []
    rows = session.execute(
        select(Entity.id, Entity.display_name)
        .where(Entity.kind == "task", Entity.status == "active", Entity.project_key == key)
        .order_by(Entity.last_seen_at.desc().nulls_last(), Entity.id.desc())
        .limit(limit)
    )
    return [(int(eid), name) for eid, name in rows]


def move_waiting_digests(
    session: Session,
    source_kind: str,
    external_id: str,
    old_path: str | None,
    new_path: str,
    project: str | None,
) -> None:
    """The digests of this activity session not yet triaged (waiting, or claimed and being
    triaged) that were queued with `old_path` name `new_path` and its project instead. Their rows
    stay locked to the caller's transaction: a triage being written waits for it, and then writes
    into the new repository (`current_payload`)."""
    rows = session.execute(
        select(T.id, T.payload)
        .join(A, A.id == T.activity_session_id)
        .where(
            A.source_kind == source_kind,
            A.external_id == external_id,
            T.kind == "digest",
            T.status.in_(("pending", "claimed")),
        )
        .order_by(T.id)
        .with_for_update(of=T)
    )
    for triage_id, payload in rows.all():
        if isinstance(payload, dict) and payload.get("project_path") == old_path:
            moved = {**payload, "project_path": new_path, "project": project}
            session.execute(update(T).where(T.id == triage_id).values(payload=moved))


def current_payload(session: Session, triage_id: int) -> dict[str, Any] | None:
    """A claimed triage's payload as it is now, its row locked to the caller's transaction (a
    session moved to another repository while it was triaged names the new one)."""
    payload = session.execute(
        select(T.payload).where(T.id == triage_id).with_for_update()
    ).scalar_one_or_none()
    return payload if isinstance(payload, dict) else None
