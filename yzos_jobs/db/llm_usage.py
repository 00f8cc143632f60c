"""llm_usage_days: what the LLM cost on each UTC day, one row per day. Every daemon adds its
calls and tokens with one INSERT … ON CONFLICT DO UPDATE that returns the day's totals, so
several daemons on one database count against one budget without reading first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import Connection, Date, column, select, table, update
from sqlalchemy.dialects import postgresql, sqlite

from yzos_jobs.db.column_types import UTCDateTime

LLM_USAGE_DAYS = table(
    "llm_usage_days",
    column("day", Date()),
    column("prompt_tokens"),
    column("completion_tokens"),
    column("calls"),
    column("unknown_usage_calls"),
    column("updated_at", UTCDateTime()),
)
_COUNTS = ("prompt_tokens", "completion_tokens", "calls", "unknown_usage_calls")


@dataclass(frozen=True)
class DayUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    unknown_usage_calls: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def add_usage(conn: Connection, day: date, spent: DayUsage, now: datetime) -> DayUsage:
    """Add `spent` to `day` and return the day's totals after the addition."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    insert = dialect.insert(LLM_USAGE_DAYS).values(
        day=day, updated_at=now, **{name: getattr(spent, name) for name in _COUNTS}
    )
    stmt = insert.on_conflict_do_update(
        index_elements=["day"],
        set_={
            **{name: LLM_USAGE_DAYS.c[name] + insert.excluded[name] for name in _COUNTS},
            "updated_at": insert.excluded.updated_at,
        },
    ).returning(*(LLM_USAGE_DAYS.c[name] for name in _COUNTS))
    row = conn.execute(stmt).one()
    return DayUsage(*(int(v) for v in row))


def reserve_calls(conn: Connection, day: date, wanted: int, budget: int, now: datetime) -> int:
    """Set aside up to `wanted` of the day's `budget` calls before asking: the calls granted,
    counted at once (0 once the budget is spent). The day's row is locked while it is read and
    raised (FOR UPDATE on PostgreSQL, SQLite's write lock), so two daemons never both take the
    last calls. `add_usage` later counts what was spent beyond (or gives back what was not)."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    zeros = {name: 0 for name in _COUNTS}
    conn.execute(
        dialect.insert(LLM_USAGE_DAYS)
        .values(day=day, updated_at=now, **zeros)
        .on_conflict_do_nothing(index_elements=["day"])
    )
    calls = conn.execute(
        select(LLM_USAGE_DAYS.c.calls).where(LLM_USAGE_DAYS.c.day == day).with_for_update()
    ).scalar_one()
    granted = max(0, min(wanted, budget - int(calls)))
    if granted:
        conn.execute(
            update(LLM_USAGE_DAYS)
            .where(LLM_USAGE_DAYS.c.day == day)
            .values(calls=LLM_USAGE_DAYS.c.calls + granted, updated_at=now)
        )
    return granted


def usage_of(conn: Connection, day: date) -> DayUsage:
    row = conn.execute(
        select(*(LLM_USAGE_DAYS.c[name] for name in _COUNTS)).where(LLM_USAGE_DAYS.c.day == day)
    ).first()
    return DayUsage(*(int(v) for v in row)) if row is not None else DayUsage()
