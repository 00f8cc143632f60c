"""Merging one entity into another, and moving an entity to another key (kind or name), in the
caller's transaction. Shared by user corrections and the purge's re-kinding. Orchestration only:
the SQL is in `db/`.

A merge moves everything that speaks of the source to the target: sightings (duplicates collapse
under the sightings' UNIQUE key and the target's count is recounted from its rows), candidates,
the decision trail, task→project links and aliases; then the source is deleted and its key
becomes an alias of the target, so later candidates of the old name land on the target.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from yzos_jobs.db import aliases
from yzos_jobs.db import entities as entity_db
from yzos_jobs.db.decision_rows import move_decisions
from yzos_jobs.db.entities import EntityKey, EntityRow
from yzos_jobs.db.queue import relink_candidates
from yzos_jobs.db.sighting_rows import move_sightings


def merge_entities(
    session: Session, source: EntityRow, target: EntityRow, set_by: str | None, now: datetime
) -> None:
    """`set_by`: who keeps the source's key as an alias of the target; None keeps none (work
    moved from another repository, where that key may name other work later)."""
    move_sightings(session, source.id, target.id)
    relink_candidates(session, source.id, target.id)
    move_decisions(session, source.id, target.id)
    aliases.repoint_aliases(session, source.id, target.id)
    entity_db.absorb_entity(session, source, target, now)
    if set_by is not None:
        aliases.add_alias(session, source.key, target.id, set_by, now)


def scope_for(kind: str, current_scope: str) -> str:
    """The project_key an entity keeps under another kind: a project or a task stays scoped by
    its repository, a person is not scoped."""
    return current_scope if kind in ("project", "task") else ""


def remember_old_key(
    session: Session,
    entity_id: int,
    old_key: EntityKey,
    new_key: EntityKey,
    set_by: str,
    now: datetime,
) -> None:
    """An entity moved to a new key (kind or name): its old key resolves to it from now on, and
    the new key is no alias of anything any more."""
    if new_key == old_key:
        return
    aliases.drop_alias(session, new_key)
    aliases.add_alias(session, old_key, entity_id, set_by, now)
