"""What an import on PostgreSQL reads of a project's work before it proposes more: the names of
the task candidates still waiting to be promoted and of the tasks made since its last read,
under a lock that makes imports of one project by several daemons take turns.

Without the lock, two daemons importing sessions of one repository at once would each read the
open tasks before the other's proposals were written, and propose the same work twice under
names close enough to be one task (`importers/same_work.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from blake3 import blake3
from sqlalchemy import func, literal, select, text, union_all
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


@dataclass(frozen=True)
class ProjectWork:
    """What a batch reads of a project: the names of task candidates waiting for a promote run
    (or in one), newest first; the active tasks made after the id it was given, newest first;
    and the newest entity's id, where the next read starts."""

    waiting: list[str]
    made: list[str]
    last_entity_id: int
    open: list[str]  # where asked for: the project's active tasks, most recently seen first


def project_work(
    session: Session,
    key: str,
    project_paths: Iterable[str],
    after_id: int,
    limit: int,
    *,
    open_tasks: bool = False,
) -> ProjectWork:
    """One statement (a batch's reads cost one round trip per project): the waiting candidates
    of these paths (the newest `limit`; held ones, waiting for their session's triage, are left to
    the model: they may be many) and the tasks of the project with `key` made after `after_id`,
    read by the primary key, so only the entities made since are looked at."""
    C, E = EntityCandidate, Entity
    # Through the (status, id) index: the few candidates promote has not reached. Ordered by id
    # with a limit, PostgreSQL would walk every candidate newest first looking for them.
    waiting = select(literal(0).label("part"), C.id.label("id"), C.raw_text.label("name")).where(
        C.status.in_(_WAITING),
        C.suggested_kind == "task",
        C.project_path.in_(sorted(set(project_paths))),
    )
    made = select(literal(1), E.id, E.display_name).where(
        E.id > after_id, E.kind == "task", E.status == "active", E.project_key == key
    )
    newest = select(literal(2), func.coalesce(func.max(E.id), 0), literal(""))
    parts = [waiting, made, newest]
    if open_tasks:
        # ranked by when each was last seen: the rank stands in the id's place
        rank = func.row_number().over(order_by=(E.last_seen_at.desc().nulls_last(), E.id.desc()))
        active = (
            select(literal(3).label("part"), rank.label("id"), E.display_name.label("name"))
            .where(E.kind == "task", E.status == "active", E.project_key == key)
            .order_by(E.last_seen_at.desc().nulls_last(), E.id.desc())
            .limit(limit)
            .subquery()
        )
        parts.append(select(active))
    rows = session.execute(union_all(*parts)).all()
    by_part: dict[int, list[tuple[int, str]]] = {0: [], 1: [], 2: [], 3: []}
    for part, eid, name in rows:
        by_part[int(part)].append((int(eid), str(name)))
    return ProjectWork(
        waiting=list(dict.fromkeys(n for _, n in sorted(by_part[0], reverse=True)))[:limit],
        made=[n for _, n in sorted(by_part[1], reverse=True)],
        last_entity_id=by_part[2][0][0],
        open=[n for _, n in sorted(by_part[3])],
    )
