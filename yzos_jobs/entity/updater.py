"""Promotion, the `promote_candidate` call site: judge claimed candidates, then write what each
verdict means (a new or existing entity, a terminal rejection, or back to the queue).

Orchestration only: the policy is `entity/policy.py`, the SQL is `db/`. Ownership: every write
to a candidate names the owner and state it expects; a row whose lease was lost to another daemon
is left alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session

from yzos_jobs.counters import Counters
from yzos_jobs.db import entities as entity_db
from yzos_jobs.db import queue
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import run_in_transaction
from yzos_jobs.db.decision_rows import DecisionRow, record_decisions
from yzos_jobs.db.leases import LeaseKeeper
from yzos_jobs.db.queue import ClaimedCandidate, FinishedCandidate
from yzos_jobs.db.sighting_rows import Sighting, add_sightings
from yzos_jobs.entity.policy import (
    FailurePolicy,
    Prepared,
    Promote,
    Reject,
    blocked_by_terminal_state,
    candidate_input,
    decide,
    entity_drafts,
    prepare,
)
from yzos_jobs.entity.trail import candidate_decision
from yzos_jobs.inference.contract import Classified, ClassifierUsage
from yzos_jobs.jobcontext import JobContext


@dataclass
class PromoteStats(Counters):
    promoted: int = 0
    merged: int = 0
    rejected: int = 0
    fallback: int = 0  # promoted by the structural fallback (the LLM failed)
    fallback_rejected: int = 0  # rejected by it
    skipped: int = 0
    failed: int = 0
    lost: int = 0
    sightings: int = 0


@dataclass(frozen=True)
class JudgedBatch:
    decisions: list[Prepared]
    failed: int
    usage: ClassifierUsage


def promote_candidate(
    ctx: JobContext,
    batch: Sequence[ClaimedCandidate],
    on_failure: FailurePolicy,
    max_attempts: int | None = None,
) -> Future[JudgedBatch]:
    """Start judging a claimed batch through classify() (its leases kept alive meanwhile); the
    future holds what each verdict means, for `write_decisions` to write. Candidates past
    `max_attempts` are not sent to the LLM again: they take the failure path."""
    ask = [c for c in batch if max_attempts is None or c.attempts <= max_attempts]
    lease_s = ctx.settings.jobs.entity_promote.lease_s
    keeper = LeaseKeeper.for_candidates(ctx.sessions, ctx.owner, [c.id for c in batch], lease_s)
    if ask:
        keeper.start()
    classified = ctx.classifier.submit_many([candidate_input(c) for c in ask], ctx.breaker)
    judged: Future[JudgedBatch] = Future()

    def decide_all(done: Future[Classified]) -> None:
        keeper.stop()
        try:
            result = done.result()
            by_id = dict(zip((c.id for c in ask), result.outcomes, strict=True))
            decisions = [
                prepare(c, decide(c, by_id.get(c.id), on_failure), by_id.get(c.id)) for c in batch
            ]
            failed = sum(o.error is not None for o in result.outcomes)
            judged.set_result(JudgedBatch(decisions, failed, result.usage))
        except BaseException as exc:
            judged.set_exception(exc)

    classified.add_done_callback(decide_all)
    return judged


def update_existing(
    session: Session, summaries: dict[int, str], refs: Iterable[entity_db.EntityRef]
) -> None:
    """Give active, unoverridden entities without a summary the first meaningful one seen.
    Archived or overridden entities short-circuit: their status, summary and okf never change."""
    open_ids = {r.id for r in refs if r.status == "active" and not r.overridden}
    entity_db.fill_missing_summaries(
        session, {eid: s for eid, s in summaries.items() if eid in open_ids}
    )


def mark_candidate_rejected(
    session: Session, owner: str, rejections: Sequence[FinishedCandidate], now: datetime
) -> int:
    """The only code that rejects a candidate (terminal)."""
    capped = [
        FinishedCandidate(r.id, r.entity_id, r.verdict, (r.reason or "")[:1000]) for r in rejections
    ]
    return queue.finish_candidates(session, owner, "rejected", capped, now)


class OwnershipLost(Exception):
    """A candidate changed hands while its batch was being written; the batch is redone."""


@dataclass
class _Split:
    call_site: str
    run_id: int | None
    promote: list[Prepared] = field(default_factory=list)
    finished: list[FinishedCandidate] = field(default_factory=list)  # promoted
    rejected: list[FinishedCandidate] = field(default_factory=list)
    release: list[int] = field(default_factory=list)
    unasked: list[int] = field(default_factory=list)  # released, their attempt given back
    sightings: list[Sighting] = field(default_factory=list)
    summaries: dict[int, str] = field(default_factory=dict)
    trail: list[DecisionRow] = field(default_factory=list)  # one per promoted or rejected

    def record(
        self, item: Prepared, outcome: str, entity_id: int | None, detail: str | None = None
    ) -> None:
        self.trail.append(
            candidate_decision(self.call_site, item, outcome, entity_id, self.run_id, detail)
        )


def _split(
    split: _Split, decisions: Sequence[Prepared], owned: set[int], stats: PromoteStats
) -> None:
    for item in decisions:
        candidate, decision = item.candidate, item.decision
        if candidate.id not in owned:
            stats.lost += 1
        elif isinstance(decision, Promote):
            split.promote.append(item)
        elif isinstance(decision, Reject):
            verdict, reason = decision.verdict, decision.reason
            split.rejected.append(FinishedCandidate(candidate.id, None, verdict, reason))
            split.record(item, "rejected", None)
            stats.fallback_rejected += reason.startswith("fallback:")
        elif decision.unasked:
            split.unasked.append(candidate.id)
        else:
            split.release.append(candidate.id)


def _link(
    split: _Split, refs: dict[entity_db.EntityKey, entity_db.EntityRef], stats: PromoteStats
) -> None:
    """Tie each promotion to its entity: a sighting always; the candidate promoted, unless the
    entity is archived (then rejected, with the entity named)."""
    counted_new: set[int] = set()
    for item in split.promote:
        candidate, p = item.candidate, item.decision
        assert isinstance(p, Promote)
        ref = refs[item.key]
        split.sightings.append(
            Sighting(
                ref.id,
                candidate.source_kind,
                candidate.source_id,
                item.summary,
                candidate.created_at,
                item.fingerprint,
            )
        )
        if item.summary and not ref.created:
            split.summaries.setdefault(ref.id, item.summary)
        reason = blocked_by_terminal_state(ref.id, ref.status)
        if reason is not None:
            # The knowledge base already decided: the sighting counts, nothing else changes.
            split.rejected.append(FinishedCandidate(candidate.id, ref.id, p.verdict, reason))
            split.record(item, "rejected", ref.id, reason)
            continue
        split.finished.append(FinishedCandidate(candidate.id, ref.id, p.verdict))
        stats.fallback += p.verdict_source == "fallback"
        if ref.created and ref.id not in counted_new:
            counted_new.add(ref.id)
            stats.promoted += 1
            split.record(item, "promoted", ref.id)
        else:
            stats.merged += 1
            split.record(item, "merged", ref.id)


def apply_decisions(
    session: Session,
    owner: str,
    decisions: Sequence[Prepared],
    now: datetime,
    *,
    verify_ownership: bool = True,
    call_site: str = "promote_candidate",
    run_id: int | None = None,
) -> PromoteStats:
    """Write one batch of decisions in the caller's transaction, each promoted, merged or
    rejected candidate with its row in the decision trail (a release writes none).

    verify_ownership: lock the rows this owner still holds first and write only those. Without
    it (the optimistic path), every final UPDATE still names the owner, and OwnershipLost is
    raised if any row was not updated, so the caller can roll back and redo with verification."""
    stats = PromoteStats()
    ids = [p.candidate.id for p in decisions]
    owned = queue.lock_owned(session, owner, ids) if verify_ownership else set(ids)
    split = _Split(call_site, run_id)
    _split(split, decisions, owned, stats)
    refs = entity_db.upsert_entities(session, entity_drafts(split.promote), now)
    _link(split, refs, stats)
    # New tasks were tied to an existing project as they were created; this ties them to a
    # project created in the same batch, and any task of these repositories left without one
    # (its project was made one later by a correction, or committed beside it by another daemon).
    entity_db.link_tasks_to_projects(
        session, {key for (_, _, key), ref in refs.items() if ref.created}
    )
    stats.sightings = add_sightings(session, split.sightings)
    update_existing(session, split.summaries, refs.values())
    written = queue.finish_candidates(session, owner, "promoted", split.finished, now)
    stats.rejected = mark_candidate_rejected(session, owner, split.rejected, now)
    stats.skipped = queue.release_candidates(session, owner, split.release, now)
    stats.skipped += queue.release_candidates(session, owner, split.unasked, now, unasked=True)
    if not verify_ownership and written + stats.rejected + stats.skipped != len(owned):
        raise OwnershipLost
    record_decisions(session, sorted(split.trail, key=lambda r: r.candidate_id or 0), now)
    return stats


def write_decisions(
    ctx: JobContext, judged: JudgedBatch, call_site: str = "promote_candidate"
) -> PromoteStats:
    """Write a judged batch in one transaction; `call_site` names it in the decision trail."""
    # Written optimistically (no reading or locking of the owned rows first), and again with
    # them in the rare case a lease was lost meanwhile (on SQLite: expired and taken by another
    # process between the claim and this write); again too where an entity it found was merged
    # away meanwhile by a correction (its key then leads to where it went).
    decisions = judged.decisions
    try:
        stats = run_in_transaction(
            ctx.sessions,
            lambda s: apply_decisions(
                s,
                ctx.owner,
                decisions,
                utcnow(),
                verify_ownership=False,
                call_site=call_site,
                run_id=ctx.run_id,
            ),
            refs_may_go=True,
        )
    except OwnershipLost:
        stats = run_in_transaction(
            ctx.sessions,
            lambda s: apply_decisions(
                s, ctx.owner, decisions, utcnow(), call_site=call_site, run_id=ctx.run_id
            ),
            refs_may_go=True,
        )
    stats.failed = judged.failed
    ctx.advance(len(decisions))
    return stats
