"""The daily LLM budgets (`[llm] daily_token_budget`, `daily_call_budget`), held across every
daemon on the database: each batch of LLM work adds what it cost to the UTC day's row
(db/llm_usage.py) and learns the day's totals in the same statement; once a cap is reached, the
run stops asking (the batch that reached it is the last) and LLM work waits for the next day.
Nothing is decided instead: candidates stay pending, entities keep their state.
"""

from __future__ import annotations

from dataclasses import dataclass

from yzos_jobs.config import LlmSettings
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.llm_usage import DayUsage, add_usage
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
    """One run's view of the day's budget. Once spent it stays spent for the run."""

    ctx: JobContext
    reason: str | None = None

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

    def calls_left(self, wanted: int) -> int:
        """At most `wanted`, and no more calls than the day's call budget has left."""
        if not self._llm.daily_call_budget:
            return wanted
        with self.ctx.sessions() as s:
            today = today_usage(s.connection())
        return max(0, min(wanted, self._llm.daily_call_budget - today.calls))

    def charge(self, usage: ClassifierUsage) -> str | None:
        """Add what a batch cost to today's row; why the budget is now spent, or None."""
        if usage.llm_calls == 0 and usage.prompt_tokens == 0 and usage.completion_tokens == 0:
            return self.reason
        now = utcnow()
        with transaction(self.ctx.sessions) as s:
            today = add_usage(s.connection(), budget_day(now), as_day_usage(usage), now)
        if self.reason is None:
            self.reason = spent_reason(self._llm, today)
        return self.reason
