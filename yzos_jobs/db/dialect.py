"""Dialect helpers: INSERT … ON CONFLICT and row locking, the same call on PostgreSQL and SQLite."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import DeclarativeBase, Session


def dialect_name(session: Session) -> str:
    return session.get_bind().dialect.name


def upsert_insert(session: Session, target: type[DeclarativeBase] | Table) -> Any:
    """An INSERT that supports on_conflict_do_nothing/do_update on the session's backend."""
    table = target if isinstance(target, Table) else target.__table__
    if dialect_name(session) == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)
