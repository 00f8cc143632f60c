"""The scheduled jobs (the seed's `maintain` layer: keeping the knowledge base clean over time).
They orchestrate (claim, classify, write) and never build prompts or hold SQL."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from yzos_jobs.db import entities as entity_db
from yzos_jobs.db.decisions import DecisionRow, delete_decisions_before, record_decisions
from yzos_jobs.db.engine import run_in_transaction, transaction
from yzos_jobs.db.queue import count_by_status, reclaim_expired
from yzos_jobs.db.runs import prune_runs
from yzos_jobs.db.types import utcnow
from yzos_jobs.db.verdict_cache import delete_expired_verdicts
from yzos_jobs.entity.decisions import meaningful_summary
from yzos_jobs.entity.merge import merge_entities, remember_old_key, scope_for
from yzos_jobs.entity.promote_loop import promote_pending
from yzos_jobs.entity.trail import judged_decision
from yzos_jobs.inference.types import ClassifierUsage, ClassifyInput, ClassifyOutcome
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.kinds import is_entity_kind
from yzos_jobs.logging import get_logger
from yzos_jobs.maintain import JOB_ALIASES, JOB_NAMES
from yzos_jobs.supply.triage import run_triage

log = get_logger(__name__)

JobStats = dict[str, Any]


def run_entity_promote(ctx: JobContext) -> JobStats:
    """Triage the closed sessions that wait for it, then promote pending candidates, batch by
    batch, until none are left or a stop is asked for."""
    started = time.monotonic()
    with transaction(ctx.sessions) as s:
        reclaimed = reclaim_expired(s, utcnow())
    triaged = run_triage(ctx)
    if ctx.total is not None:
        with ctx.sessions() as s:
            ctx.total(count_by_status(s).get("pending", 0))
    run = promote_pending(
        ctx, "fallback", max_attempts=ctx.settings.jobs.entity_promote.max_attempts
    )
    return {
        **asdict(run.stats),
        "archived": 0,
        "reclaimed": reclaimed,
        "batches": run.batches,
        "stopped": ctx.stop.is_set(),
        **triaged.counts(),
        **(run.usage + triaged.usage).counts(),
        "seconds": round(time.monotonic() - started, 3),
    }


@dataclass
class PurgeStats:
    judged: int = 0
    kept: int = 0
    rekinded: int = 0  # real, of another kind: moved to it (merged if that entity exists)
    archived: int = 0
    failed: int = 0
    summaries: int = 0

    def add(self, other: PurgeStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


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
    return _Kept("merged", target.id, detail)


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

    def record(outcome: ClassifyOutcome, what: str, entity_id: int, detail: str | None) -> None:
        trail.append(
            judged_decision("entity_purge_v06", outcome, what, entity_id, ctx.run_id, detail)
        )

    for entity, outcome in zip(entities, outcomes, strict=True):
        if outcome.verdict is None:
            stats.failed += 1  # the entity keeps its state
            continue
        stats.judged += 1
        v = outcome.verdict
        rejudged = entity_db.Rejudged(outcome.source or "llm", outcome.model_id, v.confidence, now)
        if v.is_real_entity:
            okf = dict(entity.okf or {})
            okf["classification"] = {"kind": v.kind, "reason": v.reason, "model": outcome.model_id}
            summary = summaries.get(entity.id)
            fresh = summary if summary and summary != entity.summary else None
            kept = _keep(session, entity, v.kind, rejudged, okf, fresh, set_by)
            if kept is not None:
                stats.kept += kept.outcome == "kept"
                stats.rekinded += kept.outcome != "kept"
                stats.summaries += fresh is not None and kept.outcome != "merged"
                record(outcome, kept.outcome, kept.entity_id, kept.detail)
            continue
        reason = f"{v.kind}: {v.reason}"[:1000]
        if entity_db.archive_entity(session, entity.id, rejudged, reason, set_by):
            stats.archived += 1
            record(outcome, "archived", entity.id, None)
    record_decisions(session, trail, now)
    return stats


RUN_HISTORY = timedelta(days=7)


def _housekeeping(ctx: JobContext) -> JobStats:
    """Once per purge: expired cached verdicts, week-old run rows and decisions older than
    `decisions.retention_days` (0: kept) go; the user's own corrections stay."""
    now = utcnow()
    retention_days = ctx.settings.decisions.retention_days
    with transaction(ctx.sessions) as s:
        pruned = (
            delete_decisions_before(s, now - timedelta(days=retention_days))
            if retention_days
            else 0
        )
        return {
            "cache_expired": delete_expired_verdicts(s, now),
            "runs_pruned": prune_runs(s, now - RUN_HISTORY),
            "decisions_pruned": pruned,
        }


def _rejudge_batch(
    ctx: JobContext, run_started: datetime, failed_ids: set[int], limit: int
) -> tuple[PurgeStats, ClassifierUsage, bool] | None:
    """Re-judge one batch; None when nothing is left. The bool: every re-judgement failed."""
    with ctx.sessions() as s:
        entities = entity_db.entities_to_rejudge(s, run_started, failed_ids, limit)
        latest = entity_db.latest_sighting_summaries(s, [e.id for e in entities])
        apps = entity_db.apps_seen_with(s, [e.id for e in entities])
    if not entities:
        return None
    summaries = {eid: text for eid, raw in latest.items() if (text := meaningful_summary(raw))}
    classified = ctx.classifier.classify_many(
        [_rejudge_input(e, summaries.get(e.id), apps.get(e.id)) for e in entities], ctx.breaker
    )
    outcomes = classified.outcomes
    failed_ids.update(e.id for e, o in zip(entities, outcomes, strict=True) if o.error)
    written = run_in_transaction(
        ctx.sessions, lambda s: _write_purge(s, ctx, entities, outcomes, summaries)
    )
    ctx.advance(len(entities))
    return written, classified.usage, all(o.error for o in outcomes)


def run_entity_purge_v06(ctx: JobContext) -> JobStats:
    """Re-judge active entities within `max_llm_calls`; noise/app becomes archived for good."""
    cfg = ctx.settings.jobs.entity_purge_v06
    started, usage, stats = time.monotonic(), ClassifierUsage(), PurgeStats()
    result: JobStats = {}
    if ctx.classifier.active_model_id() is None:
        # DryRun would answer "real, as suggested" for every entity: nothing to learn.
        result["skipped_reason"] = "dry_run: no model to re-judge with"
    run_started, failed_ids = utcnow(), set[int]()
    while not result and not ctx.stop.is_set():
        budget = cfg.max_llm_calls - usage.llm_calls
        if budget <= 0:
            break
        done = _rejudge_batch(ctx, run_started, failed_ids, min(cfg.batch_size, budget))
        if done is None:
            break
        written, used, all_failed = done
        stats.add(written)
        usage += used
        if all_failed:
            log.warning("entity_purge_v06 stopping: every re-judgement in a batch failed")
            break
    return {
        **asdict(stats),
        **result,
        **_housekeeping(ctx),
        "stopped": ctx.stop.is_set(),
        **usage.counts(),
        "seconds": round(time.monotonic() - started, 3),
    }


JOBS: dict[str, Callable[[JobContext], JobStats]] = dict(
    zip(JOB_NAMES, (run_entity_promote, run_entity_purge_v06), strict=True)
)



def canonical_job(name: str) -> str:
    return JOB_ALIASES.get(name, name)
