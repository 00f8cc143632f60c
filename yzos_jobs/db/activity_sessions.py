"""Activity sessions: one row per observed session (aider, Claude Code, a JSONL observer's)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import ActivitySession


@dataclass(frozen=True)
class SessionFacts:
    """What is known about one activity session: its project, its start, its end."""

    source_kind: str
    external_id: str
    project_path: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None


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
    upsert_activity_sessions(
        session, [SessionFacts(source_kind, external_id, project_path, started_at, ended_at)]
    )


def upsert_activity_sessions(session: Session, rows: Sequence[SessionFacts]) -> None:
    """Record sessions, or what is newly known about them, in one statement: a known project
    and end replace what was stored, a start is kept once set."""
    if not rows:
        return
    stmt = upsert_insert(session, ActivitySession)
    stmt = stmt.on_conflict_do_update(
        index_elements=["source_kind", "external_id"],
        set_={
            "project_path": func.coalesce(stmt.excluded.project_path, ActivitySession.project_path),
            "started_at": func.coalesce(ActivitySession.started_at, stmt.excluded.started_at),
            "ended_at": func.coalesce(stmt.excluded.ended_at, ActivitySession.ended_at),
            "status": case(
                (stmt.excluded.ended_at.is_not(None), "ended"), else_=ActivitySession.status
            ),
        },
    )
    params = [
        {
            "source_kind": r.source_kind,
            "external_id": r.external_id,
            "project_path": r.project_path,
            "started_at": r.started_at or r.ended_at,
            "ended_at": r.ended_at,
            "status": "ended" if r.ended_at else "open",
        }
        for r in rows
    ]
    session.connection().execute(stmt, params)


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
