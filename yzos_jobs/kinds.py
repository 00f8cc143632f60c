"""The vocabulary of the knowledge base, defined once: what a verdict may say, what an entity is."""

from __future__ import annotations

from typing import Literal, get_args

EntityKind = Literal["person", "project", "task"]
NonEntityKind = Literal["app", "noise"]
VerdictKind = Literal[EntityKind, NonEntityKind]

ENTITY_KINDS: tuple[str, ...] = get_args(EntityKind)
ENTITY_STATUSES = ("active", "archived")
# held: waiting for its session's triage; no job claims it meanwhile.
CANDIDATE_STATUSES = ("pending", "held", "claimed", "promoted", "rejected")
TRIAGE_STATUSES = ("pending", "claimed", "done", "exhausted")
VERDICT_KINDS: tuple[str, ...] = get_args(VerdictKind)


def is_entity_kind(kind: object) -> bool:
    return kind in ENTITY_KINDS
