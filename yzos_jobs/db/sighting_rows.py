"""The only writer of sightings. One multi-row INSERT … ON CONFLICT DO NOTHING per batch; an
entity's sighting_count moves only for the rows really inserted, its last_seen_at for every
sighting of the batch (the same sighting seen again later: a window title back in view)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from blake3 import blake3
from sqlalchemy import and_, delete, func, select, text, update
from sqlalchemy.orm import Session, aliased

from yzos_jobs.db.dialect import is_postgres, pg_rows, row_source, sqlite_time
from yzos_jobs.db.models import Entity, EntitySighting


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
    # Precomputed by callers that have it; derived from source_id and summary otherwise.
    fingerprint: str = ""

    @property
    def key(self) -> tuple[int, str, str, str]:
        fp = self.fingerprint or fingerprint(self.source_id, self.summary)
        return (self.entity_id, self.source_kind, self.source_id, fp)


def add_sightings(session: Session, sightings: Iterable[Sighting]) -> int:
    """Store sightings; duplicates (same entity, source and fingerprint) are dropped by the UNIQUE
    key. Returns how many rows were inserted."""
    unique: dict[tuple[int, str, str, str], Sighting] = {}
    last: dict[tuple[int, str, str, str], datetime] = {}  # when each was seen last
    for s in sightings:
        unique.setdefault(s.key, s)
        if s.key not in last or s.seen_at > last[s.key]:
            last[s.key] = s.seen_at
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
            "last_seen": last[key],
        }
        for key, s in sorted(unique.items())  # one lock order across daemons
    ]
    if is_postgres(session):
        return _insert_and_count_pg(session, rows)
    return _insert_and_count_sqlite(session, rows)


_SIGHTING_COLUMNS = (
    ("entity_id", "bigint"),
    ("source_kind", "text"),
    ("source_id", "text"),
    ("fingerprint", "text"),
    ("summary", "text"),
    ("seen_at", "timestamptz"),
)
# the batch's rows as read: what is inserted, and when each was seen last
_BATCH_COLUMNS = (*_SIGHTING_COLUMNS, ("last_seen", "timestamptz"))


def _insert_and_count_pg(session: Session, rows: list[dict[str, Any]]) -> int:
    """PostgreSQL: insert the batch and move its entities' counts and first/last seen by the rows
    really inserted, in one statement (data-modifying CTEs)."""
    source, params = pg_rows(_BATCH_COLUMNS, rows)
    names = ", ".join(n for n, _ in _SIGHTING_COLUMNS)
    sql = text(
        f"WITH batch AS MATERIALIZED (SELECT {names}, last_seen FROM {source}), "
        f"ins AS (INSERT INTO entity_sightings ({names}) SELECT {names} FROM batch "
        "ON CONFLICT (entity_id, source_kind, source_id, fingerprint) DO NOTHING "
        "RETURNING entity_id, seen_at), "
        "seen AS (SELECT entity_id, count(*) AS n, min(seen_at) AS first_seen FROM ins "
        "GROUP BY entity_id), "
        "latest AS (SELECT entity_id, max(last_seen) AS last_seen FROM batch GROUP BY entity_id), "
        "counted AS (UPDATE entities AS e SET "
        "sighting_count = e.sighting_count + coalesce(seen.n, 0), "
        "first_seen_at = CASE WHEN e.first_seen_at IS NULL OR e.first_seen_at > seen.first_seen "
        "THEN seen.first_seen ELSE e.first_seen_at END, "
        "last_seen_at = CASE WHEN e.last_seen_at IS NULL OR e.last_seen_at < latest.last_seen "
        "THEN latest.last_seen ELSE e.last_seen_at END "
        "FROM latest LEFT JOIN seen ON seen.entity_id = latest.entity_id "
        "WHERE e.id = latest.entity_id AND (seen.n IS NOT NULL OR e.last_seen_at IS NULL "
        "OR e.last_seen_at < latest.last_seen)) "
        "SELECT coalesce(sum(n), 0) FROM seen"
    )
    return int(session.connection().execute(sql, params).scalar_one())


def _insert_and_count_sqlite(session: Session, rows: list[dict[str, Any]]) -> int:
    """SQLite: insert the batch, then move its entities' counts and first/last seen by the rows
    really inserted (timestamps are stored as text that sorts in time order)."""
    source, params = row_source(session, _SIGHTING_COLUMNS, rows)
    names = ", ".join(n for n, _ in _SIGHTING_COLUMNS)
    inserted: dict[int, list[str]] = defaultdict(list)
    latest: dict[int, str] = {}  # every sighting of the batch moves its entity's last seen
    for row in rows:
        at = sqlite_time(row["last_seen"])
        if at > latest.get(row["entity_id"], ""):
            latest[row["entity_id"]] = at
    for entity_id, seen_at in session.connection().execute(
        text(
            f"INSERT INTO entity_sightings ({names}) SELECT {names} FROM {source} WHERE true "
            "ON CONFLICT (entity_id, source_kind, source_id, fingerprint) DO NOTHING "
            "RETURNING entity_id, seen_at"
        ),
        params,
    ):
        inserted[entity_id].append(seen_at)
    counts = [
        {
            "eid": eid,
            "n": len(inserted.get(eid, ())),
            "first_seen": min(inserted[eid]) if eid in inserted else None,
            "last_seen": last,
        }
        for eid, last in sorted(latest.items())
    ]
    source, params = row_source(session, _COUNT_COLUMNS, counts)
    session.connection().execute(
        text(
            "UPDATE entities AS e SET sighting_count = e.sighting_count + v.n, "
            "first_seen_at = CASE WHEN e.first_seen_at IS NULL OR e.first_seen_at > v.first_seen "
            "THEN v.first_seen ELSE e.first_seen_at END, "
            "last_seen_at = CASE WHEN e.last_seen_at IS NULL OR e.last_seen_at < v.last_seen "
            f"THEN v.last_seen ELSE e.last_seen_at END FROM {source} WHERE e.id = v.eid "
            "AND (v.n > 0 OR e.last_seen_at IS NULL OR e.last_seen_at < v.last_seen)"
        ),
        params,
    )
    return sum(len(v) for v in inserted.values())


# Timestamps already as SQLite stores them ("text"): they come back so from RETURNING.
_COUNT_COLUMNS = (("eid", "bigint"), ("n", "int"), ("first_seen", "text"), ("last_seen", "text"))


def entities_sighted_by(
    session: Session, source_kinds: Iterable[str], source_ids: Iterable[str]
) -> set[int]:
    """The entities these sources (any of the kinds with any of the ids) have sighted. No index
    leads with the source: this reads the sightings once, for the rare caller (a session found
    to have worked elsewhere)."""
    S = EntitySighting
    kinds, sources = sorted(set(source_kinds)), sorted(set(source_ids))
    return set(
        session.scalars(
            select(S.entity_id).where(S.source_kind.in_(kinds), S.source_id.in_(sources)).distinct()
        )
    )


def seen_elsewhere(
    session: Session,
    entity_ids: Iterable[int],
    source_kinds: Iterable[str],
    source_ids: Iterable[str],
) -> set[int]:
    """Which of these entities have a sighting from a source other than these (any of the kinds
    with any of the ids: one session's segments, read line by line or triaged)."""
    S = EntitySighting
    ids = sorted(set(entity_ids))
    if not ids:
        return set()
    own = and_(
        S.source_kind.in_(sorted(set(source_kinds))), S.source_id.in_(sorted(set(source_ids)))
    )
    return set(session.scalars(select(S.entity_id).where(S.entity_id.in_(ids), ~own).distinct()))


def move_sightings(session: Session, from_entity: int, to_entity: int) -> None:
    """A merge: the source entity's sightings go to the target, except those the target already
    has (same source and fingerprint), which collapse into the target's; then the target's count
    and first/last seen are recounted from its rows, so the count stays equal to the rows."""
    S = EntitySighting
    twin = aliased(EntitySighting)
    has_twin = (
        select(twin.id)
        .where(
            twin.entity_id == to_entity,
            twin.source_kind == S.source_kind,
            twin.source_id == S.source_id,
            twin.fingerprint == S.fingerprint,
        )
        .exists()
    )
    session.connection().execute(
        update(S).where(S.entity_id == from_entity, ~has_twin).values(entity_id=to_entity)
    )
    session.connection().execute(delete(S).where(S.entity_id == from_entity))
    counted = select(func.count(), func.min(S.seen_at), func.max(S.seen_at)).where(
        S.entity_id == to_entity
    )
    n, first, last = session.execute(counted).one()
    session.connection().execute(
        update(Entity)
        .where(Entity.id == to_entity)
        .values(sighting_count=int(n), first_seen_at=first, last_seen_at=last)
    )
