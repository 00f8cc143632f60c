"""The only writer of sightings. One multi-row INSERT … ON CONFLICT DO NOTHING per batch; an
entity's sighting_count and last_seen_at move only for the rows really inserted."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from blake3 import blake3
from sqlalchemy import bindparam, case, update
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import Entity, EntitySighting
from yzos_jobs.db.types import UTCDateTime

_CHUNK = 1000


def fingerprint(source_id: str, summary: str | None) -> str:
    """blake3(source_id ‖ summary), hex; the summary of a sighting without one is empty."""
    return blake3((source_id + (summary or "")).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Sighting:
    entity_id: int
    source_kind: str
    source_id: str
    summary: str | None
    seen_at: datetime

    @property
    def key(self) -> tuple[int, str, str, str]:
        return (
            self.entity_id,
            self.source_kind,
            self.source_id,
            fingerprint(self.source_id, self.summary),
        )


def add_sightings(session: Session, sightings: Iterable[Sighting]) -> int:
    """Store sightings; duplicates (same entity, source and fingerprint) are dropped by the UNIQUE
    key. Returns how many rows were inserted."""
    unique: dict[tuple[int, str, str, str], Sighting] = {}
    for s in sightings:
        unique.setdefault(s.key, s)
    if not unique:
        return 0
    rows = [
        {
            "entity_id": key[0],
            "source_kind": key[1],
            "source_id": key[2],
            "fingerprint": key[3],
            "summary": s.summary,
            "seen_at": s.seen_at,
        }
        for key, s in sorted(unique.items())  # one lock order across daemons
    ]
    inserted: dict[int, list[datetime]] = defaultdict(list)
    for start in range(0, len(rows), _CHUNK):
        stmt = (
            upsert_insert(session, EntitySighting)
            .values(rows[start : start + _CHUNK])
            .on_conflict_do_nothing(
                index_elements=["entity_id", "source_kind", "source_id", "fingerprint"]
            )
            .returning(EntitySighting.entity_id, EntitySighting.seen_at)
        )
        for entity_id, seen_at in session.execute(stmt):
            inserted[entity_id].append(seen_at)
    _count_sightings(session, inserted)
    return sum(len(v) for v in inserted.values())


def add_sighting(session: Session, sighting: Sighting) -> bool:
    return add_sightings(session, [sighting]) == 1


def _count_sightings(session: Session, inserted: dict[int, list[datetime]]) -> None:
    if not inserted:
        return
    first = bindparam("first_seen", type_=UTCDateTime())
    last = bindparam("last_seen", type_=UTCDateTime())
    stmt = (
        update(Entity)
        .where(Entity.id == bindparam("eid"))
        .values(
            sighting_count=Entity.sighting_count + bindparam("n"),
            first_seen_at=case(
                (Entity.first_seen_at.is_(None) | (Entity.first_seen_at > first), first),
                else_=Entity.first_seen_at,
            ),
            last_seen_at=case(
                (Entity.last_seen_at.is_(None) | (Entity.last_seen_at < last), last),
                else_=Entity.last_seen_at,
            ),
        )
    )
    params = [
        {"eid": eid, "n": len(times), "first_seen": min(times), "last_seen": max(times)}
        for eid, times in sorted(inserted.items())
    ]
    session.connection().execute(stmt, params)
