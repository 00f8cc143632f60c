"""The vocabulary of the knowledge base, defined once: what a verdict may say, what an entity is."""

from __future__ import annotations

from typing import Literal, get_args

EntityKind = Literal["person", "project", "task"]
NonEntityKind = Literal["app", "noise"]
VerdictKind = Literal[EntityKind, NonEntityKind]

ENTITY_KINDS: tuple[str, ...] = get_args(EntityKind)
VERDICT_KINDS: tuple[str, ...] = get_args(VerdictKind)


def is_entity_kind(kind: object) -> bool:
    return kind in ENTITY_KINDS
