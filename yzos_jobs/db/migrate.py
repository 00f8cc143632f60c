"""Schema migrations through Alembic: from the CLI, and on first use of an embedded database."""

from __future__ import annotations

from pathlib import Path

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, text

from alembic import command
from yzos_jobs.config import DatabaseSettings

ROOT = Path(__file__).resolve().parents[2]
MIGRATION_LOCK_KEY = 0x59_5A_4F_53_017  # "YZOS" + baseline; any constant shared by all daemons


class SchemaNotReady(Exception):
    """The database is not at the head revision and may not be migrated automatically."""


class RevisionRefused(Exception):
    """Alembic cannot go to the revision asked for (unknown, or the wrong direction)."""


def alembic_config(engine: Engine) -> Config:
    ini = ROOT / "alembic.ini"
    if not ini.is_file():
        raise SchemaNotReady(
            f"migrations not found at {ROOT / 'alembic'}; install from the source tree"
        )
    cfg = Config(str(ini))
    cfg.set_main_option("script_location", str(ROOT / "alembic"))
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


def downgrade(engine: Engine, revision: str) -> None:
    _run(engine, "downgrade", revision)


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision(engine: Engine) -> str:
    head = ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
    assert head is not None
    return head


def ensure_schema(engine: Engine, settings: DatabaseSettings) -> None:
    """Bring an embedded database to head on first use; refuse an old PostgreSQL unless allowed."""
    current, head = current_revision(engine), head_revision(engine)
    if current == head:
        return
    if settings.should_auto_migrate:
        upgrade(engine)
        return
    at = f"at revision {current}" if current else "not migrated"
    raise SchemaNotReady(
        f"database is {at}, this version needs {head}: run `yzos-jobs db upgrade` "
        "(or set database.auto_migrate = true)"
    )
