"""The scheduled jobs (the seed's `maintain` layer: keeping the knowledge base clean over time).
They orchestrate (claim, classify, write) and never build prompts or hold SQL."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.decision_rows import delete_decisions_before
from yzos_jobs.db.job_runs import prune_runs
from yzos_jobs.db.overview import count_by_status
from yzos_jobs.db.queue import reclaim_expired
from yzos_jobs.db.verdict_cache import delete_expired_verdicts
from yzos_jobs.entity.promote_loop import promote_pending
from yzos_jobs.inference.contract import ClassifierUsage
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.logging import get_logger
from yzos_jobs.maintain import JOB_ALIASES, JOB_NAMES
from yzos_jobs.maintain.purge import PurgeStats, rejudge_due
from yzos_jobs.sources.feed import run_import_sources
from yzos_jobs.supply.triage_apply import run_triage

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
            ctx.total(count_by_status(s.connection()).get("pending", 0))
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


def run_entity_purge_v06(ctx: JobContext) -> JobStats:
    """Re-judge active entities within `max_llm_calls`; noise/app becomes archived for good."""
    started, usage, stats = time.monotonic(), ClassifierUsage(), PurgeStats()
    result: JobStats = {}
    if ctx.classifier.active_model_id() is None:
        # DryRun would answer "real, as suggested" for every entity: nothing to learn.
        result["skipped_reason"] = "dry_run: no model to re-judge with"
    else:
        stats, usage = rejudge_due(ctx)
    return {
        **asdict(stats),
        **result,
        **_housekeeping(ctx),
        "stopped": ctx.stop.is_set(),
        **usage.counts(),
        "seconds": round(time.monotonic() - started, 3),
    }


JOBS: dict[str, Callable[[JobContext], JobStats]] = dict(
    zip(JOB_NAMES, (run_entity_promote, run_entity_purge_v06, run_import_sources), strict=True)
)


def canonical_job(name: str) -> str:
    return JOB_ALIASES.get(name, name)
