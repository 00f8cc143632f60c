"""Entities and their overrides: create (one per (kind, normalized_name, project_key)), look up
(through name aliases), fill in, keep, re-kind or archive after a re-judgement, the purge's
selection, and the writes of a user's correction.

Creation relies on the UNIQUE key: two daemons promoting the same name get one entity, the second
INSERT … ON CONFLICT DO NOTHING finds the first one's row. A key that is an alias (a name merged
away, renamed or re-kinded) is never created again: it resolves to the entity it points to.

A user's correction is final: the purge's writes leave an entity with a user override alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from blake3 import blake3
from sqlalchemy import (
    ColumnElement,
    and_,
    case,
    delete,
    exists,
    func,
    select,
    text,
    true,
    tuple_,
    update,
)
from sqlalchemy.orm import Session, aliased

from yzos_jobs.db.aliases import resolve_aliases
from yzos_jobs.db.dialect import (
    by_key_only,
    chunks,
    is_postgres,
    pg_rows,
    row_source,
    time_param,
    upsert_insert,
)
from yzos_jobs.db.models import Entity, EntityCandidate, EntityOverride, EntitySighting

EntityKey = tuple[str, str, str]  # (kind, normalized_name, project_key)

# Verdicts that were not a model's judgement; the purge re-judges these first.
UNJUDGED_SOURCES = ("dry_run", "fallback")
# entity_overrides.set_by of a user's correction (final for every job).
USER = "user"


def project_key(normalized_path: str | None) -> str:
    """The identity scope of a repository: a fixed-length hash of its normalised path ('' when
    unknown), so that no index entry depends on how long a path is."""
    if not normalized_path:
        return ""
    return blake3(normalized_path.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class EntityDraft:
    """What an entity is created with if it does not exist yet."""

    kind: str
    normalized_name: str
    display_name: str
    confidence: float | None
    verdict_source: str
    classified_model: str | None
    first_seen_at: datetime
    summary: str | None
    project_key: str = ""
    project_path: str | None = None  # a project's repository

    @property
    def key(self) -> EntityKey:
        return (self.kind, self.normalized_name, self.project_key)


@dataclass(frozen=True)
class EntityRef:
    id: int
    status: str
    overridden: bool
    created: bool


_DRAFT_COLUMNS = (
    ("kind", "text"),
    ("normalized_name", "text"),
    ("display_name", "text"),
    ("confidence", "float8"),
    ("verdict_source", "text"),
    ("classified_model", "text"),
    ("first_seen_at", "timestamptz"),
    ("summary", "text"),
    ("project_key", "text"),
    ("project_path", "text"),
)


def upsert_entities(
    session: Session, drafts: Sequence[EntityDraft], now: datetime
) -> dict[EntityKey, EntityRef]:
    """Create the entities that do not exist yet, then read back the keys that already existed;
    a key that is an alias resolves to its entity and is not created."""
    ordered = sorted(drafts, key=lambda d: d.key)  # one lock order across daemons
    refs: dict[EntityKey, EntityRef] = {}
    if not ordered:
        return refs
    pg = is_postgres(session)
    if not pg:  # PostgreSQL skips aliases inside the INSERT and resolves them in the lookup
        aliased_keys = resolve_aliases(session, [d.key for d in ordered])
        if aliased_keys:
            refs.update(_refs_by_id(session, aliased_keys))
            ordered = [d for d in ordered if d.key not in aliased_keys]
            if not ordered:
                return refs
    rows = [{name: getattr(d, name) for name, _ in _DRAFT_COLUMNS} for d in ordered]
    source, params = row_source(session, _DRAFT_COLUMNS, rows)
    names = ", ".join(n for n, _ in _DRAFT_COLUMNS)
    # A task whose repository's project exists already is tied to it as it is created (one
    # write per row); the projects are few, and read once.
    inserted = session.connection().execute(
        text(
            "WITH projects AS MATERIALIZED (SELECT project_key AS key, min(id) AS id "
            "FROM entities WHERE kind = 'project' GROUP BY project_key) "
            f"INSERT INTO entities ({names}, status, sighting_count, classified_at, "
            f"created_at, updated_at, project_id) SELECT {names}, 'active', 0, :now, :now, :now, "
            "CASE WHEN v.kind = 'task' AND v.project_key <> '' THEN "
            "(SELECT p.id FROM projects AS p WHERE p.key = v.project_key) END "
            f"FROM {source} WHERE NOT EXISTS (SELECT 1 FROM entity_aliases AS a "
            "WHERE a.kind = v.kind AND a.normalized_name = v.normalized_name "
            "AND a.project_key = v.project_key) "
            "ON CONFLICT (kind, normalized_name, project_key) DO NOTHING "
            "RETURNING id, kind, normalized_name, project_key"
        ),
        {**params, "now": time_param(session, now)},
    )
    for eid, kind, norm, key in inserted:
        refs[(kind, norm, key)] = EntityRef(eid, "active", overridden=False, created=True)
    if pg and refs:
        # A merge that committed while the INSERT waited on the row it deleted made the key an
        # alias after the INSERT looked: the entity just made goes, and the key leads on to
        # where the user put it.
        merged_meanwhile = resolve_aliases(session, list(refs))
        if merged_meanwhile:
            gone = [refs.pop(k).id for k in merged_meanwhile]
            session.execute(delete(Entity).where(Entity.id.in_(gone)))
            refs.update(_refs_by_id(session, merged_meanwhile))
    existing = [d.key for d in ordered if d.key not in refs]
    if existing:
        refs.update(find_entities(session, existing) if pg else _find_by_key(session, existing))
    if pg:
        _hold(session, refs)
    return refs


# How many merges one after another a write follows an entity through while holding it
_MAX_HOPS = 20


def _hold(session: Session, refs: dict[EntityKey, EntityRef]) -> None:
    """PostgreSQL: the entities found are held (FOR KEY SHARE) until the caller's transaction
    ends, so that a merge cannot delete one before the sightings that name it are written; one a
    merge deleted between finding and holding it is found again where it went. Without this a
    user merging entity after entity could take the one a write names before each of its tries.
    A key that leads nowhere any more is left as it was: the write's foreign key refuses it, and
    the write is made again from the start."""
    for _ in range(_MAX_HOPS):
        found = {k: r for k, r in refs.items() if not r.created}
        if not found:
            return
        ids = sorted({r.id for r in found.values()})
        held = set(
            session.scalars(
                select(Entity.id)
                .where(Entity.id.in_(ids))
                .order_by(Entity.id)
                .with_for_update(key_share=True)
            )
        )
        gone = [k for k, r in found.items() if r.id not in held]
        if not gone:
            return
        again = find_entities(session, gone)  # a new statement: sees the merge and its alias
        if set(gone) - set(again):
            return  # merged away with no alias: the write fails on it and is made again
        refs.update(again)


_KEY_COLUMNS = (("kind", "text"), ("normalized_name", "text"), ("project_key", "text"))


def find_entities(session: Session, keys: Sequence[EntityKey]) -> dict[EntityKey, EntityRef]:
    """The entities with these keys (or that these keys are aliases of), with their status and
    whether an override pins them."""
    if is_postgres(session):
        return _find_pg(session, keys)
    aliased_keys = resolve_aliases(session, keys)
    refs = _refs_by_id(session, aliased_keys)
    rest = [k for k in keys if k not in aliased_keys]
    if rest:
        refs.update(_find_by_key(session, rest))
    return refs


def _refs_by_id(session: Session, ids: Mapping[EntityKey, int]) -> dict[EntityKey, EntityRef]:
    if not ids:
        return {}
    rows = session.execute(
        select(Entity.id, Entity.status, EntityOverride.status)
        .outerjoin(EntityOverride, EntityOverride.entity_id == Entity.id)
        .where(Entity.id.in_(sorted(set(ids.values()))))
    )
    found = {
        eid: EntityRef(eid, status, override is not None, False) for eid, status, override in rows
    }
    return {key: found[eid] for key, eid in ids.items() if eid in found}


def _find_pg(session: Session, keys: Sequence[EntityKey]) -> dict[EntityKey, EntityRef]:
    """PostgreSQL: entities by key and through aliases in one round trip; an alias wins."""
    source, params = pg_rows(
        _KEY_COLUMNS, [{"kind": k, "normalized_name": n, "project_key": p} for k, n, p in keys]
    )
    found = session.connection().execute(
        text(
            "SELECT 1 AS via_alias, v.kind, v.normalized_name, v.project_key, e.id, e.status, "
            f"o.status FROM {source} JOIN entity_aliases AS a ON a.kind = v.kind "
            "AND a.normalized_name = v.normalized_name AND a.project_key = v.project_key "
            "JOIN entities AS e ON e.id = a.entity_id "
            "LEFT JOIN entity_overrides AS o ON o.entity_id = e.id "
            "UNION ALL SELECT 0, e.kind, e.normalized_name, e.project_key, e.id, e.status, "
            f"o.status FROM entities AS e JOIN {source} ON e.kind = v.kind "
            "AND e.normalized_name = v.normalized_name AND e.project_key = v.project_key "
            "LEFT JOIN entity_overrides AS o ON o.entity_id = e.id ORDER BY 1"
        ),
        params,
    )
    return {
        (kind, norm, key): EntityRef(eid, status, override is not None, created=False)
        for _, kind, norm, key, eid, status, override in found
    }


def _find_by_key(session: Session, keys: Sequence[EntityKey]) -> dict[EntityKey, EntityRef]:
    refs: dict[EntityKey, EntityRef] = {}
    found = (
        row
        for chunk in chunks(keys, 300)
        for row in session.connection().execute(
            select(
                Entity.id,
                Entity.kind,
                Entity.normalized_name,
                Entity.project_key,
                Entity.status,
                EntityOverride.status,
            )
            .outerjoin(EntityOverride, EntityOverride.entity_id == Entity.id)
            .where(tuple_(Entity.kind, Entity.normalized_name, Entity.project_key).in_(chunk))
        )
    )
    for eid, kind, norm, key, status, override in found:
        refs[(kind, norm, key)] = EntityRef(eid, status, override is not None, created=False)
    return refs


def link_tasks_to_projects(session: Session, keys: set[str]) -> None:
    """Tie tasks without a project to the project of their repository, once it exists (a task
    created after its project was tied to it by `upsert_entities` already: this finds only the
    ones left)."""
    keys.discard("")
    if not keys:
        return
    wanted = sorted(keys)
    project = aliased(Entity)
    # The repositories' projects, found among the projects (few), not among the repositories'
    # entities (their tasks, many), and looked up once each, not once per task.
    projects = (
        select(project.project_key.label("key"), func.min(project.id).label("id"))
        .where(project.kind == "project", project.project_key.in_(wanted).is_(true()))
        .group_by(project.project_key)
        .cte("projects")
        .prefix_with("MATERIALIZED")
    )
    owner = select(projects.c.id).where(projects.c.key == Entity.project_key).scalar_subquery()
    # The tasks are found through the index of unlinked entities (projects, persons, tasks still
    # without one), not by kind or repository: those grow with every task, and this runs once
    # per batch.
    session.execute(
        update(Entity)
        .where(
            Entity.project_id.is_(None),
            and_(Entity.kind == "task", Entity.project_key.in_(wanted)).is_(true()),
        )
        .values(project_id=owner)
        .execution_options(synchronize_session=False)
    )


def fill_missing_summaries(session: Session, summaries: Mapping[int, str]) -> None:
    """Give active entities without a summary the one offered."""
    params = [{"eid": eid, "s": s} for eid, s in sorted(summaries.items())]
    if not params:
        return
    source, bound = row_source(session, (("eid", "bigint"), ("s", "text")), params)
    unset = by_key_only("e.summary IS NULL AND e.status = 'active'")
    session.connection().execute(
        text(
            f"UPDATE entities AS e SET summary = v.s FROM {source} WHERE e.id = v.eid AND {unset}"
        ),
        bound,
    )


def active_entity_of_kind(session: Session, entity_id: int, kind: str) -> int | None:
    """The entity's id if it exists, is active and of that kind."""
    return session.scalar(
        select(Entity.id).where(
            Entity.id == entity_id, Entity.kind == kind, Entity.status == "active"
        )
    )


