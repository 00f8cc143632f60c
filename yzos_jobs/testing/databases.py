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
    from sqlalchemy import create_engine

    from yzos_jobs.db.connection import DatabaseUnavailable, check_connection

    engine = create_engine(PG_ADMIN_URL, connect_args={"connect_timeout": 5})
    try:
        check_connection(engine)
        return None
    except DatabaseUnavailable as exc:
        return str(exc)
    finally:
        engine.dispose()


def pg_url(name: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)


def create_pg_database(template: str | None = None) -> str:
    from yzos_jobs.db.admin import create_database

    name = f"yzos_t_{uuid.uuid4().hex[:12]}"
    create_database(PG_ADMIN_URL, name, template)
    return name


def drop_pg_database(name: str) -> None:
    from yzos_jobs.db.admin import drop_database

    drop_database(PG_ADMIN_URL, name)


@contextmanager
def pg_database(template: str | None = None) -> Iterator[str]:
    """A fresh database (a copy of `template`, if given) for the block; its URL."""
    name = create_pg_database(template)
    try:
        yield pg_url(name)
    finally:
        drop_pg_database(name)
