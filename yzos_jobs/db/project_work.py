"""What an import reads of a project's work before it proposes more: the names of the task
candidates still waiting to be promoted, under a lock that makes imports of one project by
several daemons take turns.

Without the lock, two daemons importing sessions of one repository at once would each read the
open tasks before the other's proposals were written, and propose the same work twice under
names close enough to be one task (`importers/same_work.py`).
"""

from __future__ import annotations

from collections.abc import Iterable

from blake3 import blake3
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import is_postgres
from yzos_jobs.db.models import Entity, EntityCandidate

# Candidates a promote run has not decided yet: waiting for it, or claimed by it
_WAITING = ("pending", "claimed")


def lock_projects(session: Session, keys: Iterable[str]) -> None:
    """On PostgreSQL, hold each project's lock until the caller's transaction ends, taken in one
    order. A transaction that takes them more than once (a batch written again record by
    record) may wait in a circle with another: PostgreSQL ends one of the two as a deadlock and
    `run_in_transaction` runs it again. SQLite has one writer at a time: nothing to take."""
    if not is_postgres(session):
        return
    for lock_key in sorted({project_lock_key(k) for k in keys if k}):
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": lock_key})


def project_lock_key(project_key: str) -> int:
    """A signed 64-bit advisory lock key for a project key."""
    digest = blake3(b"yzos-jobs project work\0" + project_key.encode()).digest(8)
    return int.from_bytes(digest, "big", signed=True)


def waiting_task_names(session: Session, project_paths: Iterable[str], limit: int) -> list[str]:
    """The names of task candidates of these project paths waiting for a promote run (or in
    one), newest first, at most `limit`. Held ones, waiting for their session's triage, are left
    to the model: they may be many, where these are what promote has not reached yet."""
    paths = sorted(set(project_paths))
    if not paths or limit <= 0:
        return []
    C = EntityCandidate
    rows = session.scalars(
        select(C.raw_text)
        .where(
            C.status.in_(_WAITING),
            C.suggested_kind == "task",
            C.project_path.in_(paths),
        )
        .order_by(C.id.desc())
        .limit(limit)
    )
    return list(dict.fromkeys(rows))


def last_entity_id(session: Session) -> int:
    """The newest entity's id (0 with none): tasks made after it are read by `tasks_made_after`."""
    return int(session.scalar(select(func.max(Entity.id))) or 0)


def tasks_made_after(session: Session, key: str, after_id: int) -> list[tuple[int, str]]:
    """(id, name) of the active tasks of the project with this key made after `after_id`, newest
    first: read by the primary key, so only the entities made since are looked at (a project's
    open tasks, read whole, are once per import)."""
    rows = session.execute(
        select(Entity.id, Entity.display_name)
        .where(
            Entity.id > after_id,
            Entity.kind == "task",
            Entity.status == "active",
            Entity.project_key == key,
        )
        .order_by(Entity.id.desc())
    )
    return [(int(eid), name) for eid, name in rows]