def project_by_path(session: Session, normalized_path: str) -> EntityRef | None:
    """The first project of this repository, with its status and whether an override pins it."""
    row = session.execute(
        select(Entity.id, Entity.status, EntityOverride.status)
        .outerjoin(EntityOverride, EntityOverride.entity_id == Entity.id)
        .where(Entity.kind == "project", Entity.project_path == normalized_path)
        .order_by(Entity.id)
        .limit(1)
    ).first()
    if row is None:
        return None
    return EntityRef(row[0], row[1], overridden=row[2] is not None, created=False)


def set_entity_details(
    session: Session,
    entity_id: int,
    *,
    project_path: str | None = None,
    okf: dict[str, Any] | None = None,
) -> None:
    values: dict[str, Any] = {}
    if project_path is not None:
        values["project_path"] = project_path
    if okf is not None:
        values["okf"] = okf
    if values:
        session.execute(update(Entity).where(Entity.id == entity_id).values(values))


@dataclass(frozen=True)
class EntityToJudge:
    id: int
    kind: str
    display_name: str
    summary: str | None
    okf: dict[str, Any] | None
    normalized_name: str = ""
    project_key: str = ""

    @property
    def key(self) -> EntityKey:
        return (self.kind, self.normalized_name, self.project_key)


def _active_unpinned() -> list[ColumnElement[bool]]:
    return [Entity.status == "active", ~exists().where(EntityOverride.entity_id == Entity.id)]


