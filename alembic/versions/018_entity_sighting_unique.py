"""Sighting uniqueness: fingerprint = blake3(source_id ‖ summary), duplicates collapsed, UNIQUE key.

Works on a populated database: the backfill walks the table in bounded batches by primary key,
duplicates are deleted in SQL keeping the earliest sighting, and the affected entities'
sighting_count is recounted from the rows that remain.

Revision ID: 018
Revises: 017
"""

from __future__ import annotations

import sqlalchemy as sa
from blake3 import blake3

from alembic import op

revision = "018"
down_revision = "017"
branch_labels = None
depends_on = None

BATCH = 5000
UNIQUE_NAME = "uq_entity_sightings_entity_id_source_kind_source_id_fingerprint"
DEDUP_INDEX = "ix_entity_sightings_dedup_tmp"


def fingerprint(source_id: str, summary: str | None) -> str:
    return blake3((source_id + (summary or "")).encode("utf-8")).hexdigest()


def _backfill(conn: sa.Connection) -> None:
    last_id = 0
    select = sa.text(
        "SELECT id, source_id, summary FROM entity_sightings "
        "WHERE id > :last AND fingerprint IS NULL ORDER BY id LIMIT :n"
    )
    update = sa.text("UPDATE entity_sightings SET fingerprint = :fp WHERE id = :id")
    while True:
        rows = conn.execute(select, {"last": last_id, "n": BATCH}).all()
        if not rows:
            return
        conn.execute(
            update, [{"fp": fingerprint(r.source_id, r.summary), "id": r.id} for r in rows]
        )
        last_id = rows[-1].id


def _collapse_duplicates(conn: sa.Connection) -> None:
    op.create_index(
        DEDUP_INDEX, "entity_sightings", ["entity_id", "source_kind", "source_id", "fingerprint"]
    )
    affected = [
        row[0]
        for row in conn.execute(
            sa.text(
                "SELECT DISTINCT entity_id FROM entity_sightings "
                "GROUP BY entity_id, source_kind, source_id, fingerprint HAVING count(*) > 1"
            )
        )
    ]
    conn.execute(
        sa.text(
            "DELETE FROM entity_sightings WHERE EXISTS ("
            " SELECT 1 FROM entity_sightings AS e"
            " WHERE e.entity_id = entity_sightings.entity_id"
            " AND e.source_kind = entity_sightings.source_kind"
            " AND e.source_id = entity_sightings.source_id"
            " AND e.fingerprint = entity_sightings.fingerprint"
            " AND (e.seen_at < entity_sightings.seen_at"
            "      OR (e.seen_at = entity_sightings.seen_at AND e.id < entity_sightings.id)))"
        )
    )
    recount = sa.text(
        "UPDATE entities SET sighting_count = "
        "(SELECT count(*) FROM entity_sightings s WHERE s.entity_id = entities.id) "
        "WHERE id IN :ids"
    ).bindparams(sa.bindparam("ids", expanding=True))
    for start in range(0, len(affected), 1000):
        conn.execute(recount, {"ids": affected[start : start + 1000]})
    op.drop_index(DEDUP_INDEX, table_name="entity_sightings")


def upgrade() -> None:
    conn = op.get_bind()
    op.add_column("entity_sightings", sa.Column("fingerprint", sa.String(64), nullable=True))
    _backfill(conn)
    _collapse_duplicates(conn)
    with op.batch_alter_table("entity_sightings") as batch:
        batch.alter_column("fingerprint", existing_type=sa.String(64), nullable=False)
        batch.create_unique_constraint(
            UNIQUE_NAME, ["entity_id", "source_kind", "source_id", "fingerprint"]
        )


def downgrade() -> None:
    with op.batch_alter_table("entity_sightings") as batch:
        batch.drop_constraint(UNIQUE_NAME, type_="unique")
        batch.drop_column("fingerprint")
