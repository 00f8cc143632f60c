"""Writes the outcome of a classification: promote a candidate into a new or existing entity,
reject it (terminal), or hand it back. Set-based: one batch is a handful of statements.

Ownership: every write to a candidate names the state it expects (`status='claimed' AND
claimed_by=:me`); a row whose lease was lost to another daemon is left alone.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import bindparam, select, tuple_, update
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.engine import run_in_transaction
from yzos_jobs.db.models import Entity, EntityCandidate, EntityOverride
from yzos_jobs.db.queue import ClaimedCandidate
from yzos_jobs.db.types import Json, UTCDateTime, utcnow
from yzos_jobs.entity import noise_filter
from yzos_jobs.entity.classifier import ClassifyInput, ClassifyOutcome, normalize_display_name
from yzos_jobs.entity.sightings import Sighting, add_sightings
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.leases import LeaseKeeper

SUMMARY_CHARS = 500
_CHUNK = 1000

FailurePolicy = Literal["fallback", "release"]


def normalize_name(name: str) -> str:
    """The entity key: NFKC, case-folded, whitespace collapsed, surrounding quotes dropped."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(text.split()).strip("\"'`“”‘’ ")


def meaningful_summary(text: str | None) -> str | None:
    if not noise_filter.is_meaningful_summary(text):
        return None
    assert text is not None
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def candidate_input(candidate: ClaimedCandidate) -> ClassifyInput:
    return ClassifyInput(
        raw_text=candidate.raw_text,
        source_kind=candidate.source_kind,
        source_id=str(candidate.id),
        suggested_kind=candidate.suggested_kind,
        app_bundle_id=candidate.app_bundle_id,
        surrounding_text=candidate.surrounding_text,
    )


@dataclass(frozen=True)
class Promote:
    kind: str
    display_name: str
    verdict_source: str  # llm | cache | dry_run | fallback
    model: str | None
    confidence: float | None
    verdict: dict[str, Any] | None


@dataclass(frozen=True)
class Reject:
    reason: str
    verdict: dict[str, Any] | None


@dataclass(frozen=True)
class Release:
    reason: str


Decision = Promote | Reject | Release


@dataclass
class PromoteStats:
    promoted: int = 0
    merged: int = 0
    rejected: int = 0
    fallback: int = 0
    skipped: int = 0
    failed: int = 0
    lost: int = 0
    sightings: int = 0

    def add(self, other: PromoteStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def decide(
    candidate: ClaimedCandidate,
    outcome: ClassifyOutcome | None,
    on_failure: FailurePolicy,
) -> Decision:
    """What a verdict (or its failure) means for one candidate. `outcome` None: not asked (the
    candidate exhausted its attempts), which is decided like a classifier failure."""
    if outcome is not None and outcome.verdict is not None:
        v = outcome.verdict
        if v.is_real_entity and v.kind in ("person", "project", "task"):
            name = (
                v.display_name or normalize_display_name(candidate.raw_text) or candidate.raw_text
            )
            return Promote(
                kind=v.kind,
                display_name=name,
                verdict_source=outcome.source or "llm",
                model=outcome.model_id,
                confidence=v.confidence,
                verdict=v.model_dump(),
            )
        return Reject(reason=f"{v.kind or 'not an entity'}: {v.reason}", verdict=v.model_dump())
    error = outcome.error if outcome is not None else None
    why = f"{error.__class__.__name__}: {error}" if error else "attempts exhausted"
    if on_failure == "release":
        return Release(reason=why)
    # Fallback chain: the structural filter decides only what is obviously junk.
    if noise_filter.is_noise(candidate.raw_text):
        return Reject(reason=f"fallback: structural noise ({why})", verdict=None)
    if candidate.suggested_kind is None:
        if outcome is None:
            return Reject(reason=f"fallback: no suggested kind ({why})", verdict=None)
        return Release(reason=f"no suggested kind to fall back on ({why})")
    return Promote(
        kind=candidate.suggested_kind,
        display_name=normalize_display_name(candidate.raw_text) or candidate.raw_text,
        verdict_source="fallback",
        model=None,
        confidence=None,
        verdict=None,
    )


@dataclass(frozen=True)
class EntityRef:
    id: int
    status: str
    overridden: bool
    created: bool


def upsert_entities(
    session: Session, wanted: dict[tuple[str, str], tuple[Promote, datetime]], now: datetime
) -> dict[tuple[str, str], EntityRef]:
    """Create the entities that do not exist yet (INSERT … ON CONFLICT DO NOTHING on
    (kind, normalized_name)), then read back every key. Two daemons promoting the same name get
    one entity: the second insert does nothing and finds the first one's row."""
    created: set[int] = set()
    keys = sorted(wanted)
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start : start + _CHUNK]
        rows = [
            {
                "kind": k[0],
                "normalized_name": k[1],
                "display_name": wanted[k][0].display_name,
                "status": "active",
                "confidence": wanted[k][0].confidence,
                "verdict_source": wanted[k][0].verdict_source,
                "classified_model": wanted[k][0].model,
                "classified_at": now,
                "sighting_count": 0,
                "created_at": now,
                "updated_at": now,
                "first_seen_at": wanted[k][1],
            }
            for k in chunk
        ]
        stmt = (
            upsert_insert(session, Entity)
            .values(rows)
            .on_conflict_do_nothing(index_elements=["kind", "normalized_name"])
            .returning(Entity.id)
        )
        created.update(session.scalars(stmt))
    refs: dict[tuple[str, str], EntityRef] = {}
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start : start + _CHUNK]
        stmt = (
            select(
                Entity.id, Entity.kind, Entity.normalized_name, Entity.status, EntityOverride.status
            )
            .outerjoin(EntityOverride, EntityOverride.entity_id == Entity.id)
            .where(tuple_(Entity.kind, Entity.normalized_name).in_(chunk))
        )
        for eid, kind, norm, status, override in session.execute(stmt):
            refs[(kind, norm)] = EntityRef(eid, status, override is not None, eid in created)
    return refs


