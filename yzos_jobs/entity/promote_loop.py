"""The promote loop, shared by the `entity_promote` job and session end: claim a batch, judge it
(`updater.promote_candidate`), write it (`updater.write_decisions`), until nothing is left."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from yzos_jobs.db import queue
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.dialect import PlannerStatsKeeper
from yzos_jobs.db.lease_claim import Claim
from yzos_jobs.entity.llm_budget import DailyBudget
from yzos_jobs.entity.policy import FailurePolicy
from yzos_jobs.entity.updater import (
    JudgedBatch,
    PromoteStats,
    promote_candidate,
    write_decisions,
)
from yzos_jobs.inference.contract import ClassifierUsage
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.logging import get_logger

log = get_logger(__name__)

# Batches being judged at once: the next batch's requests queue behind this one's, so no slot
# of the model server idles at a batch's tail while it is written.
JUDGING_DEPTH = 2


@dataclass
class PromoteRun:
    stats: PromoteStats
    usage: ClassifierUsage
    batches: int = 0
    # Why the run stopped before the queue was empty: the day's LLM budget is spent.
    budget_spent: str | None = None


@contextmanager
def _hand_back_on_error(ctx: JobContext) -> Iterator[None]:
    """A run that fails hands its claimed candidates back at once instead of leaving them to
    wait for the lease (best effort: if the database is what failed, the lease covers it)."""
    try:
        yield
    except BaseException:
        try:
            with transaction(ctx.sessions) as s:
                released = queue.release_owned(s, ctx.owner, utcnow())
            log.warning("run failed: claimed candidates handed back", released=released)
        except Exception as exc:
            log.warning(
                "run failed: candidates stay claimed until their lease ends", error=str(exc)
            )
        raise


def _claim(
    ctx: JobContext, after_id: int, size: int, source_ids: Sequence[str] | None, dry_run: bool
) -> list[queue.ClaimedCandidate]:
    with transaction(ctx.sessions) as s:
        lease_s = ctx.settings.jobs.entity_promote.lease_s
        return queue.claim_batch(
            s,
            Claim(ctx.owner, size, lease_s, utcnow(), after_id=after_id),
            source_ids=source_ids,
            # Without a model, a candidate with no suggested kind waits for a real judge.
            with_suggested_kind=dry_run,
        )


def promote_pending(
    ctx: JobContext,
    on_failure: FailurePolicy,
    *,
    source_ids: Sequence[str] | None = None,
    max_attempts: int | None = None,
    call_site: str = "promote_candidate",
) -> PromoteRun:
    """The promote loop, shared by `entity_promote` and session end: claim a batch, judge it,
    write it, until none is left (or a stop is asked for). Stages overlap: while one batch is
    written, the next ones are claimed and judged. `call_site` names the writes in the decision
    trail (promote_candidate, apply_entities)."""
    cfg = ctx.settings.jobs.entity_promote
    run = PromoteRun(PromoteStats(), ClassifierUsage())
    with transaction(ctx.sessions) as s:
        planner = PlannerStatsKeeper(s, "entities")

    def collect(stats: PromoteStats) -> None:
        run.stats.add(stats)
        if stats.promoted:
            with transaction(ctx.sessions) as s:
                planner.grew(s, stats.promoted)

    cursor, dry_run = 0, ctx.classifier.active_model_id() is None
    size = cfg.batch_for(with_model=not dry_run)
    budget = DailyBudget(ctx)
    # Under a daily budget one batch is judged at a time, so the batch that spends it is the
    # last one asked (none is in flight behind it).
    depth = 1 if budget.capped and not dry_run else JUDGING_DEPTH
    judging: deque[Future[JudgedBatch]] = deque()
    # SQLite takes one writer at a time: a write beside the next claim only makes one of them
    # wait on the lock (and its busy handler sleeps in steps up to 100 ms), so write in turn.
    serial_writes = not ctx.concurrent_writers
    exhausted = False
    with (
        _hand_back_on_error(ctx),
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="promote-writer") as writer,
    ):
        writing: Future[PromoteStats] | None = None
        while True:
            while not exhausted and len(judging) < depth and not ctx.stop.is_set():
                wanted = size if dry_run else _within_budget(budget, size)
                if wanted == 0:
                    break  # the day's budget is spent: the candidates stay pending
                batch = _claim(ctx, cursor, wanted, source_ids, dry_run)
                if not batch:
                    if not dry_run:
                        budget.charge(ClassifierUsage())  # the calls set aside go back
                    exhausted = True
                    break
                cursor = batch[-1].id
                run.batches += 1
                judging.append(promote_candidate(ctx, batch, on_failure, max_attempts))
            if not judging:
                break
            judged = judging.popleft().result()
            run.usage += judged.usage
            if not dry_run:
                budget.charge(judged.usage)
            if writing is not None:
                collect(writing.result())
                writing = None
            if serial_writes:
                collect(write_decisions(ctx, judged, call_site))
            else:
                writing = writer.submit(write_decisions, ctx, judged, call_site)
        if writing is not None:
            collect(writing.result())
    run.budget_spent = budget.reason
    return run


def _within_budget(budget: DailyBudget, size: int) -> int:
    """How many candidates the next batch may claim: none once the day's budget is spent, and
    no more than the calls the day's call budget has left (set aside for it)."""
    if budget.spent() is not None:
        return 0
    return budget.reserve_calls(size)
