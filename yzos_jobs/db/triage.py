"""session_triage: closed coding sessions (or segments of one) and JSONL `triage` records waiting
for `entity_promote` to triage them, with their state, attempts and lease.

A `digest` row's payload is what one triage call reads about a session:

    {"source": "aider" | "claude_code", "file": "/path/of/the/history",
     "project": "repo-name" | null, "project_path": "/normalised/repository" | null,
     "started_at": "ISO-8601", "ended_at": "ISO-8601",
     "lines": [{"line": 130, "kind": "request" | "commit" | "file", "text": "…"}, …]}

`line` is the 1-based line of the source file the entry rests on; the session's held candidates
carry the same number in `entity_candidates.source_line`, so a triaged task names its evidence.
A `proposals` row's payload is a JSONL triage record: {"projects": [...], "tasks": [...],
"persons": [...]}.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import ActivitySession, SessionTriage

TriageKind = Literal["digest", "proposals"]


def queue_triage(
    session: Session,
    source_kind: str,
    external_id: str,
    part: str,
    kind: TriageKind,
    payload: dict[str, Any],
    now: datetime,
) -> bool:
    """Queue one triage of an activity session (which must exist); a (session, part) already
    queued is left as it is. Returns whether a row was added."""
    activity_id = session.scalar(
        select(ActivitySession.id).where(
            ActivitySession.source_kind == source_kind, ActivitySession.external_id == external_id
        )
    )
    if activity_id is None:
        raise LookupError(f"no activity session {source_kind}:{external_id}")
    stmt = (
        upsert_insert(session, SessionTriage)
        .values(
            activity_session_id=activity_id,
            part=part,
            kind=kind,
            payload=payload,
            status="pending",
            attempts=0,
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing(index_elements=["activity_session_id", "part"])
        .returning(SessionTriage.id)
    )
    return session.scalar(stmt) is not None
