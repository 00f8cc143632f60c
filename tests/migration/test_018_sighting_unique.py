"""Revision 018 on a populated database: backfill, collapse duplicates, then a UNIQUE key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from blake3 import blake3
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from yzos_jobs.db import migrate
from yzos_jobs.db.connection import create_db_engine

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _insert_entity(conn, name: str, count: int) -> int:
    conn.execute(
        text(
            "INSERT INTO entities (kind, display_name, normalized_name, status, sighting_count,"
            " created_at, updated_at) VALUES ('project', :n, :nn, 'active', :c, :t, :t)"
        ),
        {"n": name, "nn": name.lower(), "c": count, "t": T0},
    )
    return conn.execute(
        text("SELECT id FROM entities WHERE display_name = :n"), {"n": name}
    ).scalar_one()


def _insert_sighting(
    conn, entity_id: int, source_id: str, summary: str | None, minutes: int
) -> None:
    conn.execute(
        text(
            "INSERT INTO entity_sightings (entity_id, source_kind, source_id, summary, seen_at)"
            " VALUES (:e, 'ai_tool', :s, :m, :t)"
        ),
        {"e": entity_id, "s": source_id, "m": summary, "t": T0 + timedelta(minutes=minutes)},
    )


def test_018_collapses_duplicates_and_adds_unique_key(empty_db_url: str) -> None:
    engine = create_db_engine(empty_db_url)
    try:
        migrate.upgrade(engine, "017")
        with engine.begin() as conn:
            a = _insert_entity(conn, "YZOS Core", 5)
            b = _insert_entity(conn, "Alpha", 2)
            # a: three copies of one sighting (earliest at minute 1), one other, one null summary
            _insert_sighting(conn, a, "s1", "refactor classifier", 3)
            _insert_sighting(conn, a, "s1", "refactor classifier", 1)
            _insert_sighting(conn, a, "s1", "refactor classifier", 2)
            _insert_sighting(conn, a, "s2", "review", 4)
            _insert_sighting(conn, a, "s3", None, 5)
            # b: two distinct sightings, no duplicate; its count is left alone
            _insert_sighting(conn, b, "s1", "refactor classifier", 1)
            _insert_sighting(conn, b, "s9", "x", 1)
        migrate.upgrade(engine, "018")
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT entity_id, source_id, summary, seen_at, fingerprint"
                    " FROM entity_sightings"
                    " ORDER BY entity_id, source_id"
                )
            ).all()
            counts = dict(conn.execute(text("SELECT id, sighting_count FROM entities")).all())
        assert [(r.entity_id, r.source_id) for r in rows] == [
            (a, "s1"),
            (a, "s2"),
            (a, "s3"),
            (b, "s1"),
            (b, "s9"),
        ]
        kept = rows[0]
        assert str(kept.seen_at).startswith("2026-01-01 00:01")  # the earliest copy is kept
        for r in rows:
            expected = blake3((r.source_id + (r.summary or "")).encode()).hexdigest()
            assert r.fingerprint == expected
        assert counts == {a: 3, b: 2}
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO entity_sightings"
                    " (entity_id, source_kind, source_id, summary, seen_at, fingerprint)"
                    " VALUES (:e, 'ai_tool', 's1', 'refactor classifier', :t, :f)"
                ),
                {"e": a, "t": T0, "f": kept.fingerprint},
            )
    finally:
        engine.dispose()


def test_018_backfills_more_rows_than_one_batch(empty_db_url: str) -> None:
    engine = create_db_engine(empty_db_url)
    try:
        migrate.upgrade(engine, "017")
        with engine.begin() as conn:
            e = _insert_entity(conn, "Big", 12000)
            conn.execute(
                text(
                    "INSERT INTO entity_sightings"
                    " (entity_id, source_kind, source_id, summary, seen_at)"
                    " VALUES (:e, 'clipboard', :s, 'same', :t)"
                ),
                [{"e": e, "s": f"src-{i % 6000}", "t": T0} for i in range(12000)],
            )
        migrate.upgrade(engine, "head")
        with engine.connect() as conn:
            n = conn.execute(text("SELECT count(*) FROM entity_sightings")).scalar_one()
            missing = conn.execute(
                text("SELECT count(*) FROM entity_sightings WHERE fingerprint IS NULL")
            ).scalar_one()
            count = conn.execute(text("SELECT sighting_count FROM entities")).scalar_one()
        assert (n, missing, count) == (6000, 0, 6000)
    finally:
        engine.dispose()
