"""When the daily LLM budgets are spent: pure rules over the day's usage, light enough for
`status` and the health probe (no ORM, no job machinery; `llm_budget.py` applies them in runs)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from sqlalchemy import Connection

from yzos_jobs.config import LlmSettings
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.llm_usage import DayUsage, usage_of


def budget_day(now: datetime) -> date:
    """The UTC day a moment is counted on."""
    return now.astimezone(UTC).date()


def spent_reason(llm: LlmSettings, today: DayUsage) -> str | None:
    """Why today's budget is spent, or None while there is some left (or no cap at all)."""
    if llm.daily_token_budget and today.tokens >= llm.daily_token_budget:
        return (
            f"daily token budget spent: {today.tokens} of {llm.daily_token_budget} tokens "
            "today (UTC); LLM work waits for the next day"
        )
    if llm.daily_call_budget and today.calls >= llm.daily_call_budget:
        return (
            f"daily call budget spent: {today.calls} of {llm.daily_call_budget} calls "
            "today (UTC); LLM work waits for the next day"
        )
    return None


def today_usage(conn: Connection) -> DayUsage:
    return usage_of(conn, budget_day(utcnow()))
