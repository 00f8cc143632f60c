"""Alembic environment: the same database URL as the yzos-jobs CLI, on PostgreSQL and SQLite."""

from __future__ import annotations

from logging.config import fileConfig

from sqlalchemy import Connection

from alembic import context
from yzos_jobs.config import ConfigError, load_settings
from yzos_jobs.db.connection import create_db_engine
from yzos_jobs.db.models import Base

config = context.config
if config.config_file_name is not None and not config.attributes.get("quiet_logging"):
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        try:
            url = load_settings().database.sqlalchemy_url
        except ConfigError as exc:
            raise SystemExit(str(exc)) from None
    engine = create_db_engine(url, for_migrations=True)
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline SQL generation is not supported; run against a database")
run_migrations_online()
