"""Importer state: importer_seen (restart-safe records) and importer_files (read offsets).

Revision ID: 020
Revises: 019
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "020"
down_revision = "019"
branch_labels = None
depends_on = None

BigInt = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "importer_seen",
        sa.Column("importer_name", sa.String(32), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=False),
        sa.Column("record_id", sa.Text(), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "importer_name", "session_id", "record_id", name="pk_importer_seen"
        ),
    )
    op.create_table(
        "importer_files",
        sa.Column("importer_name", sa.String(32), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("size", BigInt, nullable=False),
        sa.Column("mtime_ns", BigInt, nullable=False),
        sa.Column("offset", BigInt, nullable=False),
        sa.Column("head_hash", sa.String(64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("importer_name", "path", name="pk_importer_files"),
    )


def downgrade() -> None:
    op.drop_table("importer_files")
    op.drop_table("importer_seen")
