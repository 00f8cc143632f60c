"""Activity sessions, and what happens when one ends: that session's candidates are promoted
inline. If the classifier fails here nothing is forced: the candidates go back to the queue and
the `entity_promote` job decides them later (with its own fallback)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from yzos_jobs.db.engine import transaction
from yzos_jobs.db.models import EntityCandidate
from yzos_jobs.db.sessions import upsert_activity_session
from yzos_jobs.db.types import utcnow
from yzos_jobs.entity.updater import PromoteStats, claim_next_batch, promote_candidates
from yzos_jobs.jobcontext import JobContext


def apply_entities(ctx: JobContext, session_id: str | Sequence[str]) -> PromoteStats:
    """Inline promote of the pending candidates of one session (or of several that ended
    together); a failure leaves them pending."""
    ids = [session_id] if isinstance(session_id, str) else list(session_id)
    cfg = ctx.settings.jobs.entity_promote
    total = PromoteStats()
    cursor = 0
    while True:
        batch = claim_next_batch(ctx, cursor, EntityCandidate.source_id.in_(ids))
        if not batch:
            return total
        cursor = batch[-1].id
        total.add(promote_candidates(ctx, batch, on_failure="release", lease_s=cfg.lease_s))


def process_session_end(
    ctx: JobContext, source_kind: str, session_id: str, ended_at: datetime | None = None
) -> PromoteStats:
    with transaction(ctx.sessions) as s:
        upsert_activity_session(s, source_kind, session_id, ended_at=ended_at or utcnow())
    return apply_entities(ctx, session_id)
