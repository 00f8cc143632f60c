"""A coding session that a later segment shows to have worked in another repository than the one
its earlier segments were recorded in (it started in a folder its work was not in, and what it
did later named the repository): what only that session proposed moves with it, so that a daemon
reading the session at each idle close ends with what one reading of the whole session makes.

Only what no other source has sighted and no user has corrected moves: a project or a task seen
elsewhere is real where it is, and a user's word is final. A task moves into the new repository's
scope, or merges into the task of its name there. The session's project then takes the new
repository's name and path, or merges into that repository's project where there is one; one
that still holds a task (seen elsewhere, or corrected) stays with it. Either way the old key
resolves to where the entity went, as after a merge, and the session's candidates say the new
repository. Where the entity of the new key is archived, nothing is moved into it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from yzos_jobs.db import entities as entity_db
from yzos_jobs.db.entities import EntityKey, EntityRow, project_key
from yzos_jobs.db.queue import entities_proposed_by, move_sources_project
from yzos_jobs.db.sighting_rows import seen_elsewhere
from yzos_jobs.db.triage_queue import move_pending_digests
from yzos_jobs.entity.merge import merge_entities, remember_old_key
from yzos_jobs.entity.policy import display_name, normalize_name
from yzos_jobs.entity.triage_writes import SOURCE_KIND as TRIAGE_SOURCE_KIND


@dataclass(frozen=True)
class SessionMove:
    """Where a session's earlier segments were recorded, and where it worked."""

    old_path: str | None
    new_path: str
    new_project: str | None  # the project's name in the new repository

    @property
    def moved(self) -> bool:
        return project_key(self.old_path) != project_key(self.new_path)


def follow_moved_session(
    session: Session,
    activity: tuple[str, str],
    source_kind: str,
    source_ids: Sequence[str],
    move: SessionMove,
    now: datetime,
) -> None:
    """Move what the earlier segments `source_ids` of the activity session `activity` (its
    source kind and external id) alone proposed to the session's repository, in the caller's
    transaction (before the new segment's candidates are written). The aliases left behind are
    set by the session's importer."""
    if not move.moved:
        return
    move_sources_project(session, source_kind, source_ids, move.old_path, move.new_path)
    move_pending_digests(session, *activity, move.old_path, move.new_path, move.new_project)
    set_by = activity[0]
    proposed = entities_proposed_by(session, source_kind, source_ids)
    theirs = proposed_alone(session, proposed, source_kind, source_ids)
    old_scope = project_key(move.old_path)
    rows = [
        r
        for r in entity_db.entity_rows(session, sorted(theirs), lock=True)
        if r.status == "active" and r.project_key == old_scope
    ]
    scope = project_key(move.new_path)
    name = display_name(move.new_project) if move.new_project else None
    name = name if name and normalize_name(name) else None
    for row in rows:
        if row.kind == "task":
            key = ("task", row.normalized_name, scope)
            _move(session, row, key, row.display_name, move, set_by, now)
    for row in rows:
        # a project that still holds a task (one seen elsewhere or corrected) stays with it
        if row.kind == "project" and name and not entity_db.holds_tasks(session, row.id):
            _move(session, row, ("project", normalize_name(name), scope), name, move, set_by, now)
    entity_db.link_tasks_to_projects(session, {scope})


def proposed_alone(
    session: Session, entity_ids: set[int], source_kind: str, source_ids: Sequence[str]
) -> set[int]:
    """Which of these entities only these sources (one session's segments, read line by line or
    triaged) have sighted, and no user has corrected: a job may move or merge them."""
    return (
        entity_ids
        - seen_elsewhere(session, entity_ids, (source_kind, TRIAGE_SOURCE_KIND), source_ids)
        - entity_db.user_corrected(session, list(entity_ids))
    )


def _move(
    session: Session,
    row: EntityRow,
    key: EntityKey,
    shown: str,
    move: SessionMove,
    set_by: str,
    now: datetime,
) -> None:
    """The entity takes `key` (its old key resolving to it), or merges into the active entity
    that has it."""
    found = entity_db.find_entities(session, [key]).get(key)
    if found is not None and found.id != row.id:
        if found.status != "active":
            return
        target = entity_db.entity_rows(session, [found.id], lock=True)
        if target:
            merge_entities(session, row, target[0], set_by, now)
        return
    path = move.new_path if row.project_path == move.old_path else row.project_path
    if entity_db.move_to_repository(session, row.id, key, shown, path, now):
        remember_old_key(session, row.id, row.key, key, set_by, now)
