"""Activity sessions: one row per observed session (aider, Claude Code, a JSONL observer's)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import ActivitySession


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


def session_project_paths(
    session: Session, source_kind: str, external_ids: list[str]
) -> dict[str, str | None]:
    """The project path each of these sessions was recorded with."""
    rows = session.execute(
        select(ActivitySession.external_id, ActivitySession.project_path).where(
            ActivitySession.source_kind == source_kind,
            ActivitySession.external_id.in_(sorted(set(external_ids))),
        )
    )
    return {eid: path for eid, path in rows}
