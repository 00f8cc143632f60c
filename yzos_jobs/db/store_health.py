"""The reads behind the daemon's database gauges (/metrics): the last day's decisions by who made
them and what they did, and what the importers have read. Plain Core over a connection, like
`overview.py`; every query is bounded (an index range over one day, or a table of one row per
file or session source)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, column, func, select, table

from yzos_jobs.db.column_types import UTCDateTime

DECISIONS = table(
    "decisions",
    column("call_site"),
    column("source"),
    column("outcome"),
    column("created_at", UTCDateTime()),
)
IMPORTER_FILES = table("importer_files", column("importer_name"), column("offset"))
ACTIVITY_SESSIONS = table("activity_sessions", column("source_kind"))


@dataclass(frozen=True)
class DecisionCount:
    call_site: str
    source: str
    outcome: str | None
    n: int


def decisions_since(conn: Connection, since: datetime) -> list[DecisionCount]:
    """The decisions made since then, counted by call site, source and outcome."""
    d = DECISIONS.c
    rows = conn.execute(
        select(d.call_site, d.source, d.outcome, func.count())
        .where(d.created_at >= since)
        .group_by(d.call_site, d.source, d.outcome)
    )
    return [DecisionCount(site, source, outcome, int(n)) for site, source, outcome, n in rows]


def bytes_read_by_importer(conn: Connection) -> dict[str, int]:
    """Bytes each importer has read of the files it follows."""
    f = IMPORTER_FILES.c
    rows = conn.execute(select(f.importer_name, func.sum(f.offset)).group_by(f.importer_name))
    return {name: int(total or 0) for name, total in rows}


def sessions_by_source(conn: Connection) -> dict[str, int]:
    """Activity sessions imported, by source kind."""
    a = ACTIVITY_SESSIONS.c
    rows = conn.execute(select(a.source_kind, func.count()).group_by(a.source_kind))
    return {kind: int(n) for kind, n in rows}
