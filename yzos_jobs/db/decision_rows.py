"""The decision trail: every statement on `decisions`.

A row records one verdict that changed or confirmed a candidate's or an entity's state, and is
written in the transaction of that change (by the promote loop, session triage, the purge and
user corrections). Written set-based, one statement per batch; read by `explain` and `show`;
pruned by the daily prune job, except the user's own corrections (the judge's worked examples),
each active entity's current-state decisions and every merge of one entity into another, which
are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, cast, delete, func, select, update
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import insert_rows
from yzos_jobs.db.models import Decision, Entity

D = Decision

# User outcomes that carry a verdict the judge can learn from (a requeue asks, it does not say).
EXAMPLE_OUTCOMES = ("archived", "restored", "rekinded", "renamed", "merged", "confirmed")


@dataclass(frozen=True)
class DecisionRow:
    """One decision to write; its fields are exactly the columns written (see _COLUMNS)."""

    call_site: str
    source: str
    outcome: str
    candidate_id: int | None = None
    entity_id: int | None = None
    verdict: dict[str, Any] | None = None
    model: str | None = None
    prompt_version: str | None = None
    latency_ms: int | None = None
    job_run_id: int | None = None


@dataclass(frozen=True)
class DecisionView:
    """One decision as `explain` and `show` read it."""

    id: int
    candidate_id: int | None
    entity_id: int | None
    call_site: str
    job_run_id: int | None
    verdict: dict[str, Any] | None
    source: str
    model: str | None
    prompt_version: str | None
    latency_ms: int | None
    outcome: str | None
    created_at: datetime


_COLUMNS = (
    ("candidate_id", "bigint"),
    ("entity_id", "bigint"),
    ("call_site", "text"),
    ("job_run_id", "bigint"),
    ("verdict", "jsonb"),
    ("source", "text"),
    ("model", "text"),
    ("prompt_version", "text"),
    ("latency_ms", "int"),
    ("outcome", "text"),
)

_VIEW_COLUMNS = (
    D.id,
    D.candidate_id,
    D.entity_id,
    D.call_site,
    D.job_run_id,
    D.verdict,
    D.source,
    D.model,
    D.prompt_version,
    D.latency_ms,
    D.outcome,
    D.created_at,
)


def record_decisions(session: Session, rows: Sequence[DecisionRow], now: datetime) -> int:
    """Append decisions in the caller's transaction: one statement however many rows."""
    if not rows:
        return 0
    # A row's fields are exactly the columns: its __dict__ is the row as it is.
    insert_rows(session, "decisions", _COLUMNS, [r.__dict__ for r in rows], {"created_at": now})
    return len(rows)


def decisions_of_entity(
    session: Session, entity_id: int, limit: int
) -> tuple[list[DecisionView], int]:
    """The entity's newest `limit` decisions in the order they were made, with the first one
    ever (how it began) in front when it is older than those; and how many there are."""
    total = int(session.scalar(select(func.count()).where(D.entity_id == entity_id)) or 0)
    newest = [
        DecisionView(*row)
        for row in session.execute(
            select(*_VIEW_COLUMNS)
            .where(D.entity_id == entity_id)
            .order_by(D.id.desc())
            .limit(limit)
        )
    ]
    newest.reverse()
    if total > len(newest) and limit > 0:
        first = session.execute(
            select(*_VIEW_COLUMNS).where(D.entity_id == entity_id).order_by(D.id).limit(1)
        ).first()
        if first is not None:
            newest.insert(0, DecisionView(*first))
    return newest, total


def decisions_of_candidate(session: Session, candidate_id: int) -> list[DecisionView]:
    rows = session.execute(
        select(*_VIEW_COLUMNS).where(D.candidate_id == candidate_id).order_by(D.id)
    )
    return [DecisionView(*row) for row in rows]


def recent_user_corrections(session: Session, limit: int) -> list[dict[str, Any]]:
    """The verdicts of the most recent user corrections that say something, newest first."""
    if limit <= 0:
        return []
    rows = session.scalars(
        select(D.verdict)
        .where(D.call_site == "user", D.outcome.in_(EXAMPLE_OUTCOMES))
        .order_by(D.id.desc())
        .limit(limit)
    )
    return [v for v in rows if isinstance(v, dict)]


# How many merges a reference to an entity merged away is followed through.
_MAX_HOPS = 100


def _merged_from() -> Any:
    """The id a merge row says was merged away, as a BIGINT (ids are; `as_integer()` casts to a
    32-bit INTEGER on PostgreSQL, which an id past 2**31 overflows)."""
    return cast(D.verdict["merged_from"].as_string(), BigInteger)


def merged_into(session: Session, entity_id: int) -> int | None:
    """The entity that holds what `entity_id` was merged into, as the trail says: its merge's
    row moves along with every later merge, and where a batch wrote it after its holder was
    merged away too, the holder's own merge is followed. None when the trail has no such
    merge (never merged, or pruned)."""
    current, seen = entity_id, {entity_id}
    for _ in range(_MAX_HOPS):
        holder = session.scalar(
            select(D.entity_id)
            .where(
                D.outcome == "merged",
                D.entity_id.is_not(None),
                _merged_from() == current,
            )
            .order_by(D.id.desc())
            .limit(1)
        )
        if holder is None or holder in seen:
            return None
        if session.get(Entity, holder) is not None:
            return int(holder)
        current = int(holder)
        seen.add(current)
    return None


def move_decisions(session: Session, from_entity: int, to_entity: int) -> int:
    """An entity merged into another takes its trail along."""
    result = session.execute(
        update(D).where(D.entity_id == from_entity).values(entity_id=to_entity)
    )
    return int(result.rowcount or 0)


# Rows that add a sighting to an entity and leave its state as it was.
EVIDENCE_OUTCOMES = ("merged", "evidence")


def delete_decisions_before(session: Session, cutoff: datetime) -> int:
    """Retention: decisions older than `cutoff` go. The user's corrections stay, and so do each
    active entity's current-state decisions: its latest decision, and the latest one that set
    its state (promoted, created, kept), which later sightings merged into it do not replace.
    A merge of one entity into another stays too: it is what says where the id went."""

    def latest_of_active(*where: Any) -> Any:
        return (
            select(func.max(D.id))
            .join(Entity, Entity.id == D.entity_id)
            .where(Entity.status == "active", *where)
            .group_by(D.entity_id)
        )

    result = session.execute(
        delete(D).where(
            D.created_at < cutoff,
            D.call_site != "user",
            D.id.not_in(latest_of_active()),
            D.id.not_in(latest_of_active(D.outcome.not_in(EVIDENCE_OUTCOMES))),
            _merged_from().is_(None),
        )
    )
    return int(result.rowcount or 0)
