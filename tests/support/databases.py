"""Throw-away databases for tests: they live in the shipped test kit (yzos_jobs/testing.py),
which benchmarks use too."""

from yzos_jobs.testing import (
    PG_ADMIN_URL,
    create_pg_database,
    drop_pg_database,
    pg_database,
    pg_unavailable_reason,
    pg_url,
)

__all__ = [
    "PG_ADMIN_URL",
    "create_pg_database",
    "drop_pg_database",
    "pg_database",
    "pg_unavailable_reason",
    "pg_url",
]
