"""Operations: jobs paused by an operator, and the LLM usage of each UTC day that the daily
token and call budgets are counted against (one row per day, shared by every daemon).

Revision ID: 026
Revises: 025
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import op

revision = "026"
down_revision = "025"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "job_pauses",
        sa.Column("job_name", sa.String(64), nullable=False),
        sa.Column("paused_by", sa.Text(), nullable=False),
        sa.Column("paused_at", Ts, nullable=False),
        sa.PrimaryKeyConstraint("job_name", name="pk_job_pauses"),
    )
    op.create_table(
        "llm_usage_days",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("prompt_tokens", BigId, nullable=False, server_default=sa.text("0")),
        sa.Column("completion_tokens", BigId, nullable=False, server_default=sa.text("0")),
        sa.Column("calls", BigId, nullable=False, server_default=sa.text("0")),
        sa.Column("unknown_usage_calls", BigId, nullable=False, server_default=sa.text("0")),
        sa.Column("updated_at", Ts, nullable=False),
        sa.PrimaryKeyConstraint("day", name="pk_llm_usage_days"),
    )


def downgrade() -> None:
    op.drop_table("llm_usage_days")
    op.drop_table("job_pauses")
