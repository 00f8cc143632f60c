"""The seed's `supply` layer: what happens when an observed session ends. Its pending candidates
are promoted inline; if the classifier fails here nothing is forced: the candidates go back to the
queue and the `entity_promote` job decides them later (with its own fallback)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from yzos_jobs.db.activity_sessions import upsert_activity_session
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.entity.promote_loop import promote_pending
from yzos_jobs.entity.updater import PromoteStats
from yzos_jobs.jobcontext import JobContext


def apply_entities(ctx: JobContext, session_ids: str | Sequence[str]) -> PromoteStats:
    """Inline promote of the pending candidates of one session (or of several that ended
    together); a classifier failure leaves them pending."""
    ids = [session_ids] if isinstance(session_ids, str) else list(session_ids)
    return promote_pending(ctx, "release", source_ids=ids, call_site="apply_entities").stats


def process_session_end(
    ctx: JobContext, source_kind: str, session_id: str, ended_at: datetime | None = None
) -> PromoteStats:
    with transaction(ctx.sessions) as s:
        upsert_activity_session(s, source_kind, session_id, ended_at=ended_at or utcnow())
    return apply_entities(ctx, session_id)
