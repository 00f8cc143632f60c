"""Name aliases: a (kind, normalized_name, project_key) merged away, renamed or re-kinded keeps
resolving to the entity it now belongs to, so later candidates of the old name land there."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, select, text, update
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import chunks, is_postgres, pg_rows, upsert_insert
from yzos_jobs.db.models import EntityAlias
from yzos_jobs.kinds import ENTITY_KINDS

A = EntityAlias
AliasKey = tuple[str, str, str]  # (kind, normalized_name, project_key), as an entity's key


def resolve_aliases(session: Session, keys: Sequence[AliasKey]) -> dict[AliasKey, int]:
    """The entity each of these keys is an alias of (keys without an alias are left out)."""
    found: dict[AliasKey, int] = {}
    if not keys:
        return found
    if is_postgres(session):
        source, params = pg_rows(
            (("kind", "text"), ("normalized_name", "text"), ("project_key", "text")),
            [{"kind": k, "normalized_name": n, "project_key": p} for k, n, p in keys],
        )
        rows = session.connection().execute(
            text(
                "SELECT a.kind, a.normalized_name, a.project_key, a.entity_id "
                f"FROM entity_aliases AS a JOIN {source} ON a.kind = v.kind "
                "AND a.normalized_name = v.normalized_name AND a.project_key = v.project_key"
            ),
            params,
        )
        return {(k, n, p): int(eid) for k, n, p, eid in rows}
    # SQLite: most databases have no alias at all, which one probe tells; otherwise probe the
    # UNIQUE key's index by kind and name, and match the scope here.
    if session.connection().execute(select(A.id).limit(1)).first() is None:
        return found
    wanted = set(keys)
    names = sorted({n for _, n, _ in wanted})
    for chunk in chunks(names):
        rows = session.connection().execute(
            select(A.kind, A.normalized_name, A.project_key, A.entity_id).where(
                A.kind.in_(ENTITY_KINDS), A.normalized_name.in_(chunk)
            )
        )
        found.update({(k, n, p): int(eid) for k, n, p, eid in rows if (k, n, p) in wanted})
    return found


def add_alias(session: Session, key: AliasKey, entity_id: int, set_by: str, now: datetime) -> None:
    """`key` resolves to `entity_id` from now on (an older alias of that key is repointed)."""
    kind, normalized, project_key = key
    stmt = upsert_insert(session, A).values(
        kind=kind,
        normalized_name=normalized,
        project_key=project_key,
        entity_id=entity_id,
        set_by=set_by,
        created_at=now,
    )
    session.execute(
        stmt.on_conflict_do_update(
            index_elements=["kind", "normalized_name", "project_key"],
            set_={"entity_id": entity_id, "set_by": set_by, "created_at": now},
        )
    )


def drop_alias(session: Session, key: AliasKey) -> None:
    """The key names an entity of its own again (a rename or re-kind landed on it)."""
    kind, normalized, project_key = key
    session.execute(
        delete(A).where(
            A.kind == kind, A.normalized_name == normalized, A.project_key == project_key
        )
    )


def repoint_aliases(session: Session, from_entity: int, to_entity: int) -> None:
    """The aliases of an entity merged away follow it to its target."""
    session.execute(update(A).where(A.entity_id == from_entity).values(entity_id=to_entity))


def aliases_named(session: Session, normalized_name: str) -> list[int]:
    """The entities a name is an alias of, in any kind or scope (the UNIQUE key's index serves
    the lookup: one probe per kind)."""
    rows = session.scalars(
        select(A.entity_id)
        .where(A.kind.in_(ENTITY_KINDS), A.normalized_name == normalized_name)
        .order_by(A.entity_id)
    )
    return list(dict.fromkeys(rows))


def aliases_of(session: Session, entity_id: int, limit: int = 50) -> list[AliasKey]:
    rows = session.execute(
        select(A.kind, A.normalized_name, A.project_key)
        .where(A.entity_id == entity_id)
        .order_by(A.id)
        .limit(limit)
    )
    return [(k, n, p) for k, n, p in rows]
