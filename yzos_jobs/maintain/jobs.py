"""The scheduled jobs. They orchestrate (claim, classify, write) and never build prompts."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import case, func, select, update
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import PlannerStatsKeeper, upsert_insert
from yzos_jobs.db.engine import run_in_transaction, transaction
from yzos_jobs.db.models import Entity, EntityOverride, EntitySighting
from yzos_jobs.db.queue import count_by_status, reclaim_expired, release_owned
from yzos_jobs.db.types import utcnow
from yzos_jobs.db.verdict_cache import delete_expired_verdicts
from yzos_jobs.entity.classifier import ClassifierUsage, ClassifyInput, ClassifyOutcome
from yzos_jobs.entity.updater import (
    DecidedBatch,
    PromoteStats,
    claim_next_batch,
    decide_batch,
    meaningful_summary,
    write_batch,
)
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.logging import get_logger
from yzos_jobs.maintain.runs import prune_runs

log = get_logger(__name__)

JobStats = dict[str, Any]


def _write_and_advance(ctx: JobContext, decided: DecidedBatch) -> PromoteStats:
    stats = write_batch(ctx, decided)
    ctx.advance(len(decided.decisions))
    return stats


def _collect(
    ctx: JobContext, total: PromoteStats, stats: PromoteStats, planner: PlannerStatsKeeper
) -> None:
    total.add(stats)
    if stats.promoted:
        with transaction(ctx.sessions) as s:
            planner.grew(s, stats.promoted)


@contextmanager
def _hand_back_on_error(ctx: JobContext) -> Iterator[None]:
    """A run that fails hands its claimed candidates back at once instead of leaving them to
    wait for the lease (best effort: if the database is what failed, the lease covers it)."""
    try:
        yield
    except BaseException:
        try:
            with transaction(ctx.sessions) as s:
                released = release_owned(s, ctx.owner, utcnow())
            log.warning("run failed: claimed candidates handed back", released=released)
        except Exception as exc:
            log.warning(
                "run failed: candidates stay claimed until their lease ends", error=str(exc)
            )
        raise


def run_entity_promote(ctx: JobContext) -> JobStats:
    """Promote pending candidates, batch by batch, until none are left or a stop is asked for."""
    cfg = ctx.settings.jobs.entity_promote
    started, usage = time.monotonic(), ClassifierUsage()
    with transaction(ctx.sessions) as s:
        reclaimed = reclaim_expired(s, utcnow())
        planner_stats = PlannerStatsKeeper(s, "entities")
        if ctx.total is not None:
            ctx.total(count_by_status(s).get("pending", 0))
    total = PromoteStats()
    cursor, batches = 0, 0
    # Two stages: while one batch is written, the next is claimed and classified.
    with (
        _hand_back_on_error(ctx),
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="promote-writer") as writer,
    ):
        writing: Future[PromoteStats] | None = None
        while not ctx.stop.is_set():
            batch = claim_next_batch(ctx, cursor)
            if not batch:
                break
            cursor = batch[-1].id
            batches += 1
            decided = decide_batch(
                ctx,
                batch,
                on_failure="fallback",
                max_attempts=cfg.max_attempts,
                lease_s=cfg.lease_s,
            )
            usage += decided.usage
            if writing is not None:
                _collect(ctx, total, writing.result(), planner_stats)
            writing = writer.submit(_write_and_advance, ctx, decided)
        if writing is not None:
            _collect(ctx, total, writing.result(), planner_stats)
    result: JobStats = {
        **asdict(total),
        "archived": 0,
        "reclaimed": reclaimed,
        "batches": batches,
        "stopped": ctx.stop.is_set(),
        **usage.counts(),
    }
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


@dataclass
class PurgeStats:
    judged: int = 0
    kept: int = 0
    archived: int = 0
    failed: int = 0
    summaries: int = 0


def _purge_order() -> list[Any]:
    """Entities promoted without a real verdict (dry_run, fallback) first, then oldest verdicts."""
    unverified = case((Entity.verdict_source.in_(("dry_run", "fallback")), 0), else_=1)
    never = case((Entity.classified_at.is_(None), 0), else_=1)
    return [unverified, never, Entity.classified_at, Entity.id]


def _purge_batch(session: Session, run_started: Any, exclude: set[int], limit: int) -> list[Entity]:
    stmt = (
        select(Entity)
        .outerjoin(EntityOverride, EntityOverride.entity_id == Entity.id)
        .where(
            Entity.status == "active",
            EntityOverride.entity_id.is_(None),
            (Entity.verdict_source.in_(("dry_run", "fallback")))
            | Entity.classified_at.is_(None)
            | (Entity.classified_at < run_started),
        )
        .order_by(*_purge_order())
        .limit(limit + len(exclude))
    )
    rows = [e for e in session.scalars(stmt) if e.id not in exclude]
    return rows[:limit]


def _latest_summaries(session: Session, ids: list[int]) -> dict[int, str]:
    """The latest meaningful sighting summary of each entity (context for the re-judgement)."""
    if not ids:
        return {}
    latest = (
        select(EntitySighting.entity_id, func.max(EntitySighting.id).label("sid"))
        .where(EntitySighting.entity_id.in_(ids), EntitySighting.summary.is_not(None))
        .group_by(EntitySighting.entity_id)
        .subquery()
    )
    rows = session.execute(
        select(EntitySighting.entity_id, EntitySighting.summary).join(
            latest, EntitySighting.id == latest.c.sid
        )
    )
    out: dict[int, str] = {}
    for eid, summary in rows:
        text = meaningful_summary(summary)
        if text:
            out[eid] = text
    return out


def _write_purge(
    session: Session,
    owner: str,
    entities: list[Entity],
    outcomes: list[ClassifyOutcome],
    summaries: dict[int, str],
) -> PurgeStats:
    stats = PurgeStats()
    now = utcnow()
    overrides = []
    for entity, outcome in zip(entities, outcomes, strict=True):
        if outcome.verdict is None:
            stats.failed += 1  # the entity keeps its state
            continue
        stats.judged += 1
        v = outcome.verdict
        classified = {
            "verdict_source": outcome.source or "llm",
            "classified_model": outcome.model_id,
            "classified_at": now,
            "confidence": v.confidence,
            "updated_at": now,
        }
        if v.is_real_entity:
            okf = dict(entity.okf or {})
            okf["classification"] = {"kind": v.kind, "reason": v.reason, "model": outcome.model_id}
            values: dict[str, Any] = {**classified, "okf": okf}
            new_summary = summaries.get(entity.id)
            if new_summary and new_summary != entity.summary:
                values["summary"] = new_summary
                stats.summaries += 1
            session.execute(
                update(Entity)
                .where(Entity.id == entity.id, Entity.status == "active")
                .values(values)
            )
            stats.kept += 1
            continue
        result = session.execute(
            update(Entity)
            .where(Entity.id == entity.id, Entity.status == "active")
            .values(status="archived", **classified)
        )
        if result.rowcount:
            stats.archived += 1
            overrides.append(
                {
                    "entity_id": entity.id,
                    "status": "archived",
                    "reason": f"{v.kind}: {v.reason}"[:1000],
                    "set_by": f"entity_purge_v06@{owner}",
                    "created_at": now,
                }
            )
    if overrides:
        stmt = upsert_insert(session, EntityOverride).on_conflict_do_nothing(
            index_elements=["entity_id"]
        )
        session.execute(stmt, overrides)
    return stats


RUN_HISTORY = timedelta(days=7)


def _housekeeping(ctx: JobContext) -> JobStats:
    """Once per purge: expired cached verdicts and week-old run rows go."""
    now = utcnow()
    with transaction(ctx.sessions) as s:
        return {
            "cache_expired": delete_expired_verdicts(s, now),
            "runs_pruned": prune_runs(s, now - RUN_HISTORY),
        }


def run_entity_purge_v06(ctx: JobContext) -> JobStats:
    """Re-judge active entities within `max_llm_calls`; noise/app becomes archived for good."""
    cfg = ctx.settings.jobs.entity_purge_v06
    started, usage = time.monotonic(), ClassifierUsage()
    stats = PurgeStats()
    if ctx.classifier.scheduler.active_model_id() is None:
        # DryRun would answer "real, as suggested" for every entity: nothing to learn.
        result: JobStats = {
            **asdict(stats),
            **_housekeeping(ctx),
            "skipped_reason": "dry_run: no model to re-judge with",
            **usage.counts(),
        }
        result["seconds"] = round(time.monotonic() - started, 3)
        return result
    run_started = utcnow()
    failed_ids: set[int] = set()
    while not ctx.stop.is_set():
        budget = cfg.max_llm_calls - usage.llm_calls
        if budget <= 0:
            break
        with ctx.sessions() as s:
            entities = _purge_batch(s, run_started, failed_ids, min(cfg.batch_size, budget))
            summaries = _latest_summaries(s, [e.id for e in entities])
        if not entities:
            break
        inputs = [
            ClassifyInput(
                raw_text=e.display_name,
                source_kind="cron",
                source_id=f"entity:{e.id}",
                suggested_kind=e.kind,
                surrounding_text=summaries.get(e.id) or e.summary,
            )
            for e in entities
        ]
        classified = ctx.classifier.classify_many(inputs)
        outcomes, usage = classified.outcomes, usage + classified.usage
        failed_ids.update(e.id for e, o in zip(entities, outcomes, strict=True) if o.error)
        written = run_in_transaction(
            ctx.sessions,
            lambda s, ents=entities, outs=outcomes, sums=summaries: _write_purge(
                s, ctx.owner, ents, outs, sums
            ),
        )
        for name, value in asdict(written).items():
            setattr(stats, name, getattr(stats, name) + value)
        ctx.advance(len(entities))
        if all(o.error for o in outcomes):
            log.warning("entity_purge_v06 stopping: every re-judgement in a batch failed")
            break
    result = {
        **asdict(stats),
        **_housekeeping(ctx),
        "stopped": ctx.stop.is_set(),
        **usage.counts(),
    }
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


JOBS: dict[str, Callable[[JobContext], JobStats]] = {
    "entity_promote": run_entity_promote,
    "entity_purge_v06": run_entity_purge_v06,
    # The purge's name before it re-judged with the classifier; the same job.
    "entity_purge": run_entity_purge_v06,
}