def due_for_rejudgement(
    session: Session, judged_before: datetime, exclude: set[int], limit: int
) -> list[int]:
    """The ids of active entities without an override due for a re-judgement, in the order they
    are due: never judged by a model (dry_run, fallback) first, then the oldest verdicts. One
    sort per call: a run asks for its whole budget's worth at once."""
    unjudged = Entity.verdict_source.in_(UNJUDGED_SOURCES)
    order = [
        case((unjudged, 0), else_=1),
        case((Entity.classified_at.is_(None), 0), else_=1),
        Entity.classified_at,
        Entity.id,
    ]
    stmt = (
        select(Entity.id)
        .where(
            *_active_unpinned(),
            unjudged | Entity.classified_at.is_(None) | (Entity.classified_at < judged_before),
        )
        .order_by(*order)
        .limit(limit + len(exclude))
    )
    ids = [eid for eid in session.scalars(stmt) if eid not in exclude]
    return ids[:limit]


def entities_to_judge(session: Session, ids: Sequence[int]) -> list[EntityToJudge]:
    """These entities, in this order, as the judge needs them; those archived or pinned by an
    override since they were found due are left out."""
    if not ids:
        return []
    stmt = select(
        Entity.id,
        Entity.kind,
        Entity.display_name,
        Entity.summary,
        Entity.okf,
        Entity.normalized_name,
        Entity.project_key,
    ).where(Entity.id.in_(list(ids)), *_active_unpinned())
    found = {row[0]: EntityToJudge(*row) for row in session.execute(stmt)}
    return [found[eid] for eid in ids if eid in found]


