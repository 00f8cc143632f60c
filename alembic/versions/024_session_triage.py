"""Session triage: each closed coding session (or segment of one) and each JSONL `triage`
record waits here, with its state and attempts, until `entity_promote` has applied it. While a
session waits, its line-level candidates are `held` (no job claims them).

Revision ID: 024
Revises: 023
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision = "024"
down_revision = "023"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
Ts = sa.DateTime(timezone=True)

OLD_STATUSES = "status IN ('pending', 'claimed', 'promoted', 'rejected')"
# 017 named it twice over (its name went through the naming convention once more).
OLD_NAME = "ck_entity_candidates_ck_entity_candidates_status"
NEW_NAME = "ck_entity_candidates_status"
NEW_STATUSES = "status IN ('pending', 'held', 'claimed', 'promoted', 'rejected')"


def upgrade() -> None:
    with op.batch_alter_table("entity_candidates") as batch:
        batch.drop_constraint(op.f(OLD_NAME), type_="check")
        batch.create_check_constraint(op.f(NEW_NAME), NEW_STATUSES)
    op.create_table(
        "session_triage",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("activity_session_id", BigId, nullable=False),
        sa.Column("part", sa.Text(), nullable=False, server_default=sa.text("''")),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("payload", Json, nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default=sa.text("'pending'")),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default=sa.text("0")),
        sa.Column("claimed_by", sa.Text()),
        sa.Column("lease_until", Ts),
        sa.Column("error", sa.Text()),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("finished_at", Ts),
        sa.PrimaryKeyConstraint("id", name="pk_session_triage"),
        sa.ForeignKeyConstraint(
            ["activity_session_id"],
            ["activity_sessions.id"],
            ondelete="CASCADE",
            name="fk_session_triage_activity_session_id_activity_sessions",
        ),
        sa.UniqueConstraint(
            "activity_session_id", "part", name="uq_session_triage_activity_session_id_part"
        ),
        sa.CheckConstraint("kind IN ('digest', 'proposals')", name="ck_session_triage_kind"),
        sa.CheckConstraint(
            "status IN ('pending', 'claimed', 'done', 'exhausted')",
            name="ck_session_triage_status",
        ),
    )
    op.create_index("ix_session_triage_status_id", "session_triage", ["status", "id"])


def downgrade() -> None:
    op.drop_table("session_triage")
    # Held candidates go back to the queue: without triage nothing would ever release them.
    op.execute("UPDATE entity_candidates SET status = 'pending' WHERE status = 'held'")
    with op.batch_alter_table("entity_candidates") as batch:
        batch.drop_constraint(op.f(NEW_NAME), type_="check")
        batch.create_check_constraint(op.f(OLD_NAME), OLD_STATUSES)
