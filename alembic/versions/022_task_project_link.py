"""Tasks belong to their project, and a project's identity includes its repository path.

`entity_candidates.project_path` is the repository of the session a candidate came from (written
by the importers) and `source_line` the line of the source file it rests on; `entities.project_id`
ties a task to its project. `entities.project_key` (NOT NULL DEFAULT '': NULLs are distinct in a
UNIQUE key on both backends) joins the identity: a project's key is a hash of its normalised
repository path, a task's the key of its project, '' when unknown. The hash keeps every index
entry far below PostgreSQL's btree limit, whatever the path's length.

Revision ID: 022
Revises: 021
"""

from __future__ import annotations

import sqlalchemy as sa
from blake3 import blake3

from alembic import op

revision = "022"
down_revision = "021"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _path_key(path: str) -> str:
    # Frozen copy of yzos_jobs.db.entities.project_key as of this revision.
    return blake3(path.encode("utf-8")).hexdigest()[:32]


def upgrade() -> None:
    with op.batch_alter_table("entity_candidates") as batch:
        batch.add_column(sa.Column("project_path", sa.Text()))
        batch.add_column(sa.Column("source_line", sa.Integer()))
        # What an entity was seen with (its app, for the purge) and merges look candidates up
        # by entity.
        batch.create_index("ix_entity_candidates_entity_id", ["entity_id"])
    with op.batch_alter_table("entities") as batch:
        batch.add_column(sa.Column("project_id", BigId))
        batch.add_column(
            sa.Column("project_key", sa.String(64), nullable=False, server_default=sa.text("''"))
        )
        batch.create_foreign_key(
            "fk_entities_project_id_entities",
            "entities",
            ["project_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch.drop_constraint("uq_entities_kind_normalized_name", type_="unique")
        batch.create_unique_constraint(
            "uq_entities_kind_normalized_name_project_key",
            ["kind", "normalized_name", "project_key"],
        )
        batch.create_index("ix_entities_project_id", ["project_id"])
        batch.create_index("ix_entities_project_key", ["project_key"])
    entities = sa.table(
        "entities",
        sa.column("id", BigId),
        sa.column("kind", sa.String),
        sa.column("project_path", sa.Text),
        sa.column("project_key", sa.String),
    )
    conn = op.get_bind()
    rows = conn.execute(
        sa.select(entities.c.id, entities.c.project_path).where(
            entities.c.kind == "project", entities.c.project_path.is_not(None)
        )
    ).all()
    if rows:
        conn.execute(
            sa.update(entities)
            .where(entities.c.id == sa.bindparam("eid"))
            .values(project_key=sa.bindparam("key")),
            [{"eid": eid, "key": _path_key(path)} for eid, path in rows],
        )


def downgrade() -> None:
    with op.batch_alter_table("entities") as batch:
        batch.drop_index("ix_entities_project_key")
        batch.drop_index("ix_entities_project_id")
        batch.drop_constraint("uq_entities_kind_normalized_name_project_key", type_="unique")
        batch.create_unique_constraint(
            "uq_entities_kind_normalized_name", ["kind", "normalized_name"]
        )
        batch.drop_constraint("fk_entities_project_id_entities", type_="foreignkey")
        batch.drop_column("project_key")
        batch.drop_column("project_id")
    with op.batch_alter_table("entity_candidates") as batch:
        batch.drop_index("ix_entity_candidates_entity_id")
        batch.drop_column("source_line")
        batch.drop_column("project_path")
