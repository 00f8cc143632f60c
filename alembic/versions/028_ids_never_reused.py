"""On SQLite, an entity's or a candidate's id is never given again.

SQLite gives a new row the largest id in the table plus one, so the id of the newest entity,
deleted by a merge (`correct e:ID --merge-into e:ID`), went to the next entity made: a script's
`e:ID`, an exported id or the decision trail (whose rows keep the id) then named another entity.
With AUTOINCREMENT SQLite keeps the largest id it ever gave (in `sqlite_sequence`) and never goes
below it. The two tables are rebuilt with it (SQLite cannot add it to a table), their rows, ids,
constraints and indexes kept. PostgreSQL's sequences never give an id again: nothing to do there.

Revision ID: 028
Revises: 027
"""

from __future__ import annotations

from alembic import op

revision = "028"
down_revision = "027"
branch_labels = None
depends_on = None

# The tables whose ids a person types (`e:ID`, `c:ID`) and the decision trail keeps.
TABLES = ("entities", "entity_candidates")


def _rebuild(autoincrement: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table in TABLES:
        with op.batch_alter_table(
            table, recreate="always", table_kwargs={"sqlite_autoincrement": autoincrement}
        ):
            pass


def upgrade() -> None:
    _rebuild(autoincrement=True)


def downgrade() -> None:
    _rebuild(autoincrement=False)
