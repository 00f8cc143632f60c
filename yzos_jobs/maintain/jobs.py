"""The scheduled jobs, which keep the knowledge base clean over time: `entity_promote`,
`entity_purge_v06`, `prune` and `import_sources`. They orchestrate (claim, classify, write) and
never build prompts or hold SQL."""

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
from yzos_jobs.entity.llm_budget import DailyBudget
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
        **_budget_note(run.budget_spent),
        "seconds": round(time.monotonic() - started, 3),
    }


def _budget_note(reason: str | None) -> JobStats:
    """The run's stats say when it stopped because the day's LLM budget was spent."""
    return {"budget_spent": reason} if reason else {}


def run_entity_purge_v06(ctx: JobContext) -> JobStats:
    """Re-judge active entities within `max_llm_calls` and the day's LLM budget; noise/app
    becomes archived for good."""
    started, usage, stats = time.monotonic(), ClassifierUsage(), PurgeStats()
    result: JobStats = {}
    daily = DailyBudget(ctx)
    if ctx.classifier.active_model_id() is None:
        # DryRun would answer "real, as suggested" for every entity: nothing to learn.
        result["skipped_reason"] = "dry_run: no model to re-judge with"
    else:
        stats, usage = rejudge_due(ctx, daily)
    return {
        **asdict(stats),
        **result,
        "stopped": ctx.stop.is_set(),
        **usage.counts(),
        **_budget_note(daily.reason),
        "seconds": round(time.monotonic() - started, 3),
    }


def run_prune(ctx: JobContext) -> JobStats:
    """Daily retention: expired cached verdicts; finished run rows older than
    `retention.job_runs_days`; decisions older than `decisions.retention_days`, except the
    user's corrections, each active entity's current-state decisions and every merge of one
    entity into another. A period of 0 keeps all."""
    started, now = time.monotonic(), utcnow()
    runs_days = ctx.settings.retention.job_runs_days
    decisions_days = ctx.settings.decisions.retention_days
    with transaction(ctx.sessions) as s:
        counts = {
            "cache_expired": delete_expired_verdicts(s, now),
            "runs_pruned": prune_runs(s, now - timedelta(days=runs_days)) if runs_days else 0,
            "decisions_pruned": (
                delete_decisions_before(s, now - timedelta(days=decisions_days))
                if decisions_days
                else 0
            ),
        }
    return {**counts, "seconds": round(time.monotonic() - started, 3)}


JOBS: dict[str, Callable[[JobContext], JobStats]] = dict(
    zip(
        JOB_NAMES,
        (run_entity_promote, run_entity_purge_v06, run_prune, run_import_sources),
        strict=True,
    )
)


def canonical_job(name: str) -> str:
    return JOB_ALIASES.get(name, name)
