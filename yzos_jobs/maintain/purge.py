"""The purge's work: re-judge active entities batch by batch and write what each verdict means
(kept, re-kinded or merged, archived for good). Batches stream like promote's: while one batch is
written, the next ones are already being judged on the classifier's pool."""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from yzos_jobs.counters import Counters
from yzos_jobs.db import entities as entity_db
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import run_in_transaction
from yzos_jobs.db.decision_rows import DecisionRow, record_decisions
from yzos_jobs.entity.llm_budget import DailyBudget
from yzos_jobs.entity.merge import merge_entities, remember_old_key, scope_for
from yzos_jobs.entity.policy import meaningful_summary
from yzos_jobs.entity.trail import judged_decision
from yzos_jobs.inference.contract import Classified, ClassifierUsage, ClassifyInput, ClassifyOutcome
from yzos_jobs.inference.errors import LlmStopped
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.kinds import is_entity_kind
from yzos_jobs.logging import get_logger

log = get_logger(__name__)

# Batches being judged at once (as in the promote loop): no slot idles at a batch's tail.
JUDGING_DEPTH = 2


@dataclass
class PurgeStats(Counters):
    judged: int = 0
    kept: int = 0
    rekinded: int = 0  # real, of another kind: moved to it (merged if that entity exists)
    archived: int = 0
    failed: int = 0
    summaries: int = 0
    unchanged: int = 0  # the cache's verdict keeps it as it is: nothing judged, nothing written


def _rejudge_input(
    entity: entity_db.EntityToJudge, summary: str | None, app: str | None
) -> ClassifyInput:
    """What the judge sees again: the name, the latest context, and the app it was seen in (the
    classifier shows that app's name and category, as at promotion)."""
    return ClassifyInput(
        raw_text=entity.display_name,
        source_kind="cron",
        source_id=f"entity:{entity.id}",
        suggested_kind=entity.kind,
        app_bundle_id=app,
        surrounding_text=summary or entity.summary,
    )


@dataclass(frozen=True)
class _Kept:
    """What keeping a real entity did: its outcome in the trail, the entity it now is."""

    outcome: str  # kept | rekinded | merged
    entity_id: int
    detail: str | None = None
    merged_from: int | None = None


def _keep(
    session: Session,
    entity: entity_db.EntityToJudge,
    kind: str | None,
    rejudged: entity_db.Rejudged,
    okf: dict[str, Any],
    summary: str | None,
    set_by: str,
) -> _Kept | None:
    """Keep a real entity; one judged real with another entity kind moves to that kind (merged
    into the entity of that kind and name if there is one, left as it is if that one is
    archived). None: the entity changed meanwhile (a user corrected or archived it)."""
    now = rejudged.classified_at
    if kind == entity.kind or not is_entity_kind(kind):
        kept = entity_db.keep_entity(session, entity.id, rejudged, okf, summary)
        return _Kept("kept", entity.id) if kept else None
    assert kind is not None
    new_key = (kind, entity.normalized_name, scope_for(kind, entity.project_key))
    found = entity_db.find_entities(session, [new_key]).get(new_key)
    if found is None or found.id == entity.id:
        if not entity_db.keep_entity(session, entity.id, rejudged, okf, summary, new_key):
            return None
        remember_old_key(session, entity.id, entity.key, new_key, set_by, now)
        return _Kept("rekinded", entity.id, f"kind {entity.kind} -> {kind}")
    if found.status != "active":
        kept = entity_db.keep_entity(session, entity.id, rejudged, okf, summary)
        detail = f"judged a {kind}, but the {kind} of that name (entity {found.id}) is archived"
        return _Kept("kept", entity.id, detail) if kept else None
    rows = {r.id: r for r in entity_db.entity_rows(session, [entity.id, found.id], lock=True)}
    source, target = rows.get(entity.id), rows.get(found.id)
    if source is None or target is None or entity_db.user_corrected(session, [entity.id]):
        return None
    merge_entities(session, source, target, set_by, now)
    detail = f"{entity.kind} {entity.display_name!r} (entity {entity.id}) merged as a {kind}"
    return _Kept("merged", target.id, detail, merged_from=entity.id)


