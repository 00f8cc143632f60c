"""The daily LLM budgets (`[llm] daily_token_budget`, `daily_call_budget`), held across every
daemon on the database: each batch of LLM work adds what it cost to the UTC day's row
(db/llm_usage.py) and learns the day's totals in the same statement; once a cap is reached, the
run stops asking (the batch that reached it is the last) and LLM work waits for the next day.
Nothing is decided instead: candidates stay pending, entities keep their state.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from yzos_jobs.config import LlmSettings
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.llm_usage import DayUsage, add_usage, reserve_calls
from yzos_jobs.entity.budget_rules import budget_day, spent_reason, today_usage
from yzos_jobs.inference.contract import ClassifierUsage
from yzos_jobs.jobcontext import JobContext


def as_day_usage(usage: ClassifierUsage) -> DayUsage:
    return DayUsage(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        calls=usage.llm_calls,
        unknown_usage_calls=usage.unknown_usage,
    )


@dataclass
class DailyBudget:
    """One run's view of the day's budget. Once spent it stays spent for the run.

    Under a call budget a batch's calls are reserved in the day's row before it is claimed, so
    daemons sharing the database never ask for more calls together than the budget has left;
    `charge` then counts what the batch really cost in place of its reservation."""

    ctx: JobContext
    reason: str | None = None
    _reserved: int = 0
    _reserved_on: date | None = None

    @property
    def _llm(self) -> LlmSettings:
        return self.ctx.settings.llm

    @property
    def capped(self) -> bool:
        return bool(self._llm.daily_token_budget or self._llm.daily_call_budget)

    def spent(self) -> str | None:
        """Why no more LLM work may start today (read from the database), or None."""
        if self.reason is None and self.capped:
            with self.ctx.sessions() as s:
                self.reason = spent_reason(self._llm, today_usage(s.connection()))
        return self.reason

    def reserve_calls(self, wanted: int) -> int:
        """At most `wanted`, and no more calls than the day's call budget has left, set aside
        for the next batch (every daemon's reservations count at once)."""
        budget = self._llm.daily_call_budget
        if not budget or wanted <= 0:
            return wanted
        now = utcnow()
        with transaction(self.ctx.sessions) as s:
            granted = reserve_calls(s.connection(), budget_day(now), wanted, budget, now)
        self._reserved += granted
        self._reserved_on = budget_day(now)
        if granted == 0:
            self.spent()  # spent since the last check (another daemon): say so
        return granted

    def charge(self, usage: ClassifierUsage) -> str | None:
        """Add what a batch cost to today's row, in place of its reservation (a batch that
        claimed nothing gives it back); why the budget is now spent, or None."""
        now = utcnow()
        spent = as_day_usage(usage)
        if self._reserved and self._reserved_on == budget_day(now):
            spent = replace(spent, calls=spent.calls - self._reserved)
        self._reserved, self._reserved_on = 0, None
        if spent == DayUsage():
            return self.reason
        with transaction(self.ctx.sessions) as s:
            today = add_usage(s.connection(), budget_day(now), spent, now)
        if self.reason is None:
            self.reason = spent_reason(self._llm, today)
        return self.reason
