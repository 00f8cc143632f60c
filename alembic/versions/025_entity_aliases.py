"""Name aliases: a name merged away (user `correct --merge-into`, `--rename`, `--kind`) keeps
resolving to the entity it was merged into.

Revision ID: 025
Revises: 024
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "025"
down_revision = "024"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "entity_aliases",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("normalized_name", sa.Text(), nullable=False),
        sa.Column("project_key", sa.String(64), nullable=False, server_default=sa.text("''")),
        sa.Column("entity_id", BigId, nullable=False),
        sa.Column("set_by", sa.Text(), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_entity_aliases"),
        sa.ForeignKeyConstraint(
            ["entity_id"],
            ["entities.id"],
            ondelete="CASCADE",
            name="fk_entity_aliases_entity_id_entities",
        ),
        sa.UniqueConstraint(
            "kind",
            "normalized_name",
            "project_key",
            name="uq_entity_aliases_kind_normalized_name_project_key",
        ),
    )
    op.create_index("ix_entity_aliases_entity_id", "entity_aliases", ["entity_id"])


def downgrade() -> None:
    op.drop_table("entity_aliases")