def _okf(entity: entity_db.EntityToJudge, outcome: ClassifyOutcome) -> dict[str, Any]:
    v = outcome.verdict
    assert v is not None
    okf = dict(entity.okf or {})
    okf["classification"] = {"kind": v.kind, "reason": v.reason, "model": outcome.model_id}
    return okf


def _fresh(entity: entity_db.EntityToJudge, summaries: dict[int, str]) -> str | None:
    summary = summaries.get(entity.id)
    return summary if summary and summary != entity.summary else None


_Rest = tuple[entity_db.EntityToJudge, ClassifyOutcome, entity_db.Rejudged]


def _sort_verdicts(
    entities: list[entity_db.EntityToJudge],
    outcomes: list[ClassifyOutcome],
    summaries: dict[int, str],
    now: datetime,
    stats: PurgeStats,
) -> tuple[list[tuple[ClassifyOutcome, entity_db.KeptEntity]], list[_Rest]]:
    """The verdicts that keep an entity as it is, and the rest (another kind, or not real)."""
    keeps: list[tuple[ClassifyOutcome, entity_db.KeptEntity]] = []
    rest: list[_Rest] = []
    for entity, outcome in zip(entities, outcomes, strict=True):
        if outcome.verdict is None:
            # the entity keeps its state; one not asked because the run is stopping is no failure
            stats.failed += not isinstance(outcome.error, LlmStopped)
            continue
        v = outcome.verdict
        keeps_it = v.is_real_entity and (v.kind == entity.kind or not is_entity_kind(v.kind))
        fresh = _fresh(entity, summaries)
        if keeps_it and outcome.source == "cache" and fresh is None:
            # A verdict already had, saying nothing new: no model was asked, so neither the
            # entity nor the trail learns anything (rows would otherwise pile up every slot).
            stats.unchanged += 1
            continue
        stats.judged += 1
        rejudged = entity_db.Rejudged(outcome.source or "llm", outcome.model_id, v.confidence, now)
        if keeps_it:
            kept = entity_db.KeptEntity(entity.id, rejudged, _okf(entity, outcome), fresh)
            keeps.append((outcome, kept))
        else:
            rest.append((entity, outcome, rejudged))
    return keeps, rest


def _write_purge(
    session: Session,
    ctx: JobContext,
    entities: list[entity_db.EntityToJudge],
    outcomes: list[ClassifyOutcome],
    summaries: dict[int, str],
) -> PurgeStats:
    stats = PurgeStats()
    now = utcnow()
    set_by = f"entity_purge_v06@{ctx.owner}"
    trail: list[DecisionRow] = []

    def record(
        outcome: ClassifyOutcome,
        what: str,
        entity_id: int,
        detail: str | None,
        merged_from: int | None = None,
    ) -> None:
        trail.append(
            judged_decision(
                "entity_purge_v06", outcome, what, entity_id, ctx.run_id, detail, merged_from
            )
        )

    keeps, rest = _sort_verdicts(entities, outcomes, summaries, now, stats)
    # Most re-judgements keep the entity as it is: one statement for the batch, before the
    # rest (a merge into one of these entities then finds it re-judged already).
    kept_ids = entity_db.keep_entities(session, [kept for _, kept in keeps])
    for outcome, kept in keeps:
        if kept.entity_id in kept_ids:
            stats.kept += 1
            stats.summaries += kept.summary is not None
            record(outcome, "kept", kept.entity_id, None)
    for entity, outcome, rejudged in rest:
        v = outcome.verdict
        assert v is not None
        if v.is_real_entity:
            fresh = _fresh(entity, summaries)
            done = _keep(session, entity, v.kind, rejudged, _okf(entity, outcome), fresh, set_by)
            if done is not None:
                stats.kept += done.outcome == "kept"
                stats.rekinded += done.outcome != "kept"
                stats.summaries += fresh is not None and done.outcome != "merged"
                record(outcome, done.outcome, done.entity_id, done.detail, done.merged_from)
        elif entity_db.archive_entity(
            session, entity.id, rejudged, f"{v.kind}: {v.reason}"[:1000], set_by
        ):
            stats.archived += 1
            record(outcome, "archived", entity.id, None)
    record_decisions(session, trail, now)
    return stats


