"""Where PostgreSQL and SQLite differ, decided here and only here: INSERT … ON CONFLICT, batches of
rows as one JSON parameter, timestamps bound as text on SQLite, planner statistics. Used by the
other db modules only."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import orjson
from sqlalchemy import Table, text
from sqlalchemy.orm import DeclarativeBase, Session

T = TypeVar("T")

# Rows per statement where a list of values becomes bound parameters (SQLite allows 32,766).
CHUNK = 1000


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def dialect_name(session: Session) -> str:
    return session.get_bind().dialect.name


def upsert_insert(session: Session, target: type[DeclarativeBase] | Table) -> Any:
    """An INSERT that supports on_conflict_do_nothing/do_update on the session's backend."""
    table = target if isinstance(target, Table) else target.__table__
    # Each dialect's module is loaded when first used: a command on SQLite never loads
    # PostgreSQL's.
    if dialect_name(session) == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table)


def is_postgres(session: Session) -> bool:
    return dialect_name(session) == "postgresql"


def pg_rows(
    columns: Sequence[tuple[str, str]], rows: Sequence[Mapping[str, Any]]
) -> tuple[str, dict[str, str]]:
    """PostgreSQL: a batch of rows as `jsonb_to_recordset(:rows) AS v(a type, …)`: one JSON
    parameter (encoded by orjson, datetimes included, in C) and a short statement that parses
    and plans once, however many rows."""
    names = [name for name, _ in columns]
    shaped = rows if _exactly(rows, names) else [{n: row[n] for n in names} for row in rows]
    payload = orjson.dumps(shaped).decode()
    shape = ", ".join(f"{name} {sqltype}" for name, sqltype in columns)
    return f"jsonb_to_recordset(CAST(:rows AS jsonb)) AS v({shape})", {"rows": payload}


def row_source(
    session: Session, columns: Sequence[tuple[str, str]], rows: Sequence[Mapping[str, Any]]
) -> tuple[str, dict[str, str]]:
    """A batch of rows as a row source named `v` with the given columns, bound as one JSON
    parameter: one short statement however many rows, with nothing encoded row by row in
    Python (on PostgreSQL `jsonb_to_recordset`, on SQLite `json_each`)."""
    if is_postgres(session):
        return pg_rows(columns, rows)
    names = [name for name, _ in columns]
    times = [name for name, sqltype in columns if sqltype == "timestamptz"]
    shaped: Sequence[Mapping[str, Any]] = rows
    if times or not _exactly(rows, names):
        as_text = _sqlite_times()
        shaped = []
        for row in rows:
            values = {name: row[name] for name in names}
            for name in times:
                if (at := values[name]) is not None:
                    values[name] = as_text(at)
            shaped.append(values)
    fields = ", ".join(f"json_extract(value, '$.{name}') AS {name}" for name in names)
    payload = orjson.dumps(shaped).decode()
    return f"(SELECT {fields} FROM json_each(:rows)) AS v", {"rows": payload}


def insert_rows(
    session: Session,
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Mapping[str, Any]],
    constants: Mapping[str, Any] | None = None,
) -> None:
    """INSERT a batch of rows (no RETURNING), each with `constants` (the same for every row).
    PostgreSQL reads them as one JSON parameter (see `pg_rows`); SQLite runs one prepared
    INSERT per row in the driver's own loop, which is quicker there than reading JSON (a third
    less per batch of 2,500)."""
    if not rows:
        return
    constants = constants or {}
    names = [name for name, _ in columns]
    listed = ", ".join([*names, *constants])
    if is_postgres(session):
        source, bound = pg_rows(columns, rows)
        fixed = "".join(f", :const_{i}" for i in range(len(constants)))
        values = {f"const_{i}": v for i, v in enumerate(constants.values())}
        session.connection().execute(
            text(f"INSERT INTO {table} ({listed}) SELECT {', '.join(names)}{fixed} FROM {source}"),
            {**bound, **values},
        )
        return
    sqltypes = dict(columns)
    as_text = _sqlite_times()

    def stored(name: str, value: Any) -> Any:
        if value is None:
            return None
        if sqltypes[name] == "timestamptz":
            return as_text(value)
        if sqltypes[name] == "jsonb":
            return orjson.dumps(value).decode()
        return value

    fixed_values = tuple(as_text(v) if isinstance(v, datetime) else v for v in constants.values())
    params = [tuple(stored(n, row[n]) for n in names) + fixed_values for row in rows]
    marks = ", ".join("?" * (len(names) + len(fixed_values)))
    session.connection().exec_driver_sql(f"INSERT INTO {table} ({listed}) VALUES ({marks})", params)


def _sqlite_times() -> Callable[[datetime], str]:
    """`sqlite_time`, remembering its answers: a batch's rows mostly share a few timestamps."""
    written: dict[datetime, str] = {}
    return lambda at: written.get(at) or written.setdefault(at, sqlite_time(at))


def by_key_only(condition: str) -> str:
    """`condition` as a check on rows a join already found by key, never a way to find them:
    neither backend uses an index for `(…) IS TRUE` nor trusts its statistics about it. Without
    this, an equality on an indexed column (status = 'claimed', a fresh owner) looks like it
    picks one row, so the planner walks those rows and scans the whole batch for each: about
    six million comparisons for a batch of 2,500 (seconds), against 2,500 key lookups."""
    return f"({condition}) IS TRUE"


def time_param(session: Session, value: datetime) -> datetime | str:
    """A timestamp for a textual statement: as it is for PostgreSQL; for SQLite the text the
    columns' type stores (naive UTC, microseconds always written), so it compares right."""
    return value if is_postgres(session) else sqlite_time(value)


def sqlite_time(value: datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.isoformat(" ", "microseconds")


def _exactly(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> bool:
    """The rows hold exactly these fields (their first row tells): they can go as they are."""
    return bool(rows) and len(rows[0]) == len(names) and all(n in rows[0] for n in names)


class PlannerStatsKeeper:
    """PostgreSQL caches the plan of each foreign-key check per connection. On a table that
    started nearly empty that plan is a sequential scan, and it stays one, getting slower with
    every row, until the table is analyzed. A bulk job that grows a table from (almost) nothing
    analyzes it as it doubles, so plans are made again with the real size. Cheap: log2 steps."""

    def __init__(self, session: Session, table: str) -> None:
        self.table = table
        self.enabled = is_postgres(session)
        self.known = 0.0
        self.grown = 0
        if self.enabled:
            tuples = session.scalar(
                text("SELECT reltuples FROM pg_class WHERE oid = CAST(:t AS regclass)"),
                {"t": table},
            )
            self.known = max(float(tuples or 0), 0.0)

    def grew(self, session: Session, added: int) -> None:
        if not self.enabled or added <= 0:
            return
        self.grown += added
        if self.grown >= max(1000.0, self.known):
            session.execute(text(f"ANALYZE {self.table}"))
            self.known += self.grown
            self.grown = 0