def apps_seen_with(session: Session, ids: Sequence[int]) -> dict[int, str]:
    """The app each entity was last seen in (the bundle id of its latest candidate that had one)."""
    if not ids:
        return {}
    rows = session.execute(
        select(EntityCandidate.entity_id, EntityCandidate.app_bundle_id)
        .where(EntityCandidate.entity_id.in_(list(ids)), EntityCandidate.app_bundle_id.is_not(None))
        .order_by(EntityCandidate.id.desc())
    )
    seen: dict[int, str] = {}
    for eid, bundle in rows:
        seen.setdefault(eid, bundle)
    return seen


def latest_sighting_summaries(session: Session, ids: Sequence[int]) -> dict[int, str]:
    """The summary of each entity's latest sighting that has one."""
    if not ids:
        return {}
    latest = (
        select(EntitySighting.entity_id, func.max(EntitySighting.id).label("sid"))
        .where(EntitySighting.entity_id.in_(list(ids)), EntitySighting.summary.is_not(None))
        .group_by(EntitySighting.entity_id)
        .subquery()
    )
    rows = session.execute(
        select(EntitySighting.entity_id, EntitySighting.summary).join(
            latest, EntitySighting.id == latest.c.sid
        )
    )
    return {eid: summary for eid, summary in rows}


@dataclass(frozen=True)
class Rejudged:
    """A re-judgement's verdict columns, written whether the entity is kept or archived."""

    verdict_source: str
    classified_model: str | None
    confidence: float
    classified_at: datetime

    def values(self) -> dict[str, Any]:
        return {
            "verdict_source": self.verdict_source,
            "classified_model": self.classified_model,
            "confidence": self.confidence,
            "classified_at": self.classified_at,
            "updated_at": self.classified_at,
        }


def _not_user_corrected() -> ColumnElement[bool]:
    """No user override on the entity: a job's re-judgement never overwrites a user's word."""
    return ~exists().where(EntityOverride.entity_id == Entity.id, EntityOverride.set_by == USER)