@dataclass
class _Judging:
    entities: list[entity_db.EntityToJudge]
    summaries: dict[int, str]
    reserved: int  # LLM calls this batch may cost, set aside from the run's budget
    classified: Future[Classified]


class _Due:
    """The ids due for a re-judgement in this run, fetched in chunks (one sort per chunk, not
    per batch); an entity is handed out once."""

    CHUNK = 5000

    def __init__(self, run_started: datetime) -> None:
        self.run_started = run_started
        self.ids: deque[int] = deque()
        self.handed: set[int] = set()

    def take(self, ctx: JobContext, n: int) -> list[int]:
        if len(self.ids) < n:
            with ctx.sessions() as s:
                more = entity_db.due_for_rejudgement(s, self.run_started, self.handed, self.CHUNK)
            self.ids.extend(eid for eid in more if eid not in self.ids)
        taken = [self.ids.popleft() for _ in range(min(n, len(self.ids)))]
        self.handed.update(taken)
        return taken


def _submit(ctx: JobContext, due: _Due, limit: int) -> _Judging | None:
    """Start judging the next entities due; None when none is left."""
    entities: list[entity_db.EntityToJudge] = []
    while not entities and (taken := due.take(ctx, limit)):
        with ctx.sessions() as s:
            entities = entity_db.entities_to_judge(s, taken)
    with ctx.sessions() as s:
        ids = [e.id for e in entities]
        latest = entity_db.latest_sighting_summaries(s, ids)
        apps = entity_db.apps_seen_with(s, ids)
    if not entities:
        return None
    summaries = {eid: text for eid, raw in latest.items() if (text := meaningful_summary(raw))}
    inputs = [_rejudge_input(e, summaries.get(e.id), apps.get(e.id)) for e in entities]
    future = ctx.classifier.submit_many(inputs, ctx.breaker)
    return _Judging(entities, summaries, len(entities), future)


def rejudge_due(ctx: JobContext, daily: DailyBudget) -> tuple[PurgeStats, ClassifierUsage]:
    """Re-judge what is due within `max_llm_calls` real calls (cached verdicts are free) and
    the day's LLM budget (once it is spent, nothing more is re-judged)."""
    cfg = ctx.settings.jobs.entity_purge_v06
    stats, usage = PurgeStats(), ClassifierUsage()
    due, budget, exhausted = _Due(utcnow()), cfg.max_llm_calls, False
    judging: deque[_Judging] = deque()
    # Under a daily budget one batch is judged at a time: the one that spends it is the last.
    depth = 1 if daily.capped else JUDGING_DEPTH
    while True:
        while not exhausted and len(judging) < depth and not ctx.stop.is_set():
            limit = min(cfg.batch_size, budget)
            limit = daily.reserve_calls(limit) if limit > 0 and daily.spent() is None else 0
            if limit <= 0:
                break  # what the batches in hand do not spend (cache hits) comes back
            batch = _submit(ctx, due, limit)
            if batch is None:
                daily.charge(ClassifierUsage())  # the calls set aside go back
                exhausted = True
                break
            budget -= batch.reserved
            judging.append(batch)
        if not judging:
            break
        batch = judging.popleft()
        classified = batch.classified.result()
        budget += batch.reserved - classified.usage.llm_calls  # cache hits cost nothing
        usage += classified.usage
        daily.charge(classified.usage)
        outcomes = classified.outcomes
        stats.add(
            run_in_transaction(
                ctx.sessions,
                lambda s, b=batch, o=outcomes: _write_purge(s, ctx, b.entities, o, b.summaries),
            )
        )
        ctx.advance(len(batch.entities))
        if all(o.error and not isinstance(o.error, LlmStopped) for o in outcomes):
            log.warning("entity_purge_v06 stopping: every re-judgement in a batch failed")
            exhausted = True
    return stats, usage
