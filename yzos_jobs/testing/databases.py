"""Throwaway PostgreSQL databases for tests and benchmarks: created from the server that
YZOS_TEST_PG_URL names (default the local one), dropped afterwards."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

PG_ADMIN_URL = os.environ.get(
    "YZOS_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def pg_unavailable_reason() -> str | None:
    """Why the PostgreSQL server behind YZOS_TEST_PG_URL cannot be used, or None."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    engine = create_engine(PG_ADMIN_URL, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        return None
    except Exception as exc:
        return f"PostgreSQL at {make_url(PG_ADMIN_URL).render_as_string()} unreachable: {exc}"
    finally:
        engine.dispose()


def _admin_execute(sql: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(sql))
    finally:
        engine.dispose()


def pg_url(name: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)


def create_pg_database(template: str | None = None) -> str:
    name = f"yzos_t_{uuid.uuid4().hex[:12]}"
    clause = f" TEMPLATE {template}" if template else ""
    _admin_execute(f"CREATE DATABASE {name}{clause}")
    return name


def drop_pg_database(name: str) -> None:
    _admin_execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def pg_database(template: str | None = None) -> Iterator[str]:
    """A fresh database (a copy of `template`, if given) for the block; its URL."""
    name = create_pg_database(template)
    try:
        yield pg_url(name)
    finally:
        drop_pg_database(name)
