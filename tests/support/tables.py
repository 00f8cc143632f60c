"""Row counts of every table: "import again → no new rows anywhere"."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.db.models import Base


def row_counts(sessions: sessionmaker[Session]) -> dict[str, int]:
    with sessions() as s:
        return {
            name: int(s.scalar(select(func.count()).select_from(table)) or 0)
            for name, table in Base.metadata.tables.items()
        }