def update_existing(session: Session, summaries: dict[int, str], refs: Iterable[EntityRef]) -> None:
    """Give active, unoverridden entities without a summary the first meaningful one seen.
    Archived or overridden entities short-circuit: their status, summary and okf never change."""
    open_ids = {r.id for r in refs if r.status == "active" and not r.overridden}
    params = [{"eid": eid, "s": s} for eid, s in sorted(summaries.items()) if eid in open_ids]
    if not params:
        return
    stmt = (
        update(Entity)
        .where(Entity.id == bindparam("eid"), Entity.summary.is_(None), Entity.status == "active")
        .values(summary=bindparam("s"))
    )
    session.connection().execute(stmt, params)


def claim_owned(session: Session, owner: str, ids: Sequence[int], now: datetime) -> set[int]:
    """Lock the candidates this owner still holds; the rest were lost (lease expired, reclaimed)."""
    owned: set[int] = set()
    for start in range(0, len(ids), _CHUNK):
        stmt = (
            update(EntityCandidate)
            .where(
                EntityCandidate.id.in_(ids[start : start + _CHUNK]),
                EntityCandidate.status == "claimed",
                EntityCandidate.claimed_by == owner,
            )
            .values(updated_at=now)
            .returning(EntityCandidate.id)
        )
        owned.update(session.scalars(stmt))
    return owned


def mark_candidate_rejected(
    session: Session,
    owner: str,
    rejections: Sequence[tuple[int, str, dict[str, Any] | None, int | None]],
    now: datetime,
) -> int:
    """The only code that rejects a candidate (terminal). Rows: (id, reason, verdict, entity_id)."""
    if not rejections:
        return 0
    stmt = (
        update(EntityCandidate)
        .where(
            EntityCandidate.id == bindparam("cid"),
            EntityCandidate.status == "claimed",
            EntityCandidate.claimed_by == owner,
        )
        .values(
            status="rejected",
            reject_reason=bindparam("reason"),
            verdict=bindparam("v", type_=Json),
            entity_id=bindparam("eid"),
            decided_at=bindparam("now", type_=UTCDateTime()),
            updated_at=bindparam("now", type_=UTCDateTime()),
            claimed_by=None,
            lease_until=None,
        )
    )
    params = [
        {"cid": cid, "reason": reason[:1000], "v": verdict, "eid": eid, "now": now}
        for cid, reason, verdict, eid in rejections
    ]
    session.connection().execute(stmt, params)
    return len(params)


def _mark_promoted(
    session: Session,
    owner: str,
    rows: Sequence[tuple[int, int, dict[str, Any] | None]],
    now: datetime,
) -> None:
    if not rows:
        return
    stmt = (
        update(EntityCandidate)
        .where(
            EntityCandidate.id == bindparam("cid"),
            EntityCandidate.status == "claimed",
            EntityCandidate.claimed_by == owner,
        )
        .values(
            status="promoted",
            entity_id=bindparam("eid"),
            verdict=bindparam("v", type_=Json),
            decided_at=bindparam("now", type_=UTCDateTime()),
            updated_at=bindparam("now", type_=UTCDateTime()),
            claimed_by=None,
            lease_until=None,
        )
    )
    params = [{"cid": cid, "eid": eid, "v": v, "now": now} for cid, eid, v in rows]
    session.connection().execute(stmt, params)


