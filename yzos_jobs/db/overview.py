"""The reads behind `yzos-jobs status`: counts of candidates, entities and session triage, the
last runs of each job, the daemons seen. Over plain Core table clauses naming only the columns
read, so a status check loads neither the ORM nor the models (`tests/unit/test_overview.py`
keeps these names those of the models)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, column, func, select, table, text

from yzos_jobs.db.column_types import Json, UTCDateTime

CANDIDATES = table("entity_candidates", column("status"), column("suggested_kind"))
ENTITIES = table("entities", column("kind"), column("status"))
TRIAGE = table("session_triage", column("status"))
JOB_RUNS = table(
    "job_runs",
    column("id"),
    column("job_name"),
    column("slot"),
    column("status"),
    column("owner"),
    column("started_at", UTCDateTime()),
    column("finished_at", UTCDateTime()),
    column("stats", Json()),
    column("error"),
    column("lease_until", UTCDateTime()),
)

IMPORTER_FILES = table(
    "importer_files", column("importer_name"), column("updated_at", UTCDateTime())
)


@dataclass(frozen=True)
class RunRow:
    id: int
    job_name: str
    slot: str
    status: str
    owner: str
    started_at: datetime
    finished_at: datetime | None
    stats: dict[str, Any] | None
    error: str | None
    lease_until: datetime | None  # a running run's: renewed while its process works on it


_RUN_COLUMNS = tuple(JOB_RUNS.c[name] for name in RunRow.__dataclass_fields__)


def count_by_status(conn: Connection) -> dict[str, int]:
    """Candidates by status."""
    rows = conn.execute(select(CANDIDATES.c.status, func.count()).group_by(CANDIDATES.c.status))
    return {status: int(n) for status, n in rows}


def candidates_waiting(conn: Connection, *, model: bool) -> int:
    """The candidates `entity_promote` has yet to decide: pending ones, and with a model those
    held for their session's triage; without one, a pending candidate with no suggested kind
    waits for a model, not for a run."""
    c = CANDIDATES.c
    waiting = c.status.in_(("pending", "held")) if model else c.status == "pending"
    if not model:
        waiting = waiting & c.suggested_kind.is_not(None)
    return int(conn.scalar(select(func.count()).select_from(CANDIDATES).where(waiting)) or 0)


def count_triage_by_status(conn: Connection) -> dict[str, int]:
    """The session triage queue by status."""
    rows = conn.execute(select(TRIAGE.c.status, func.count()).group_by(TRIAGE.c.status))
    return {status: int(n) for status, n in rows}


def count_by_kind_and_status(conn: Connection) -> dict[str, dict[str, int]]:
    """Entities by status, then kind."""
    counts: dict[str, dict[str, int]] = {}
    e = ENTITIES.c
    for kind, status, n in conn.execute(
        select(e.kind, e.status, func.count()).group_by(e.kind, e.status)
    ):
        counts.setdefault(status, {})[kind] = int(n)
    return counts


# The job names in job_runs, one index probe per name (a loose index scan): a GROUP BY would
# read every run ever kept, and the health probe asks at every probe.
_JOB_NAMES = text(
    "WITH RECURSIVE names(name) AS ("
    " SELECT (SELECT min(job_name) FROM job_runs)"
    " UNION ALL"
    " SELECT (SELECT min(job_name) FROM job_runs WHERE job_name > names.name)"
    " FROM names WHERE names.name IS NOT NULL"
    ") SELECT name FROM names WHERE name IS NOT NULL"
)


def job_names(conn: Connection) -> list[str]:
    """Every job that has a run row, in name order."""
    return [name for (name,) in conn.execute(_JOB_NAMES)]


def last_runs(conn: Connection) -> dict[str, RunRow]:
    """The latest run of each job (an index range per job, however long the history)."""
    r = JOB_RUNS.c
    latest: dict[str, RunRow] = {}
    for name in job_names(conn):
        row = conn.execute(
            select(*_RUN_COLUMNS)
            .where(r.job_name == name)
            .order_by(r.started_at.desc(), r.id.desc())
            .limit(1)
        ).first()
        if row is not None:
            latest[name] = RunRow(*row)
    return latest


def recent_owners(conn: Connection, since: datetime) -> list[tuple[str, datetime]]:
    """Each owner that started a run since then, with its latest start."""
    names = job_names(conn)
    if not names:
        return []
    r = JOB_RUNS.c
    rows = conn.execute(
        select(r.owner, func.max(r.started_at))
        # The job names lead the (job_name, started_at) index: a range of it per job.
        .where(r.job_name.in_(names), r.started_at >= since)
        .group_by(r.owner)
        .order_by(r.owner)
    )
    return [(owner, at) for owner, at in rows]


def recent_runs(
    conn: Connection, job_name: str, limit: int, *, finished: bool = False
) -> list[RunRow]:
    """The job's latest runs, newest first (`finished`: those that have ended, with what they
    counted)."""
    r = JOB_RUNS.c
    where = [r.job_name == job_name]
    if finished:
        where.append(r.status != "running")
    rows = conn.execute(
        select(*_RUN_COLUMNS).where(*where).order_by(r.started_at.desc()).limit(limit)
    )
    return [RunRow(*row) for row in rows]


def files_by_importer(conn: Connection) -> dict[str, tuple[int, datetime | None]]:
    """Per importer: the files it has marks for, and when one was last imported from."""
    f = IMPORTER_FILES.c
    rows = conn.execute(
        select(f.importer_name, func.count(), func.max(f.updated_at)).group_by(f.importer_name)
    )
    return {name: (int(n), at) for name, n, at in rows}
