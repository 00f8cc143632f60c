"""Read-only queries of the review commands (`entities`, `show`, `explain`, `export`): bounded
lists, one entity or candidate with what surrounds it, and a streamed export.

Every query is bounded or streamed: a knowledge base of millions of sightings lists, shows and
exports in constant memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, func, select
from sqlalchemy.orm import Session, aliased

from yzos_jobs.db.aliases import aliases_named
from yzos_jobs.db.entities import ENTITY_ROW_COLUMNS, EntityRow, entity_rows
from yzos_jobs.db.models import Entity, EntityCandidate, EntityOverride, EntitySighting
from yzos_jobs.db.queue import QueuedCandidate
from yzos_jobs.kinds import ENTITY_KINDS

E = Entity
C = EntityCandidate
S = EntitySighting


@dataclass(frozen=True)
class EntityLine:
    """One line of `entities` and `export`."""

    id: int
    kind: str
    display_name: str
    status: str
    project_id: int | None
    project: str | None  # a task's project, by name
    project_path: str | None
    sighting_count: int
    first_seen_at: datetime | None
    last_seen_at: datetime | None
    verdict_source: str | None


def _lines() -> Select[Any]:
    project = aliased(Entity)
    return select(
        E.id,
        E.kind,
        E.display_name,
        E.status,
        E.project_id,
        project.display_name,
        E.project_path,
        E.sighting_count,
        E.first_seen_at,
        E.last_seen_at,
        E.verdict_source,
    ).outerjoin(project, project.id == E.project_id)


def _newest_lines(session: Session, condition: ColumnElement[bool], limit: int) -> list[EntityLine]:
    """The most recently seen entities that meet `condition`: chosen first, and only those
    joined to their project's name (a top-N over the table, not over a join)."""
    recent = (E.last_seen_at.desc().nulls_last(), E.id.desc())
    chosen = select(E.id).where(condition).order_by(*recent).limit(limit).subquery()
    stmt = _lines().join(chosen, chosen.c.id == E.id).order_by(*recent)
    return [EntityLine(*row) for row in session.execute(stmt)]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def list_entities(
    session: Session,
    *,
    kind: str | None = None,
    status: str | None = None,
    project_ids: Sequence[int] | None = None,
    search: str | None = None,
    limit: int = 50,
) -> list[EntityLine]:
    """The most recently seen entities that pass the filters; `search` is a substring of the
    name's key form (case- and width-insensitive)."""
    condition = _entity_filter(kind, status, project_ids, search)
    return _newest_lines(session, condition, limit)


def count_entities(
    session: Session,
    *,
    kind: str | None = None,
    status: str | None = None,
    project_ids: Sequence[int] | None = None,
    search: str | None = None,
) -> int:
    """How many entities pass the filters of `list_entities`."""
    condition = _entity_filter(kind, status, project_ids, search)
    return session.scalar(select(func.count()).select_from(E).where(condition)) or 0


def _entity_filter(
    kind: str | None,
    status: str | None,
    project_ids: Sequence[int] | None,
    search: str | None,
) -> ColumnElement[bool]:
    conditions: list[ColumnElement[bool]] = []
    if kind is not None:
        conditions.append(E.kind == kind)
    if status is not None:
        conditions.append(E.status == status)
    if project_ids is not None:
        conditions.append(E.project_id.in_(list(project_ids)))
    if search:
        conditions.append(E.normalized_name.like(f"%{_escape_like(search)}%", escape="\\"))
    return and_(True, *conditions)


def export_entities(session: Session, *, include_archived: bool) -> Iterator[EntityLine]:
    """Every entity in id order, streamed (a server-side cursor on PostgreSQL)."""
    stmt = _lines().order_by(E.id)
    if not include_archived:
        stmt = stmt.where(E.status == "active")
    result = session.execute(stmt.execution_options(yield_per=1000))
    for row in result:
        yield EntityLine(*row)


def entities_named(session: Session, normalized_name: str) -> list[EntityRow]:
    """The entities of that name in any kind or scope, and those it is an alias of (the UNIQUE
    key's index serves the lookup: one probe per kind)."""
    direct = [
        EntityRow(*row)
        for row in session.execute(
            select(*ENTITY_ROW_COLUMNS)
            .where(E.kind.in_(ENTITY_KINDS), E.normalized_name == normalized_name)
            .order_by(E.id)
        )
    ]
    known = {e.id for e in direct}
    via_alias = [i for i in aliases_named(session, normalized_name) if i not in known]
    return direct + entity_rows(session, via_alias)


@dataclass(frozen=True)
class CandidateRow(QueuedCandidate):
    status: str
    attempts: int
    entity_id: int | None
    verdict: dict[str, Any] | None
    reject_reason: str | None
    created_at: datetime
    decided_at: datetime | None
    project_path: str | None


_CANDIDATE_COLUMNS = tuple(getattr(C, name) for name in CandidateRow.__dataclass_fields__)


def candidate_row(session: Session, candidate_id: int) -> CandidateRow | None:
    row = session.execute(select(*_CANDIDATE_COLUMNS).where(C.id == candidate_id)).first()
    return CandidateRow(*row) if row is not None else None


def candidates_with_text(session: Session, raw_text: str, limit: int) -> list[CandidateRow]:
    """The newest candidates observed with exactly this text (a name no entity has; a scan,
    for a command a user types)."""
    rows = session.execute(
        select(*_CANDIDATE_COLUMNS).where(C.raw_text == raw_text).order_by(C.id.desc()).limit(limit)
    )
    return [CandidateRow(*row) for row in rows]


@dataclass(frozen=True)
class OverrideRow:
    status: str
    reason: str | None
    set_by: str
    created_at: datetime


def override_of(session: Session, entity_id: int) -> OverrideRow | None:
    row = session.execute(
        select(
            EntityOverride.status,
            EntityOverride.reason,
            EntityOverride.set_by,
            EntityOverride.created_at,
        ).where(EntityOverride.entity_id == entity_id)
    ).first()
    return OverrideRow(*row) if row is not None else None


@dataclass(frozen=True)
class SightingRow:
    source_kind: str
    source_id: str
    summary: str | None
    seen_at: datetime


def newest_sightings(session: Session, entity_id: int, limit: int) -> list[SightingRow]:
    rows = session.execute(
        select(S.source_kind, S.source_id, S.summary, S.seen_at)
        .where(S.entity_id == entity_id)
        .order_by(S.seen_at.desc(), S.id.desc())
        .limit(limit)
    )
    return [SightingRow(*row) for row in rows]


def tasks_of_project(session: Session, project_id: int, limit: int) -> tuple[list[EntityLine], int]:
    """A project's tasks, most recently seen first, and how many it has."""
    total = int(session.scalar(select(func.count()).where(E.project_id == project_id)) or 0)
    return _newest_lines(session, E.project_id == project_id, limit), total
