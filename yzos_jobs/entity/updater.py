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

from sqlalchemy import ColumnElement, bindparam, select, text, tuple_, update
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import is_postgres, pg_rows, upsert_insert
from yzos_jobs.db.engine import run_in_transaction, transaction
from yzos_jobs.db.leases import LeaseKeeper
from yzos_jobs.db.models import Entity, EntityCandidate, EntityOverride
from yzos_jobs.db.queue import ClaimedCandidate, claim_batch
from yzos_jobs.db.types import Json, UTCDateTime, utcnow
from yzos_jobs.entity import noise_filter
from yzos_jobs.entity.classifier import (
    ClassifierUsage,
    ClassifyInput,
    ClassifyOutcome,
    normalize_display_name,
)
from yzos_jobs.entity.sightings import Sighting, add_sightings, fingerprint
from yzos_jobs.jobcontext import JobContext

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
class NewEntity:
    """What an entity is created with if it does not exist yet."""

    promote: Promote
    first_seen_at: datetime
    summary: str | None


@dataclass(frozen=True)
class EntityRef:
    id: int
    status: str
    overridden: bool
    created: bool


_ENTITY_COLUMNS = (
    ("kind", "text"),
    ("normalized_name", "text"),
    ("display_name", "text"),
    ("confidence", "float8"),
    ("verdict_source", "text"),
    ("classified_model", "text"),
    ("first_seen_at", "timestamptz"),
    ("summary", "text"),
)


def upsert_entities(
    session: Session, wanted: dict[tuple[str, str], NewEntity], now: datetime
) -> dict[tuple[str, str], EntityRef]:
    """Create the entities that do not exist yet (INSERT … ON CONFLICT DO NOTHING on
    (kind, normalized_name)), then read back the keys that already existed. Two daemons
    promoting the same name get one entity: the second insert does nothing and finds the first
    one's row."""
    keys = sorted(wanted)  # one lock order across daemons
    rows = [
        {
            "kind": k[0],
            "normalized_name": k[1],
            "display_name": wanted[k].promote.display_name,
            "status": "active",
            "confidence": wanted[k].promote.confidence,
            "verdict_source": wanted[k].promote.verdict_source,
            "classified_model": wanted[k].promote.model,
            "classified_at": now,
            "sighting_count": 0,
            "created_at": now,
            "updated_at": now,
            "first_seen_at": wanted[k].first_seen_at,
            "summary": wanted[k].summary,
        }
        for k in keys
    ]
    refs: dict[tuple[str, str], EntityRef] = {}
    if not rows:
        return refs
    if is_postgres(session):
        source, params = pg_rows(_ENTITY_COLUMNS, rows)
        names = ", ".join(n for n, _ in _ENTITY_COLUMNS)
        inserted = session.connection().execute(
            text(
                f"INSERT INTO entities ({names}, status, sighting_count, classified_at, "
                f"created_at, updated_at) SELECT {names}, 'active', 0, :now, :now, :now "
                f"FROM {source} ON CONFLICT (kind, normalized_name) DO NOTHING "
                "RETURNING id, kind, normalized_name"
            ),
            {**params, "now": now},
        )
    else:
        stmt = (
            upsert_insert(session, Entity)
            .on_conflict_do_nothing(index_elements=["kind", "normalized_name"])
            .returning(Entity.id, Entity.kind, Entity.normalized_name)
        )
        inserted = session.connection().execute(stmt, rows)
    for eid, kind, norm in inserted:
        refs[(kind, norm)] = EntityRef(eid, "active", overridden=False, created=True)
    existing = [k for k in keys if k not in refs]
    if existing:
        refs.update(_existing_entities(session, existing))
    return refs


