"""Rows that revision 022 left unscoped take their sessions' repositories.

Revision 022 once added the scope columns without filling them for rows already there; a database
that ran it then holds candidates without a repository and projects and tasks with an empty
`project_key`, and the next session of a repository makes a second task beside the old one. This
revision runs 022's backfill (its own functions, loaded through Alembic's script directory) over
what is still unscoped: a candidate takes its session's repository; a project or task seen in
one repository only takes its key (a project its path too), and a task is tied to that
repository's project.

One whose scoped key is already held, by an entity of the same kind and name in that repository
(the UNIQUE key would fail) or by an alias of another entity, stays unscoped: the two are the
user's to merge (`yzos-jobs correct e:ID --merge-into e:ID`). An alias of an entity's own new key
is dropped, as the key names that entity again. The downgrade changes nothing: only data moved.

Revision ID: 027
Revises: 026
"""

from __future__ import annotations

import sqlalchemy as sa

from alembic import context, op

revision = "027"
down_revision = "026"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
ScopedKey = tuple[str, str, str]  # (kind, normalized_name, project_key)

_entities = sa.table(
    "entities",
    sa.column("id", BigId),
    sa.column("kind", sa.String),
    sa.column("normalized_name", sa.Text),
    sa.column("project_key", sa.String),
)
_aliases = sa.table(
    "entity_aliases",
    sa.column("kind", sa.String),
    sa.column("normalized_name", sa.Text),
    sa.column("project_key", sa.String),
    sa.column("entity_id", BigId),
)


def upgrade() -> None:
    scoping = context.script.get_revision("022").module
    conn = op.get_bind()
    scoping._scope_from_sessions(conn, keep_unscoped=_keys_held_by_others)
    _drop_aliases_of_own_keys(conn)


def _keys_held_by_others(conn: sa.Connection, new_keys: dict[int, ScopedKey]) -> set[int]:
    """The entities whose new key an entity or another entity's alias already holds."""
    e, a = _entities, _aliases
    holders: dict[ScopedKey, int] = {}
    for kind, name, key, eid in conn.execute(
        sa.select(e.c.kind, e.c.normalized_name, e.c.project_key, e.c.id).where(
            e.c.kind.in_(("project", "task")), e.c.project_key != ""
        )
    ):
        holders[(kind, name, key)] = eid
    for kind, name, key, eid in conn.execute(
        sa.select(a.c.kind, a.c.normalized_name, a.c.project_key, a.c.entity_id).where(
            a.c.project_key != ""
        )
    ):
        holders.setdefault((kind, name, key), eid)
    return {eid for eid, key in new_keys.items() if holders.get(key, eid) != eid}


def _drop_aliases_of_own_keys(conn: sa.Connection) -> None:
    """An alias naming its own entity's key: the key names that entity itself."""
    e, a = _entities.alias("e"), _aliases
    own = (
        sa.select(sa.literal(1))
        .where(
            e.c.id == a.c.entity_id,
            e.c.kind == a.c.kind,
            e.c.normalized_name == a.c.normalized_name,
            e.c.project_key == a.c.project_key,
        )
        .exists()
    )
    conn.execute(sa.delete(a).where(own))


def downgrade() -> None:
    pass
