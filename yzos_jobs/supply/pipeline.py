"""Activity sessions, and what happens when one ends: that session's candidates are promoted
inline. If the classifier fails here nothing is forced: the candidates go back to the queue and
the `entity_promote` job decides them later (with its own fallback)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import case, func
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.engine import transaction
from yzos_jobs.db.models import ActivitySession, EntityCandidate
from yzos_jobs.db.types import utcnow
from yzos_jobs.entity.updater import PromoteStats, claim_next_batch, promote_candidates
from yzos_jobs.jobcontext import JobContext


def upsert_activity_session(
    session: Session,
    source_kind: str,
    external_id: str,
    *,
    project_path: str | None = None,
    started_at: datetime | None = None,
    ended_at: datetime | None = None,
) -> None:
    """Record a session, or what is newly known about it (its project, its end)."""
    stmt = upsert_insert(session, ActivitySession).values(
        source_kind=source_kind,
        external_id=external_id,
        project_path=project_path,
        started_at=started_at or ended_at,
        ended_at=ended_at,
        status="ended" if ended_at else "open",
    )
    session.execute(
        stmt.on_conflict_do_update(
            index_elements=["source_kind", "external_id"],
            set_={
                "project_path": func.coalesce(
                    stmt.excluded.project_path, ActivitySession.project_path
                ),
                "started_at": func.coalesce(ActivitySession.started_at, stmt.excluded.started_at),
                "ended_at": func.coalesce(stmt.excluded.ended_at, ActivitySession.ended_at),
                "status": case(
                    (stmt.excluded.ended_at.is_not(None), "ended"), else_=ActivitySession.status
                ),
            },
        )
    )


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