def _existing_entities(
    session: Session, keys: list[tuple[str, str]]
) -> dict[tuple[str, str], EntityRef]:
    refs: dict[tuple[str, str], EntityRef] = {}
    if is_postgres(session):
        source, params = pg_rows(
            (("kind", "text"), ("normalized_name", "text")),
            [{"kind": k, "normalized_name": n} for k, n in keys],
        )
        found = session.connection().execute(
            text(
                "SELECT e.id, e.kind, e.normalized_name, e.status, o.status FROM entities AS e "
                f"JOIN {source} ON e.kind = v.kind AND e.normalized_name = v.normalized_name "
                "LEFT JOIN entity_overrides AS o ON o.entity_id = e.id"
            ),
            params,
        )
        for eid, kind, norm, status, override in found:
            refs[(kind, norm)] = EntityRef(eid, status, override is not None, created=False)
        return refs
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start : start + _CHUNK]
        stmt = (
            select(
                Entity.id, Entity.kind, Entity.normalized_name, Entity.status, EntityOverride.status
            )
            .outerjoin(EntityOverride, EntityOverride.entity_id == Entity.id)
            .where(tuple_(Entity.kind, Entity.normalized_name).in_(chunk))
        )
        for eid, kind, norm, status, override in session.connection().execute(stmt):
            refs[(kind, norm)] = EntityRef(eid, status, override is not None, created=False)
    return refs


def update_existing(session: Session, summaries: dict[int, str], refs: Iterable[EntityRef]) -> None:
    """Give active, unoverridden entities without a summary the first meaningful one seen.
    Archived or overridden entities short-circuit: their status, summary and okf never change."""
    open_ids = {r.id for r in refs if r.status == "active" and not r.overridden}
    params = [{"eid": eid, "s": s} for eid, s in sorted(summaries.items()) if eid in open_ids]
    if not params:
        return
    if is_postgres(session):
        source, arrays = pg_rows((("eid", "bigint"), ("s", "text")), params)
        session.connection().execute(
            text(
                f"UPDATE entities AS e SET summary = v.s FROM {source} "
                "WHERE e.id = v.eid AND e.summary IS NULL AND e.status = 'active'"
            ),
            arrays,
        )
        return
    stmt = (
        update(Entity)
        .where(Entity.id == bindparam("eid"), Entity.summary.is_(None), Entity.status == "active")
        .values(summary=bindparam("s"))
    )
    session.connection().execute(stmt, params)


def claim_owned(session: Session, owner: str, ids: Sequence[int], now: datetime) -> set[int]:
    """Lock the candidates this owner still holds; the rest were lost (lease expired, reclaimed)."""
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
        owned.update(session.connection().scalars(stmt))
    return owned


def _finish_candidates_pg(
    session: Session,
    owner: str,
    status: str,
    now: datetime,
    rows: Sequence[dict[str, Any]],
    columns: Sequence[tuple[str, str]],
    extra_set: str,
) -> int:
    """PostgreSQL: set the final state of a batch of owned candidates in one statement."""
    source, params = pg_rows(columns, rows)
    extra = f", {extra_set}" if extra_set else ""
    result = session.connection().execute(
        text(
            f"UPDATE entity_candidates AS c SET status = :status, entity_id = v.eid, "
            f"verdict = v.v, decided_at = :now, updated_at = :now, "
            f"claimed_by = NULL, lease_until = NULL{extra} FROM {source} "
            "WHERE c.id = v.cid AND c.status = 'claimed' AND c.claimed_by = :owner"
        ),
        {**params, "status": status, "now": now, "owner": owner},
    )
    return int(result.rowcount or 0)


def _finish_candidates(
    session: Session, owner: str, status: str, now: datetime, rows: Sequence[dict[str, Any]]
) -> int:
    """Set the final state of owned candidates: rows of cid, eid, v (verdict) and, for a
    rejection, reason. Returns how many rows this owner still held."""
    if not rows:
        return 0
    rejecting = status == "rejected"
    if is_postgres(session):
        columns = [("cid", "bigint"), ("eid", "bigint"), ("v", "jsonb")]
        if rejecting:
            columns.append(("reason", "text"))
        extra = "reject_reason = v.reason" if rejecting else ""
        return _finish_candidates_pg(session, owner, status, now, rows, columns, extra)
    values: dict[str, Any] = {
        "status": status,
        "entity_id": bindparam("eid"),
        "verdict": bindparam("v", type_=Json),
        "decided_at": bindparam("now", type_=UTCDateTime()),
        "updated_at": bindparam("now", type_=UTCDateTime()),
        "claimed_by": None,
        "lease_until": None,
    }
    if rejecting:
        values["reject_reason"] = bindparam("reason")
    stmt = (
        update(EntityCandidate)
        .where(
            EntityCandidate.id == bindparam("cid"),
            EntityCandidate.status == "claimed",
            EntityCandidate.claimed_by == owner,
        )
        .values(values)
    )
    result = session.connection().execute(stmt, [{**r, "now": now} for r in rows])
    return int(result.rowcount or 0)


