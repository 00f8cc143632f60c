"""A coding session that a later segment shows to have worked in another repository than the one
its earlier segments were recorded in (it started in a folder its work was not in, and what it
did later named the repository): what only that session proposed moves with it, so that a daemon
reading the session at each idle close ends with what one reading of the whole session makes.

Only what no other source has sighted and no user has corrected moves (checked once the entities
are locked): a project or a task seen elsewhere is real where it is, and a user's word is final.
A task moves into the new repository's scope, or merges into the task of its name there. The
session's project then takes the new repository's name and path, or merges into that
repository's project where there is one; one that still holds a task (seen elsewhere, or
corrected) stays with it. No alias is left on an old key: in the old repository that name may
be other work later. The session's candidates of what moved, and its digests waiting for triage
or being triaged, say the new repository; each move is a row of the decision trail. Where the
entity of the new key is archived, nothing is moved into it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy.orm import Session

from yzos_jobs.db import entities as entity_db
from yzos_jobs.db.decision_rows import DecisionRow, record_decisions
from yzos_jobs.db.entities import EntityKey, EntityRow, project_key
from yzos_jobs.db.queue import entities_proposed_by, move_sources_project
from yzos_jobs.db.sighting_rows import entities_sighted_by, seen_elsewhere
from yzos_jobs.db.triage_queue import move_waiting_digests
from yzos_jobs.entity.merge import merge_entities
from yzos_jobs.entity.policy import display_name, normalize_name
from yzos_jobs.entity.trail import verdict_fields
from yzos_jobs.entity.triage_writes import SOURCE_KIND as TRIAGE_SOURCE_KIND

# The trail's call site of what a session's end applies to its entities
CALL_SITE = "apply_entities"


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
    *,
    digests: bool = True,
) -> None:
    """Move what the earlier segments `source_ids` of the activity session `activity` (its
    source kind and external id) alone proposed to the session's repository, in the caller's
    transaction (before the new segment's candidates are written). `digests`: its digests not
    yet triaged name the repository too (not where a triage follows a move the importer made:
    those were moved then, and another worker may be writing one of them)."""
    if not move.moved:
        return
    if digests:
        # First, so that a triage of the session written meanwhile is either seen below
        # (written before) or waits for this transaction and writes into the new repository
        move_waiting_digests(session, *activity, move.old_path, move.new_path, move.new_project)
    kinds = (source_kind, TRIAGE_SOURCE_KIND)
    # what its candidates name, and what its triage proposed on no line of it
    proposed = entities_proposed_by(session, source_kind, source_ids)
    proposed |= entities_sighted_by(session, kinds, source_ids)
    locked = entity_db.entity_rows(session, sorted(proposed), lock=True)  # then checked
    theirs = proposed_alone(session, {r.id for r in locked}, source_kind, source_ids)
    old_scope, scope = project_key(move.old_path), project_key(move.new_path)
    rows = [
        r for r in locked if r.id in theirs and r.status == "active" and r.project_key == old_scope
    ]
    name = display_name(move.new_project) if move.new_project else None
    name = name if name and normalize_name(name) else None
    moved: list[tuple[EntityRow, int]] = []  # each entity moved, and the id it has now
    for row in rows:
        if row.kind == "task":
            key = ("task", row.normalized_name, scope)
            if (now_id := _move(session, row, key, row.display_name, move, now)) is not None:
                moved.append((row, now_id))
    for row in rows:
        # a project that still holds a task (one seen elsewhere or corrected) stays with it
        if row.kind == "project" and name and not entity_db.holds_tasks(session, row.id):
            key = ("project", normalize_name(name), scope)
            if (now_id := _move(session, row, key, name, move, now)) is not None:
                moved.append((row, now_id))
    staying = proposed - {row.id for row, _ in moved}
    move_sources_project(session, source_kind, source_ids, move.old_path, move.new_path, staying)
    entity_db.link_tasks_to_projects(session, {scope})
    record_decisions(session, [_decision(row, now_id, move) for row, now_id in moved], now)


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
    now: datetime,
) -> int | None:
    """The entity takes `key`, or merges into the active entity that has it; no alias is left
    on its old key (in the old repository it may name other work later). Returns the id it has
    now, or None where it stays."""
    found = entity_db.find_entities(session, [key]).get(key)
    if found is not None and found.id != row.id:
        target = entity_db.entity_rows(session, [found.id], lock=True)
        if found.status != "active" or not target:
            return None
        # the old repository's project does not follow the task into its new one
        merge_entities(session, replace(row, project_id=None), target[0], None, now)
        return found.id
    path = move.new_path if row.project_path == move.old_path else row.project_path
    return row.id if entity_db.move_to_repository(session, row.id, key, shown, path, now) else None


def _decision(row: EntityRow, entity_id: int, move: SessionMove) -> DecisionRow:
    """The trail's row of a move: the entity as it was, where it went, why."""
    went = "merged into" if entity_id != row.id else "moved to"
    detail = (
        f"{row.kind} {row.display_name!r} (e:{row.id}) {went} e:{entity_id} in "
        f"{move.new_path}, from {move.old_path or 'no repository'}"
    )
    reason = "The session it was proposed in worked there, as its later records show"
    outcome = "merged" if entity_id != row.id else "moved"
    merged_from = row.id if entity_id != row.id else None
    return structural_decision(
        entity_id, row.kind, row.display_name, outcome, reason, detail, merged_from
    )


def structural_decision(
    entity_id: int,
    kind: str,
    name: str,
    outcome: str,
    reason: str,
    detail: str,
    merged_from: int | None = None,
) -> DecisionRow:
    """The trail's row of what a session's records showed of an entity, no model consulted;
    `merged_from`: the entity merged into it, which references to it are then pointed to."""
    verdict = verdict_fields(True, kind, name, f"{reason} (no model consulted)", 1.0)
    if merged_from is not None:
        verdict["merged_from"] = merged_from
    return DecisionRow(
        call_site=CALL_SITE,
        source="dry_run",
        outcome=outcome,
        entity_id=entity_id,
        verdict={**verdict, "detail": detail},
    )
