"""Job contexts and fixtures data for pipeline tests."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from yzos_jobs.config import Settings
from yzos_jobs.db.activity_sessions import upsert_activity_session
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import create_db_engine, make_session_factory, transaction
from yzos_jobs.db.models import Decision, Entity, EntityCandidate, EntitySighting
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.triage_queue import queue_triage
from yzos_jobs.entity.triage_writes import SessionTriage
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.runtime import build_classifier
from yzos_jobs.supply.triage_apply import TriageRun, run_triage

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def make_settings(db_url: str, llm_url: str | None = None, **sections: dict[str, Any]) -> Settings:
    data: dict[str, Any] = {"database": {"url": db_url}}
    if llm_url:
        data["llm"] = {
            "backend": "openai",
            "base_url": llm_url,
            "model": "double-7b",
            "max_retries": 0,
            "timeout_s": 5.0,
            "max_concurrency": 4,
        }
    for name, values in sections.items():
        if name == "llm":
            data.setdefault("llm", {}).update(values)
        elif name in ("entity_promote", "entity_purge_v06"):
            data.setdefault("jobs", {})[name] = values
        else:
            data[name] = values
    return Settings.model_validate(data)


def make_ctx(
    db_url: str, llm_url: str | None = None, owner: str = "test:1", **sections: Any
) -> JobContext:
    settings = make_settings(db_url, llm_url, **sections)
    sessions = make_session_factory(create_db_engine(db_url))
    stop = threading.Event()  # the job's and its classifier's, as the commands make them
    classifier = build_classifier(settings, sessions, stopping=stop)
    return JobContext(settings, sessions, classifier, owner=owner, stop=stop)


def add_candidates(ctx: JobContext, *rows: dict[str, Any]) -> None:
    full = []
    for i, r in enumerate(rows):
        values = {
            "source_kind": "window_title",
            "source_id": f"src-{i}",
            "suggested_kind": "project",
            "created_at": T0 + timedelta(minutes=i),
            **r,
        }
        full.append(NewCandidate(**values))
    with transaction(ctx.sessions) as s:
        insert_candidates(s, full, T0)


def candidates(ctx: JobContext) -> list[EntityCandidate]:
    with ctx.sessions() as s:
        return list(s.scalars(select(EntityCandidate).order_by(EntityCandidate.id)))


def entities(ctx: JobContext) -> list[Entity]:
    with ctx.sessions() as s:
        return list(s.scalars(select(Entity).order_by(Entity.id)))


def sighting_count(ctx: JobContext, entity_id: int | None = None) -> int:
    with ctx.sessions() as s:
        q = select(func.count()).select_from(EntitySighting)
        if entity_id is not None:
            q = q.where(EntitySighting.entity_id == entity_id)
        return int(s.scalar(q) or 0)


def decisions(ctx: JobContext) -> list[Decision]:
    """The decision trail, in the order it was written."""
    with ctx.sessions() as s:
        return list(s.scalars(select(Decision).order_by(Decision.id)))


def triage_session(ctx: JobContext, session_id: str, triage: SessionTriage) -> TriageRun:
    """Queue a session's proposals as a JSONL triage record would, and triage them now."""
    payload = {
        "projects": [
            {"name": p.name, "path": p.path, "summary": p.summary} for p in triage.projects
        ],
        "tasks": [
            {"title": t.title, "project": t.project, "summary": t.summary} for t in triage.tasks
        ],
        "persons": [{"name": p.name} for p in triage.persons],
    }
    with transaction(ctx.sessions) as s:
        upsert_activity_session(s, "jsonl", session_id)
        part = f"record-{uuid.uuid4().hex[:8]}"  # each call is a triage record of its own
        queued = queue_triage(s, "jsonl", session_id, part, "proposals", payload, utcnow())
    assert queued is not None
    return run_triage(ctx, only=[queued])
