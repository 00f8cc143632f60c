"""Tasks belong to their project, and a project's identity includes its repository path.

`entity_candidates.project_path` is the repository of the session a candidate came from (written
by the importers) and `source_line` the line of the source file it rests on; `entities.project_id`
ties a task to its project. `entities.project_key` (NOT NULL DEFAULT '': NULLs are distinct in a
UNIQUE key on both backends) joins the identity: a project's key is a hash of its normalised
repository path, a task's the key of its project, '' when unknown. The hash keeps every index
entry far below PostgreSQL's btree limit, whatever the path's length.

Rows written before this revision get their scope from the repositories of the sessions they
were seen in (`activity_sessions.project_path`, keyed by the session id that candidates and
sightings carry as `source_id`): a candidate takes its session's repository; a project or task
seen in one repository only takes its key (a project its path too), and a task is tied to the
project of that repository. One seen in several repositories stays unscoped (''). Otherwise the
next session of a repository would make a second project and task beside the old ones.

The downgrade refuses, with one line naming them, when a name has several entities (one per
repository): revision 021 holds one entity per (kind, name), and which of them the user means to
keep is the user's call (`yzos-jobs correct … --merge-into …`).

Revision ID: 022
Revises: 021
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from blake3 import blake3

from alembic import op
from yzos_jobs.db.schema_state import RevisionRefused

revision = "022"
down_revision = "021"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

ScopedKey = tuple[str, str, str]  # (kind, normalized_name, project_key), the UNIQUE key
# Which of the entities about to be scoped keep their '' scope, given each one's new key. From
# 021 none need to (021 held one entity per kind and name); a later revision that scopes rows
# left unscoped must spare those whose new key another entity already holds.
KeepUnscoped = Callable[[sa.Connection, dict[int, ScopedKey]], set[int]]


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
    conn = op.get_bind()
    _key_projects_by_path(conn)
    _scope_from_sessions(conn)


_entities = sa.table(
    "entities",
    sa.column("id", BigId),
    sa.column("kind", sa.String),
    sa.column("normalized_name", sa.Text),
    sa.column("project_path", sa.Text),
    sa.column("project_key", sa.String),
    sa.column("project_id", BigId),
)
_candidates = sa.table(
    "entity_candidates",
    sa.column("entity_id", BigId),
    sa.column("source_id", sa.Text),
    sa.column("project_path", sa.Text),
)
_sightings = sa.table(
    "entity_sightings", sa.column("entity_id", BigId), sa.column("source_id", sa.Text)
)
_sessions = sa.table(
    "activity_sessions", sa.column("external_id", sa.Text), sa.column("project_path", sa.Text)
)
# Each session id's repository, for the joins below (a scratch table, dropped at the end).
_scope = sa.table(
    "_migration_session_scope",
    sa.column("external_id", sa.Text),
    sa.column("project_path", sa.Text),
)


def _key_projects_by_path(conn: sa.Connection) -> None:
    e = _entities
    rows = conn.execute(
        sa.select(e.c.id, e.c.project_path).where(
            e.c.kind == "project", e.c.project_path.is_not(None)
        )
    ).all()
    if rows:
        conn.execute(
            sa.update(e)
            .where(e.c.id == sa.bindparam("eid"))
            .values(project_key=sa.bindparam("key")),
            [{"eid": eid, "key": _path_key(path)} for eid, path in rows],
        )


def _session_repositories(conn: sa.Connection) -> dict[str, str]:
    """Each session id with one known repository (an id two repositories share is left out)."""
    paths: dict[str, set[str]] = {}
    for sid, path in conn.execute(
        sa.select(_sessions.c.external_id, _sessions.c.project_path).where(
            _sessions.c.project_path.is_not(None), _sessions.c.project_path != ""
        )
    ):
        paths.setdefault(sid, set()).add(path)
    return {sid: found.pop() for sid, found in paths.items() if len(found) == 1}


def _segments_of(conn: sa.Connection, repositories: dict[str, str]) -> dict[str, str]:
    """The segment ids (`<session>#2`, …: a session's work read after it closed as idle) that
    candidates and sightings carry, each with its session's repository."""
    found: dict[str, str] = {}
    for table in (_candidates, _sightings):
        column = table.c.source_id
        for (sid,) in conn.execute(sa.select(column).where(column.like("%#%")).distinct()):
            session, _, segment = sid.rpartition("#")
            if segment.isdigit() and session in repositories:
                found[sid] = repositories[session]
    return found


def _scope_from_sessions(conn: sa.Connection, keep_unscoped: KeepUnscoped | None = None) -> None:
    repositories = _session_repositories(conn)
    if not repositories:
        return
    repositories |= _segments_of(conn, repositories)
    op.create_table(
        "_migration_session_scope",
        sa.Column("external_id", sa.Text(), primary_key=True),
        sa.Column("project_path", sa.Text(), nullable=False),
    )
    conn.execute(
        sa.insert(_scope), [{"external_id": k, "project_path": v} for k, v in repositories.items()]
    )
    c = _candidates
    of_session = sa.select(_scope.c.project_path).where(_scope.c.external_id == c.c.source_id)
    conn.execute(
        sa.update(c)
        .where(c.c.project_path.is_(None), c.c.source_id.in_(sa.select(_scope.c.external_id)))
        .values(project_path=of_session.scalar_subquery())
    )
    _scope_entities(conn, keep_unscoped)
    op.drop_table("_migration_session_scope")


def _scope_entities(conn: sa.Connection, keep_unscoped: KeepUnscoped | None) -> None:
    """Projects and tasks without a scope take the one repository they were seen in."""
    e, c, s = _entities, _candidates, _sightings
    unscoped = sa.and_(e.c.kind.in_(("project", "task")), e.c.project_key == "")
    identity = (e.c.id, e.c.kind, e.c.normalized_name)
    by_candidates = (
        sa.select(*identity, c.c.project_path)
        .join(c, c.c.entity_id == e.c.id)
        .where(unscoped, c.c.project_path.is_not(None))
    )
    by_sightings = (
        sa.select(*identity, _scope.c.project_path)
        .join(s, s.c.entity_id == e.c.id)
        .join(_scope, _scope.c.external_id == s.c.source_id)
        .where(unscoped)
    )
    seen: dict[int, set[str]] = {}
    names: dict[int, tuple[str, str]] = {}
    for eid, kind, name, path in conn.execute(sa.union(by_candidates, by_sightings)):
        seen.setdefault(eid, set()).add(path)
        names[eid] = (kind, name)
    scoped = {eid: paths.pop() for eid, paths in seen.items() if len(paths) == 1}
    if keep_unscoped is not None and scoped:
        new_keys = {eid: (*names[eid], _path_key(path)) for eid, path in scoped.items()}
        for eid in keep_unscoped(conn, new_keys):
            scoped.pop(eid, None)
    if not scoped:
        return
    kinds = {eid: names[eid][0] for eid in scoped}
    conn.execute(
        sa.update(e)
        .where(e.c.id == sa.bindparam("eid"))
        .values(project_key=sa.bindparam("key"), project_path=sa.bindparam("path")),
        [
            {"eid": eid, "key": _path_key(path), "path": path if kinds[eid] == "project" else None}
            for eid, path in scoped.items()
        ],
    )
    _link_tasks(conn, {eid: path for eid, path in scoped.items() if kinds[eid] == "task"})


def _link_tasks(conn: sa.Connection, task_paths: dict[int, str]) -> None:
    """Each newly scoped task is tied to the project of its repository, if there is one."""
    e = _entities
    projects: dict[str, int] = {}
    for pid, key in conn.execute(
        sa.select(e.c.id, e.c.project_key)
        .where(e.c.kind == "project", e.c.project_key != "")
        .order_by(e.c.id.desc())
    ):
        projects[key] = pid  # the oldest project of a repository wins
    links = [
        {"eid": eid, "pid": projects[_path_key(path)]}
        for eid, path in task_paths.items()
        if _path_key(path) in projects
    ]
    if links:
        conn.execute(
            sa.update(e)
            .where(e.c.id == sa.bindparam("eid"))
            .values(project_id=sa.bindparam("pid")),
            links,
        )


def _refuse_duplicate_names(conn: sa.Connection) -> None:
    e = _entities
    groups = conn.execute(
        sa.select(e.c.kind, e.c.normalized_name, sa.func.count())
        .group_by(e.c.kind, e.c.normalized_name)
        .having(sa.func.count() > 1)
        .order_by(e.c.kind, e.c.normalized_name)
    ).all()
    if not groups:
        return
    named = []
    for kind, name, _ in groups[:5]:
        ids = conn.execute(
            sa.select(e.c.id).where(e.c.kind == kind, e.c.normalized_name == name).order_by(e.c.id)
        ).scalars()
        named.append(f"{kind} {name!r} ({', '.join(f'e:{i}' for i in ids)})")
    more = f" and {len(groups) - 5} more" if len(groups) > 5 else ""
    raise RevisionRefused(
        f"revision 021 holds one entity per kind and name, and {len(groups)} names have several "
        f"(one per repository): {'; '.join(named)}{more}; merge each into one first "
        "(yzos-jobs correct e:ID --merge-into e:ID), then downgrade"
    )


def downgrade() -> None:
    _refuse_duplicate_names(op.get_bind())
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
