"""The decision trail: one row per verdict that changed or confirmed a candidate's or an
entity's state, written in the transaction of that change (what `yzos-jobs explain` shows).
Indexed for an entity's trail, a candidate's, retention by age, and the user's corrections.

Revision ID: 023
Revises: 022
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision = "023"
down_revision = "022"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
Ts = sa.DateTime(timezone=True)

CALL_SITES = (
    "promote_candidate",
    "merge_or_create_project",
    "merge_or_create_task",
    "apply_entities",
    "entity_purge_v06",
    "user",
)
SOURCES = ("llm", "cache", "fallback", "dry_run", "user")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def upgrade() -> None:
    # No foreign keys on candidate_id, entity_id, job_run_id: the trail is an append-only log
    # written for every decided candidate, where checking references would cost more than
    # writing the row (a merge moves an entity's rows before the entity goes).
    op.create_table(
        "decisions",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("candidate_id", BigId),
        sa.Column("entity_id", BigId),
        sa.Column("call_site", sa.String(32), nullable=False),
        sa.Column("job_run_id", BigId),
        sa.Column("verdict", Json),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("model", sa.Text()),
        sa.Column("prompt_version", sa.String(64)),
        sa.Column("latency_ms", sa.Integer()),
        sa.Column("outcome", sa.String(32)),
        sa.Column("created_at", Ts, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_decisions"),
        sa.CheckConstraint(_in("call_site", CALL_SITES), name="ck_decisions_call_site"),
        sa.CheckConstraint(_in("source", SOURCES), name="ck_decisions_source"),
    )
    op.create_index("ix_decisions_entity_id_id", "decisions", ["entity_id", "id"])
    op.create_index("ix_decisions_candidate_id", "decisions", ["candidate_id"])
    # Retention deletes by age; rows arrive in time order (inserts go to the index's last page).
    op.create_index("ix_decisions_created_at", "decisions", ["created_at"])
    # The user's corrections, newest first: the judge's worked examples.
    op.create_index("ix_decisions_call_site_id", "decisions", ["call_site", "id"])


def downgrade() -> None:
    op.drop_table("decisions")
