"""Baseline: the schema before sighting uniqueness, app metadata, importer state and job runs.

Revision ID: 017
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision = "017"
down_revision = None
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "entities",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("display_name", sa.Text(), nullable=False),
        sa.Column("normalized_name", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default=sa.text("'active'")),
        sa.Column("summary", sa.Text()),
        sa.Column("okf", Json),
        sa.Column("project_path", sa.Text()),
        sa.Column("confidence", sa.Float()),
        sa.Column("verdict_source", sa.String(32)),
        sa.Column("classified_model", sa.Text()),
        sa.Column("classified_at", Ts),
        sa.Column("sighting_count", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("first_seen_at", Ts),
        sa.Column("last_seen_at", Ts),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_entities"),
        sa.UniqueConstraint("kind", "normalized_name", name="uq_entities_kind_normalized_name"),
        sa.CheckConstraint("kind IN ('person', 'project', 'task')", name="ck_entities_kind"),
        sa.CheckConstraint("status IN ('active', 'archived')", name="ck_entities_status"),
    )
    op.create_index("ix_entities_project_path", "entities", ["project_path"])
    op.create_index(
        "ix_entities_status_verdict_source_classified_at",
        "entities",
        ["status", "verdict_source", "classified_at"],
    )

    op.create_table(
        "entity_candidates",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("raw_text", sa.Text(), nullable=False),
        sa.Column("suggested_kind", sa.String(16)),
        sa.Column("source_kind", sa.String(32), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("app_bundle_id", sa.Text()),
        sa.Column("surrounding_text", sa.Text()),
        sa.Column("status", sa.String(16), nullable=False, server_default=sa.text("'pending'")),
        sa.Column("claimed_by", sa.Text()),
        sa.Column("lease_until", Ts),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("entity_id", BigId),
        sa.Column("verdict", Json),
        sa.Column("reject_reason", sa.Text()),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("decided_at", Ts),
        sa.PrimaryKeyConstraint("id", name="pk_entity_candidates"),
        sa.ForeignKeyConstraint(
            ["entity_id"],
            ["entities.id"],
            ondelete="SET NULL",
            name="fk_entity_candidates_entity_id_entities",
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'claimed', 'promoted', 'rejected')",
            name="ck_entity_candidates_status",
        ),
        sa.CheckConstraint(
            "suggested_kind IS NULL OR suggested_kind IN ('person', 'project', 'task')",
            name="ck_entity_candidates_suggested_kind",
        ),
    )
    op.create_index("ix_entity_candidates_status_id", "entity_candidates", ["status", "id"])
    op.create_index(
        "ix_entity_candidates_status_lease_until", "entity_candidates", ["status", "lease_until"]
    )
    op.create_index(
        "ix_entity_candidates_source_kind_source_id",
        "entity_candidates",
        ["source_kind", "source_id"],
    )

    op.create_table(
        "entity_sightings",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("entity_id", BigId, nullable=False),
        sa.Column("source_kind", sa.String(32), nullable=False),
        sa.Column("source_id", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text()),
        sa.Column("seen_at", Ts, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_entity_sightings"),
        sa.ForeignKeyConstraint(
            ["entity_id"],
            ["entities.id"],
            ondelete="CASCADE",
            name="fk_entity_sightings_entity_id_entities",
        ),
    )
    op.create_index("ix_entity_sightings_entity_id", "entity_sightings", ["entity_id"])

    op.create_table(
        "entity_overrides",
        sa.Column("entity_id", BigId, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text()),
        sa.Column("set_by", sa.Text(), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.PrimaryKeyConstraint("entity_id", name="pk_entity_overrides"),
        sa.ForeignKeyConstraint(
            ["entity_id"],
            ["entities.id"],
            ondelete="CASCADE",
            name="fk_entity_overrides_entity_id_entities",
        ),
        sa.CheckConstraint("status IN ('active', 'archived')", name="ck_entity_overrides_status"),
    )

    op.create_table(
        "activity_sessions",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("source_kind", sa.String(32), nullable=False),
        sa.Column("external_id", sa.Text(), nullable=False),
        sa.Column("project_path", sa.Text()),
        sa.Column("started_at", Ts),
        sa.Column("ended_at", Ts),
        sa.Column("status", sa.String(16), nullable=False, server_default=sa.text("'open'")),
        sa.PrimaryKeyConstraint("id", name="pk_activity_sessions"),
        sa.UniqueConstraint(
            "source_kind", "external_id", name="uq_activity_sessions_source_kind_external_id"
        ),
        sa.CheckConstraint("status IN ('open', 'ended')", name="ck_activity_sessions_status"),
    )


def downgrade() -> None:
    op.drop_table("activity_sessions")
    op.drop_table("entity_overrides")
    op.drop_table("entity_sightings")
    op.drop_table("entity_candidates")
    op.drop_table("entities")
