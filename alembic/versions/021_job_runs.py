"""Job runs (one row per job and time slot) and the classifier's verdict cache.

Revision ID: 021
Revises: 020
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision = "021"
down_revision = "020"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "job_runs",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("job_name", sa.String(64), nullable=False),
        sa.Column("slot", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("started_at", Ts, nullable=False),
        sa.Column("finished_at", Ts),
        sa.Column("lease_until", Ts),
        sa.Column("stats", Json),
        sa.Column("error", sa.Text()),
        sa.PrimaryKeyConstraint("id", name="pk_job_runs"),
        sa.UniqueConstraint("job_name", "slot", name="uq_job_runs_job_name_slot"),
        sa.CheckConstraint(
            "status IN ('running', 'succeeded', 'failed')", name="ck_job_runs_status"
        ),
    )
    op.create_index("ix_job_runs_job_name_started_at", "job_runs", ["job_name", "started_at"])
    op.create_table(
        "verdict_cache",
        sa.Column("model_id", sa.Text(), nullable=False),
        sa.Column("prompt_version", sa.String(32), nullable=False),
        sa.Column("input_hash", sa.String(64), nullable=False),
        sa.Column("verdict", Json, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("expires_at", Ts, nullable=False),
        sa.PrimaryKeyConstraint(
            "model_id", "prompt_version", "input_hash", name="pk_verdict_cache"
        ),
    )
    op.create_index("ix_verdict_cache_expires_at", "verdict_cache", ["expires_at"])


def downgrade() -> None:
    op.drop_table("verdict_cache")
    op.drop_table("job_runs")
