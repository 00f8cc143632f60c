"""References a user types on the command line: a name, `e:ID` (an entity) or `c:ID` (a
candidate). A name is matched in its key form against entities of every kind and scope and the
names merged into them; a name no entity has is looked up among the candidates' texts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy.orm import Session

from yzos_jobs.db.catalog import (
    CandidateRow,
    candidate_row,
    candidates_with_text,
    entities_named,
)
from yzos_jobs.db.decision_rows import merged_into
from yzos_jobs.db.entities import EntityRow, entity_rows
from yzos_jobs.entity.policy import normalize_name

_ID_REF = re.compile(r"([ec]):(\d{1,18})")
MAX_MATCHES = 20


class RefNotFound(Exception):
    """Nothing answers to the reference; one line for the user."""


class AmbiguousRef(Exception):
    """A name that matches several entities (or, with no entity, several candidates)."""

    def __init__(self, ref: str, entities: list[EntityRow], candidates: list[CandidateRow]) -> None:
        self.ref = ref
        self.entities = entities
        self.candidates = candidates
        n = len(entities) or len(candidates)
        what = "entities" if entities else "candidates"
        super().__init__(f"{ref!r} matches {n} {what}; name one by its e:ID or c:ID")


@dataclass(frozen=True)
class EntityTarget:
    entity: EntityRow

    @property
    def label(self) -> str:
        return f"e:{self.entity.id}"


@dataclass(frozen=True)
class CandidateTarget:
    candidate: CandidateRow

    @property
    def label(self) -> str:
        return f"c:{self.candidate.id}"


Target = EntityTarget | CandidateTarget


def resolve(session: Session, ref: str) -> Target:
    text = ref.strip()
    by_id = _ID_REF.fullmatch(text)
    if by_id:
        prefix, number = by_id.group(1), int(by_id.group(2))
        if prefix == "e":
            rows = entity_rows(session, [number])
            if not rows:
                raise RefNotFound(_gone(session, number))
            return EntityTarget(rows[0])
        candidate = candidate_row(session, number)
        if candidate is None:
            raise RefNotFound(f"no candidate c:{number}")
        return CandidateTarget(candidate)
    normalized = normalize_name(text)
    if not normalized:
        raise RefNotFound("an empty name names nothing; give a name, e:ID or c:ID")
    entities = entities_named(session, normalized)
    if len(entities) == 1:
        return EntityTarget(entities[0])
    if entities:
        raise AmbiguousRef(text, entities[:MAX_MATCHES], [])
    candidates = candidates_with_text(session, text, MAX_MATCHES)
    if len(candidates) == 1:
        return CandidateTarget(candidates[0])
    if candidates:
        raise AmbiguousRef(text, [], candidates)
    raise RefNotFound(f"no entity or candidate named {text!r}")


def _gone(session: Session, entity_id: int) -> str:
    """Why e:ID answers to nothing: merged into another entity (named so the user can go on
    with it), or never there."""
    holder = merged_into(session, entity_id)
    rows = entity_rows(session, [holder]) if holder is not None else []
    if not rows:
        return f"no entity e:{entity_id}"
    into = rows[0]
    archived = ", archived" if into.status == "archived" else ""
    return (
        f"e:{entity_id} was merged into e:{into.id} ({into.kind} {into.display_name!r}"
        f"{archived}); name e:{into.id} instead"
    )


def resolve_entity(session: Session, ref: str) -> EntityRow:
    """A reference that must name an entity (a candidate stands for the entity it joined)."""
    target = resolve(session, ref)
    if isinstance(target, EntityTarget):
        return target.entity
    eid = target.candidate.entity_id
    rows = entity_rows(session, [eid]) if eid is not None else []
    if not rows:
        raise RefNotFound(f"{target.label} is {target.candidate.status} and names no entity")
    return rows[0]