def release_candidates(session: Session, owner: str, ids: Sequence[int], now: datetime) -> int:
    """Hand claimed candidates back to the queue (their attempts stay counted)."""
    total = 0
    for start in range(0, len(ids), _CHUNK):
        result = session.execute(
            update(EntityCandidate)
            .where(
                EntityCandidate.id.in_(ids[start : start + _CHUNK]),
                EntityCandidate.status == "claimed",
                EntityCandidate.claimed_by == owner,
            )
            .values(status="pending", claimed_by=None, lease_until=None, updated_at=now)
        )
        total += int(result.rowcount or 0)
    return total


@dataclass
class _Plan:
    promote: list[tuple[ClaimedCandidate, Promote]] = field(default_factory=list)
    reject: list[tuple[ClaimedCandidate, Reject]] = field(default_factory=list)
    release: list[ClaimedCandidate] = field(default_factory=list)


def apply_decisions(
    session: Session,
    owner: str,
    decisions: Sequence[tuple[ClaimedCandidate, Decision]],
    now: datetime,
) -> PromoteStats:
    """Write one batch of decisions in the caller's transaction."""
    stats = PromoteStats()
    owned = claim_owned(session, owner, [c.id for c, _ in decisions], now)
    plan = _Plan()
    for candidate, decision in decisions:
        if candidate.id not in owned:
            stats.lost += 1
        elif isinstance(decision, Promote):
            plan.promote.append((candidate, decision))
        elif isinstance(decision, Reject):
            plan.reject.append((candidate, decision))
        else:
            plan.release.append(candidate)

    wanted: dict[tuple[str, str], tuple[Promote, datetime]] = {}
    for candidate, p in plan.promote:
        key = (p.kind, normalize_name(p.display_name))
        seen = wanted.get(key)
        if seen is None or candidate.created_at < seen[1]:
            wanted[key] = (p, candidate.created_at)
    refs = upsert_entities(session, wanted, now) if wanted else {}

    sightings: list[Sighting] = []
    summaries: dict[int, str] = {}
    promoted_rows: list[tuple[int, int, dict[str, Any] | None]] = []
    rejections = [(c.id, r.reason, r.verdict, None) for c, r in plan.reject]
    new_ids: set[int] = set()
    for candidate, p in plan.promote:
        ref = refs[(p.kind, normalize_name(p.display_name))]
        summary = meaningful_summary(candidate.surrounding_text)
        sightings.append(
            Sighting(
                ref.id, candidate.source_kind, candidate.source_id, summary, candidate.created_at
            )
        )
        if summary:
            summaries.setdefault(ref.id, summary)
        if ref.status == "archived" or ref.overridden:
            # The knowledge base already decided: the sighting counts, nothing else changes.
            rejections.append(
                (candidate.id, f"entity {ref.id} is {ref.status} by override", p.verdict, ref.id)
            )
            continue
        promoted_rows.append((candidate.id, ref.id, p.verdict))
        if p.verdict_source == "fallback":
            stats.fallback += 1
        if ref.created and ref.id not in new_ids:
            new_ids.add(ref.id)
            stats.promoted += 1
        else:
            stats.merged += 1
    stats.sightings = add_sightings(session, sightings)
    update_existing(session, summaries, refs.values())
    _mark_promoted(session, owner, promoted_rows, now)
    stats.rejected = mark_candidate_rejected(session, owner, rejections, now)
    stats.skipped = release_candidates(session, owner, [c.id for c in plan.release], now)
    return stats


def promote_candidates(
    ctx: JobContext,
    batch: Sequence[ClaimedCandidate],
    *,
    on_failure: FailurePolicy,
    max_attempts: int | None = None,
    lease_s: float | None = None,
) -> PromoteStats:
    """Classify a claimed batch and write the outcome: the batch form of promote_candidate.
    Candidates past `max_attempts` are not sent to the LLM again; they take the failure path."""
    exhausted = {c.id for c in batch if max_attempts is not None and c.attempts > max_attempts}
    ask = [c for c in batch if c.id not in exhausted]
    keeper = (
        LeaseKeeper.for_candidates(ctx.sessions, ctx.owner, [c.id for c in batch], lease_s)
        if lease_s
        else nullcontext()
    )
    with keeper:
        outcomes = ctx.classifier.classify_many([candidate_input(c) for c in ask])
    by_id: dict[int, ClassifyOutcome] = {c.id: o for c, o in zip(ask, outcomes, strict=True)}
    decisions = [(c, decide(c, by_id.get(c.id), on_failure)) for c in batch]
    stats = run_in_transaction(
        ctx.sessions, lambda s: apply_decisions(s, ctx.owner, decisions, utcnow())
    )
    stats.failed = sum(o.error is not None for o in outcomes)
    return stats


def promote_candidate(
    ctx: JobContext, candidate: ClaimedCandidate, on_failure: FailurePolicy = "fallback"
) -> PromoteStats:
    return promote_candidates(ctx, [candidate], on_failure=on_failure)
