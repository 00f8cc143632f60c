"""Session end: close the activity session, then promote that session's candidates inline.

If the classifier fails here nothing is forced: the candidates go back to the queue and the
`entity_promote` job decides them later (with its own fallback)."""

from __future__ import annotations

from datetime import datetime

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.engine import transaction
from yzos_jobs.db.models import ActivitySession, EntityCandidate
from yzos_jobs.db.queue import claim_batch
from yzos_jobs.db.types import utcnow
from yzos_jobs.entity.updater import PromoteStats, promote_candidates
from yzos_jobs.jobcontext import JobContext


def end_activity_session(
    ctx: JobContext, source_kind: str, session_id: str, ended_at: datetime | None
) -> None:
    now = utcnow()
    with transaction(ctx.sessions) as s:
        stmt = upsert_insert(s, ActivitySession).values(
            source_kind=source_kind,
            external_id=session_id,
            started_at=ended_at or now,
            ended_at=ended_at or now,
            status="ended",
        )
        s.execute(
            stmt.on_conflict_do_update(
                index_elements=["source_kind", "external_id"],
                set_={"ended_at": stmt.excluded.ended_at, "status": "ended"},
            )
        )


def apply_entities(ctx: JobContext, session_id: str) -> PromoteStats:
    """Inline promote of one session's pending candidates; a failure leaves them pending."""
    cfg = ctx.settings.jobs.entity_promote
    total = PromoteStats()
    cursor = 0
    while True:
        with transaction(ctx.sessions) as s:
            batch = claim_batch(
                s,
                ctx.owner,
                limit=cfg.batch_size,
                lease_s=cfg.lease_s,
                now=utcnow(),
                after_id=cursor,
                where=EntityCandidate.source_id == session_id,
            )
        if not batch:
            return total
        cursor = batch[-1].id
        stats = promote_candidates(ctx, batch, on_failure="release", lease_s=cfg.lease_s)
        total.add(stats)


def process_session_end(
    ctx: JobContext, source_kind: str, session_id: str, ended_at: datetime | None = None
) -> PromoteStats:
    end_activity_session(ctx, source_kind, session_id, ended_at)
    return apply_entities(ctx, session_id)
