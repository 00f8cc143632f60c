"""Schema migrations through Alembic: from the CLI, and on first use of an embedded database.
Whether one is needed is `schema_state.py`'s question, answered without this module."""

from __future__ import annotations

from alembic.config import Config
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, func, inspect, select, text
from sqlalchemy import table as table_clause

from alembic import command
from yzos_jobs.db.schema_state import (
    RevisionRefused,
    SchemaNotReady,
    current_revision,
    migrations_dir,
)
from yzos_jobs.shipped import ShippedFileMissing, alembic_ini

__all__ = ["current_revision", "downgrade", "upgrade"]

MIGRATION_LOCK_KEY = 0x59_5A_4F_53_017  # "YZOS" + baseline; any constant shared by all daemons


def alembic_config(engine: Engine) -> Config:
    try:
        ini = alembic_ini()
    except ShippedFileMissing as exc:
        raise SchemaNotReady(str(exc)) from None
    cfg = Config(str(ini))
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.attributes["quiet_logging"] = True
    cfg.attributes["engine"] = engine
    return cfg


def _run(engine: Engine, fn: str, revision: str) -> None:
    cfg = alembic_config(engine)
    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        if sqlite:
            # Batch migrations copy a table and drop the original: with foreign keys enforced,
            # that drop would cascade into every referencing table. Outside a transaction, as
            # SQLite requires for this pragma.
            _foreign_keys(conn, on=False)
        try:
            with conn.begin():
                if conn.dialect.name == "postgresql":
                    # Daemons starting together must not migrate the same database twice.
                    conn.execute(
                        text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
                    )
                cfg.attributes["connection"] = conn
                try:
                    getattr(command, fn)(cfg, revision)
                except CommandError as exc:
                    known = ", ".join(["base", *_revisions(cfg), "head"])
                    message = f"db {fn} {revision}: {exc} (revisions: {known})"
                    raise RevisionRefused(message) from None
        finally:
            if sqlite:
                _foreign_keys(conn, on=True)


def _foreign_keys(conn: Connection, *, on: bool) -> None:
    driver = conn.connection.driver_connection
    assert driver is not None
    driver.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")


def _revisions(cfg: Config) -> list[str]:
    return [s.revision for s in reversed(list(ScriptDirectory.from_config(cfg).walk_revisions()))]


def upgrade(engine: Engine, revision: str = "head") -> None:
    _run(engine, "upgrade", revision)


def downgrade(engine: Engine, revision: str) -> dict[str, int]:
    """Down to `revision`; returns the tables it dropped that held rows, with their row counts
    (what an operator loses with the revisions above: the decision trail, aliases, …)."""
    before = _row_counts(engine)
    _run(engine, "downgrade", revision)
    kept = set(inspect(engine).get_table_names())
    return {table: rows for table, rows in before.items() if rows and table not in kept}


def _row_counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            table: int(conn.scalar(select(func.count()).select_from(table_clause(table))) or 0)
            for table in inspect(conn).get_table_names()
            if table != "alembic_version"
        }
