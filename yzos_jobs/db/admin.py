"""Creating and dropping whole PostgreSQL databases, for the test kit's throw-away databases
(run with AUTOCOMMIT: CREATE/DROP DATABASE cannot run in a transaction)."""

from __future__ import annotations

import re

from sqlalchemy import create_engine, text

_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")  # names are spliced into the statement


def _execute(admin_url: str, sql: str) -> None:
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(sql))
    finally:
        engine.dispose()


def _checked(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"not a plain database name: {name!r}")
    return name


def create_database(admin_url: str, name: str, template: str | None = None) -> None:
    clause = f" TEMPLATE {_checked(template)}" if template else ""
    _execute(admin_url, f"CREATE DATABASE {_checked(name)}{clause}")


def drop_database(admin_url: str, name: str) -> None:
    _execute(admin_url, f"DROP DATABASE IF EXISTS {_checked(name)} WITH (FORCE)")