def keep_entity(
    session: Session,
    entity_id: int,
    rejudged: Rejudged,
    okf: dict[str, Any],
    summary: str | None = None,
    new_key: EntityKey | None = None,
) -> bool:
    """Record a re-judgement that keeps an active entity (and its refreshed summary); with
    `new_key`, under another kind (and the scope that kind has)."""
    values = {**rejudged.values(), "okf": okf}
    if summary is not None:
        values["summary"] = summary
    if new_key is not None:
        values["kind"], _, values["project_key"] = new_key
        if new_key[0] != "task":
            values["project_id"] = None
    result = session.execute(
        update(Entity)
        .where(Entity.id == entity_id, Entity.status == "active", _not_user_corrected())
        .values(values)
    )
    if result.rowcount and new_key is not None and new_key[0] != "project":
        release_tasks(session, entity_id)
    return bool(result.rowcount)


def move_to_repository(
    session: Session,
    entity_id: int,
    key: EntityKey,
    display_name: str,
    project_path: str | None,
    now: datetime,
) -> bool:
    """A job's move of an active project or task, one no user corrected, to another repository
    (`key`'s scope), with the name and path it has there; False if it changed meanwhile. A task
    leaves its project: `link_tasks_to_projects` ties it to the new repository's."""
    kind, normalized, scope = key
    values: dict[str, Any] = {
        "normalized_name": normalized,
        "display_name": display_name,
        "project_key": scope,
        "project_path": project_path,
        "updated_at": now,
    }
    if kind == "task":
        values["project_id"] = None
    result = session.execute(
        update(Entity)
        .where(
            Entity.id == entity_id,
            Entity.kind == kind,
            Entity.status == "active",
            _not_user_corrected(),
        )
        .values(values)
    )
    return bool(result.rowcount)


def holds_tasks(session: Session, project_id: int) -> bool:
    """Whether any task is tied to this project."""
    return session.scalar(select(exists().where(Entity.project_id == project_id))) or False


def tasks_held(session: Session, project_id: int) -> int:
    """How many tasks are tied to this project."""
    held = select(func.count()).select_from(Entity).where(Entity.project_id == project_id)
    return int(session.scalar(held) or 0)


def release_tasks(session: Session, entity_id: int) -> int:
    """An entity that is no longer a project holds no tasks: they wait, in their repository's
    scope, for the next project of it. How many it held."""
    released = session.execute(
        update(Entity)
        .where(Entity.project_id == entity_id)
        .values(project_id=None)
        .execution_options(synchronize_session=False)
    )
    return int(released.rowcount or 0)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class KeptEntity:
    """A re-judgement that keeps an entity as the kind it is."""

    entity_id: int
    rejudged: Rejudged
    okf: dict[str, Any]
    summary: str | None = None  # a fresh summary, if any


_KEEP_COLUMNS = (
    ("eid", "bigint"),
    ("source", "text"),
    ("model", "text"),
    ("confidence", "float8"),
    ("at", "timestamptz"),
    ("okf", "jsonb"),
    ("summary", "text"),
)


def keep_entities(session: Session, kept: Sequence[KeptEntity]) -> set[int]:
    """`keep_entity` for a batch, in one statement: the ids of those kept (still active and not
    corrected by a user)."""
    if not kept:
        return set()
    rows = [
        {
            "eid": k.entity_id,
            "source": k.rejudged.verdict_source,
            "model": k.rejudged.classified_model,
            "confidence": k.rejudged.confidence,
            "at": k.rejudged.classified_at,
            "okf": k.okf,
            "summary": k.summary,
        }
        for k in sorted(kept, key=lambda k: k.entity_id)  # one lock order across daemons
    ]
    source, bound = row_source(session, _KEEP_COLUMNS, rows)
    open_to_jobs = by_key_only(
        "e.status = 'active' AND NOT EXISTS (SELECT 1 FROM entity_overrides AS o "
        "WHERE o.entity_id = e.id AND o.set_by = :user)"
    )
    result = session.connection().execute(
        text(
            "UPDATE entities AS e SET verdict_source = v.source, classified_model = v.model, "
            "confidence = v.confidence, classified_at = v.at, updated_at = v.at, okf = v.okf, "
            f"summary = coalesce(v.summary, e.summary) FROM {source} "
            f"WHERE e.id = v.eid AND {open_to_jobs} RETURNING id"
        ),
        {**bound, "user": USER},
    )
    return {int(eid) for (eid,) in result}


