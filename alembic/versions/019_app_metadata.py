"""App metadata (bundle id, name, category), upserted on every app observation.

Revision ID: 019
Revises: 018
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "019"
down_revision = "018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "app_metadata",
        sa.Column("bundle_id", sa.Text(), nullable=False),
        sa.Column("bundle_name", sa.Text()),
        sa.Column("category", sa.Text()),
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("bundle_id", name="pk_app_metadata"),
    )


def downgrade() -> None:
    op.drop_table("app_metadata")
