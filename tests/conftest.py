"""Shared fixtures: every database test runs on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.support import databases
from tests.support.ci import in_ci
from tests.support.cli import kill_spawned
from tests.support.pg_pool import PgPool
from yzos_jobs.db import migrate
from yzos_jobs.db.connection import create_db_engine, make_session_factory

IN_CI = in_ci()
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(autouse=True)
def _no_process_outlives_its_test() -> Iterator[None]:
    """A test that fails before stopping the daemons or jobs it started must not leave them
    running (they would hold leases and CPU for the rest of the suite)."""
    yield
    kill_spawned()


@pytest.fixture(scope="session")
def postgres_ready() -> None:
    reason = databases.pg_unavailable_reason()
    if reason is None:
        return
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: PostgreSQL tests must run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_template(postgres_ready: None) -> Iterator[str]:
    """A database migrated to head once per worker; tests clone it (CREATE DATABASE … TEMPLATE)."""
    name = databases.create_pg_database()
    engine = create_db_engine(databases.pg_url(name))
    migrate.upgrade(engine)
    engine.dispose()
    yield name
    databases.drop_pg_database(name)


@pytest.fixture(scope="session")
def pg_pool(pg_template: str) -> Iterator[PgPool]:
    pool = PgPool(pg_template)
    yield pool
    pool.close()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "head.db"
    engine = create_db_engine(f"sqlite:///{path}")
    migrate.upgrade(engine)
    engine.dispose()
    return path


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgresql":
        request.getfixturevalue("postgres_ready")
    return str(request.param)


@pytest.fixture
def empty_db_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A database with no schema at all."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'yzos.db'}"
    else:
        with databases.pg_database() as url:
            yield url


@pytest.fixture
def db_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A database migrated to head."""
    if backend == "sqlite":
        path = tmp_path / "yzos.db"
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
    else:
        yield from _pooled(request.getfixturevalue("pg_pool"))


def _pooled(pool: PgPool) -> Iterator[str]:
    with pool.database() as url:
        try:
            yield url
        finally:
            # A process the test left running must not write into the next test's rows.
            kill_spawned()


@pytest.fixture
def pg_url(pg_pool: PgPool) -> Iterator[str]:
    """A PostgreSQL database migrated to head, for tests that only make sense there."""
    yield from _pooled(pg_pool)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    eng = create_db_engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture
def session_factory(engine: Engine) -> sessionmaker[Session]:
    return make_session_factory(engine)