def archive_entity(
    session: Session, entity_id: int, rejudged: Rejudged, reason: str, set_by: str
) -> bool:
    """Archive an active entity for good: status archived plus an entity_overrides row."""
    result = session.execute(
        update(Entity)
        .where(Entity.id == entity_id, Entity.status == "active", _not_user_corrected())
        .values(status="archived", **rejudged.values())
    )
    if not result.rowcount:
        return False
    stmt = upsert_insert(session, EntityOverride).on_conflict_do_nothing(
        index_elements=["entity_id"]
    )
    session.execute(
        stmt,
        {
            "entity_id": entity_id,
            "status": "archived",
            "reason": reason,
            "set_by": set_by,
            "created_at": rejudged.classified_at,
        },
    )
    return True


# -- the writes of corrections and merges ----------------------------------------------------


@dataclass(frozen=True)
class EntityRow:
    """An entity as a correction or a review command reads it."""

    id: int
    kind: str
    display_name: str
    normalized_name: str
    status: str
    summary: str | None
    project_path: str | None
    project_key: str
    project_id: int | None
    confidence: float | None
    verdict_source: str | None
    classified_model: str | None
    classified_at: datetime | None
    sighting_count: int
    first_seen_at: datetime | None
    last_seen_at: datetime | None
    created_at: datetime

    @property
    def key(self) -> EntityKey:
        return (self.kind, self.normalized_name, self.project_key)


ENTITY_ROW_COLUMNS = tuple(getattr(Entity, name) for name in EntityRow.__dataclass_fields__)


def entity_rows(session: Session, ids: Sequence[int], *, lock: bool = False) -> list[EntityRow]:
    """These entities, in id order; `lock`: held (FOR UPDATE on PostgreSQL) until the end of the
    transaction, so a correction and a job do not write the same entity at once."""
    stmt = select(*ENTITY_ROW_COLUMNS).where(Entity.id.in_(list(ids))).order_by(Entity.id)
    if lock:
        stmt = stmt.with_for_update(of=Entity)
    return [EntityRow(*row) for row in session.execute(stmt)]


def user_corrected(session: Session, ids: Sequence[int]) -> set[int]:
    """Which of these entities a user has corrected."""
    return set(
        session.scalars(
            select(EntityOverride.entity_id).where(
                EntityOverride.entity_id.in_(list(ids)), EntityOverride.set_by == USER
            )
        )
    )


def set_user_override(
    session: Session, entity_id: int, status: str, reason: str | None, now: datetime
) -> None:
    """The user's word on an entity's status; it replaces whatever a job recorded."""
    stmt = upsert_insert(session, EntityOverride).values(
        entity_id=entity_id, status=status, reason=reason, set_by=USER, created_at=now
    )
    session.execute(
        stmt.on_conflict_do_update(
            index_elements=["entity_id"],
            set_={"status": status, "reason": reason, "set_by": USER, "created_at": now},
        )
    )


def correct_entity(session: Session, entity_id: int, now: datetime, **values: Any) -> int:
    """Write a user's correction onto an entity: the given columns, and the verdict columns
    that say a user decided. The tasks it let go of, when it is no project any more."""
    if "kind" in values and values["kind"] != "task":
        values.setdefault("project_id", None)
    released = 0
    if "kind" in values and values["kind"] != "project":
        released = release_tasks(session, entity_id)
    session.execute(
        update(Entity)
        .where(Entity.id == entity_id)
        .values(
            verdict_source=USER,
            classified_model=None,
            confidence=1.0,
            classified_at=now,
            updated_at=now,
            **values,
        )
    )
    return released


def absorb_entity(session: Session, source: EntityRow, target: EntityRow, now: datetime) -> None:
    """The entity-table side of a merge: the source project's tasks follow the target (if it is a
    project), the target takes what it lacks (summary, project, repository), the source goes."""
    owner = target.id if target.kind == "project" else None
    session.execute(update(Entity).where(Entity.project_id == source.id).values(project_id=owner))
    fill: dict[str, Any] = {"updated_at": now}
    if target.summary is None and source.summary is not None:
        fill["summary"] = source.summary
    if target.kind == "task" and target.project_id is None and source.project_id != target.id:
        fill["project_id"] = source.project_id
    if target.kind == "project" and target.project_path is None:
        fill["project_path"] = source.project_path
    session.execute(update(Entity).where(Entity.id == target.id).values(fill))
    session.execute(delete(Entity).where(Entity.id == source.id))
