"""A database brought to the schema this version needs on first use: an embedded one is migrated
then and there; an old PostgreSQL is refused unless `database.auto_migrate` allows it. Alembic
(`migrate.py`) is loaded only when something must be migrated."""

from __future__ import annotations

from sqlalchemy import Engine

from yzos_jobs.config import DatabaseSettings
from yzos_jobs.db.connection import describe_url, is_read_only
from yzos_jobs.db.schema_state import (
    SchemaNotReady,
    current_revision,
    head_revision,
    known_revision,
)


def ensure_schema(engine: Engine, settings: DatabaseSettings) -> None:
    """Bring an embedded database to head on first use; refuse an old PostgreSQL unless allowed."""
    current, head = current_revision(engine), head_revision()
    if current == head:
        return
    if current is not None and not known_revision(current):
        raise SchemaNotReady(
            f"{describe_url(engine)} is at revision {current}, which a newer yzos-jobs made: "
            "upgrade yzos-jobs"
        )
    if is_read_only(engine):
        raise SchemaNotReady(
            f"{describe_url(engine)} is at revision {current or 'base'}, this version needs "
            f"{head}, and this user may not write it: run `yzos-jobs db upgrade` as one who may"
        )
    if settings.should_auto_migrate:
        from yzos_jobs.db.migrate import upgrade

        upgrade(engine)
        return
    at = f"at revision {current}" if current else "not migrated"
    raise SchemaNotReady(
        f"database is {at}, this version needs {head}: run `yzos-jobs db upgrade` "
        "(or set database.auto_migrate = true)"
    )