def mark_candidate_rejected(
    session: Session,
    owner: str,
    rejections: Sequence[tuple[int, str, dict[str, Any] | None, int | None]],
    now: datetime,
) -> int:
    """The only code that rejects a candidate (terminal). Rows: (id, reason, verdict, entity_id)."""
    rows = [
        {"cid": cid, "reason": reason[:1000], "v": verdict, "eid": eid}
        for cid, reason, verdict, eid in rejections
    ]
    return _finish_candidates(session, owner, "rejected", now, rows)


def _mark_promoted(
    session: Session,
    owner: str,
    rows: Sequence[tuple[int, int, dict[str, Any] | None]],
    now: datetime,
) -> int:
    params = [{"cid": cid, "eid": eid, "v": v} for cid, eid, v in rows]
    return _finish_candidates(session, owner, "promoted", now, params)


def release_candidates(session: Session, owner: str, ids: Sequence[int], now: datetime) -> int:
    """Hand claimed candidates back to the queue (their attempts stay counted)."""
    total = 0
    for start in range(0, len(ids), _CHUNK):
        result = session.connection().execute(
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


class OwnershipLost(Exception):
    """A candidate changed hands while its batch was being written; the batch is redone."""


@dataclass(frozen=True)
class Prepared:
    """A decision with what writing it needs, computed before the write transaction opens."""

    candidate: ClaimedCandidate
    decision: Decision
    key: tuple[str, str] = ("", "")  # (kind, normalized_name) of a Promote
    summary: str | None = None
    fingerprint: str = ""


def prepare(candidate: ClaimedCandidate, decision: Decision) -> Prepared:
    if not isinstance(decision, Promote):
        return Prepared(candidate, decision)
    summary = meaningful_summary(candidate.surrounding_text)
    return Prepared(
        candidate,
        decision,
        (decision.kind, normalize_name(decision.display_name)),
        summary,
        fingerprint(candidate.source_id, summary),
    )


def apply_decisions(
    session: Session,
    owner: str,
    decisions: Sequence[Prepared],
    now: datetime,
    *,
    verify_ownership: bool = True,
) -> PromoteStats:
    """Write one batch of decisions in the caller's transaction.

    verify_ownership: lock the rows this owner still holds first and write only those. Without
    it (the optimistic path), every final UPDATE still names the owner, and OwnershipLost is
    raised if any row was not updated, so the caller can roll back and redo with verification."""
    stats = PromoteStats()
    ids = [p.candidate.id for p in decisions]
    owned = claim_owned(session, owner, ids, now) if verify_ownership else set(ids)
    promote: list[Prepared] = []
    rejections: list[tuple[int, str, dict[str, Any] | None, int | None]] = []
    release: list[int] = []
    for prepared in decisions:
        candidate, decision = prepared.candidate, prepared.decision
        if candidate.id not in owned:
            stats.lost += 1
        elif isinstance(decision, Promote):
            promote.append(prepared)
        elif isinstance(decision, Reject):
            rejections.append((candidate.id, decision.reason, decision.verdict, None))
        else:
            release.append(candidate.id)

    wanted: dict[tuple[str, str], NewEntity] = {}
    for item in promote:
        candidate, p, key, summary = item.candidate, item.decision, item.key, item.summary
        assert isinstance(p, Promote)
        seen = wanted.get(key)
        if seen is None or candidate.created_at < seen.first_seen_at:
            wanted[key] = NewEntity(p, candidate.created_at, summary or (seen and seen.summary))
        elif summary and seen.summary is None:
            wanted[key] = NewEntity(seen.promote, seen.first_seen_at, summary)
    refs = upsert_entities(session, wanted, now) if wanted else {}

    sightings: list[Sighting] = []
    summaries: dict[int, str] = {}
    promoted_rows: list[tuple[int, int, dict[str, Any] | None]] = []
    counted_new: set[int] = set()
    for item in promote:
        candidate, p, summary = item.candidate, item.decision, item.summary
        assert isinstance(p, Promote)
        ref = refs[item.key]
        sightings.append(
            Sighting(
                ref.id,
                candidate.source_kind,
                candidate.source_id,
                summary,
                candidate.created_at,
                item.fingerprint,
            )
        )
        if summary and not ref.created:
            summaries.setdefault(ref.id, summary)
        if ref.status == "archived" or ref.overridden:
            # The knowledge base already decided: the sighting counts, nothing else changes.
            reason = f"entity {ref.id} is {ref.status} by override"
            rejections.append((candidate.id, reason, p.verdict, ref.id))
            continue
        promoted_rows.append((candidate.id, ref.id, p.verdict))
        if p.verdict_source == "fallback":
            stats.fallback += 1
        if ref.created and ref.id not in counted_new:
            counted_new.add(ref.id)
            stats.promoted += 1
        else:
            stats.merged += 1
    stats.sightings = add_sightings(session, sightings)
    update_existing(session, summaries, refs.values())
    written = _mark_promoted(session, owner, promoted_rows, now)
    stats.rejected = mark_candidate_rejected(session, owner, rejections, now)
    stats.skipped = release_candidates(session, owner, release, now)
    if not verify_ownership and written + stats.rejected + stats.skipped != len(owned):
        raise OwnershipLost
    return stats


def claim_next_batch(
    ctx: JobContext, after_id: int, where: ColumnElement[bool] | None = None
) -> list[ClaimedCandidate]:
    """Claim (and commit the claim of) the next pending candidates with id > after_id."""
    cfg = ctx.settings.jobs.entity_promote
    with transaction(ctx.sessions) as s:
        return claim_batch(
            s,
            ctx.owner,
            limit=cfg.batch_size,
            lease_s=cfg.lease_s,
            now=utcnow(),
            after_id=after_id,
            where=where,
        )


@dataclass(frozen=True)
class DecidedBatch:
    decisions: list[Prepared]
    failed: int
    usage: ClassifierUsage


def decide_batch(
    ctx: JobContext,
    batch: Sequence[ClaimedCandidate],
    *,
    on_failure: FailurePolicy,
    max_attempts: int | None = None,
    lease_s: float | None = None,
) -> DecidedBatch:
    """Classify a claimed batch (leases kept alive meanwhile) and decide each candidate.
    Candidates past `max_attempts` are not sent to the LLM again; they take the failure path."""
    exhausted = {c.id for c in batch if max_attempts is not None and c.attempts > max_attempts}
    ask = [c for c in batch if c.id not in exhausted]
    keeper = (
        LeaseKeeper.for_candidates(ctx.sessions, ctx.owner, [c.id for c in batch], lease_s)
        if lease_s
        else nullcontext()
    )
    with keeper:
        result = ctx.classifier.classify_many([candidate_input(c) for c in ask])
    outcomes = result.outcomes
    by_id: dict[int, ClassifyOutcome] = {c.id: o for c, o in zip(ask, outcomes, strict=True)}
    decisions = [prepare(c, decide(c, by_id.get(c.id), on_failure)) for c in batch]
    return DecidedBatch(decisions, sum(o.error is not None for o in outcomes), result.usage)


def write_batch(ctx: JobContext, decided: DecidedBatch) -> PromoteStats:
    """Write a decided batch in one transaction."""
    # PostgreSQL writes optimistically (no row locks first) and redoes the batch with locks in
    # the rare case a lease was lost meanwhile; SQLite's single writer makes the check free.
    optimistic = ctx.sessions.kw["bind"].dialect.name == "postgresql"
    decisions = decided.decisions
    try:
        stats = run_in_transaction(
            ctx.sessions,
            lambda s: apply_decisions(
                s, ctx.owner, decisions, utcnow(), verify_ownership=not optimistic
            ),
        )
    except OwnershipLost:
        stats = run_in_transaction(
            ctx.sessions, lambda s: apply_decisions(s, ctx.owner, decisions, utcnow())
        )
    stats.failed = decided.failed
    return stats


def promote_candidates(
    ctx: JobContext,
    batch: Sequence[ClaimedCandidate],
    *,
    on_failure: FailurePolicy,
    max_attempts: int | None = None,
    lease_s: float | None = None,
) -> PromoteStats:
    """Classify a claimed batch and write the outcome: the batch form of promote_candidate."""
    decided = decide_batch(
        ctx, batch, on_failure=on_failure, max_attempts=max_attempts, lease_s=lease_s
    )
    return write_batch(ctx, decided)


def promote_candidate(
    ctx: JobContext, candidate: ClaimedCandidate, on_failure: FailurePolicy = "fallback"
) -> PromoteStats:
    return promote_candidates(ctx, [candidate], on_failure=on_failure)
