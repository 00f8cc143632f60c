"""The daily LLM budgets against the loopback double (whose replies carry `usage`): a run stops
at the batch that reaches the budget, nothing is lost or decided by the fallback, the budget's
day moved back (as the next UTC day would) lets the work go on."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import update

from tests.integration.test_session_triage import (
    failing_triage,
    queue_session,
    rephrasing_session,
    triage_rows,
)
from tests.support.cli import cli_env, spawn_cli
from tests.support.daemons import write_config
from tests.support.jobs import add_candidates, candidates, decisions, make_ctx
from yzos_jobs.cli import cli
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.llm_usage import LLM_USAGE_DAYS, DayUsage, add_usage, usage_of
from yzos_jobs.entity.budget_rules import budget_day
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.jobs import run_entity_promote, run_entity_purge_v06
from yzos_jobs.testing import OpenAIDouble
from yzos_jobs.testing.double import Cut, Raw

PROMOTE = {"batch_size": 10, "max_attempts": 1}


def _today(ctx: JobContext) -> DayUsage:
    with ctx.sessions() as s:
        return usage_of(s.connection(), budget_day(utcnow()))


def _next_day(ctx: JobContext) -> None:
    """What the next UTC day does to the budget: today's usage becomes yesterday's."""
    today = budget_day(utcnow())
    with transaction(ctx.sessions) as s:
        s.execute(
            update(LLM_USAGE_DAYS)
            .where(LLM_USAGE_DAYS.c.day == today)
            .values(day=today - timedelta(days=1))
        )


def _statuses(ctx: JobContext) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in candidates(ctx):
        counts[c.status] = counts.get(c.status, 0) + 1
    return counts


def test_a_token_budget_stops_the_run_at_the_batch_that_reaches_it(db_url: str) -> None:
    setup = make_ctx(db_url)
    add_candidates(setup, *({"raw_text": f"Project {i}"} for i in range(30)))
    with OpenAIDouble() as llm:
        ctx = make_ctx(db_url, llm.base_url, llm={"daily_token_budget": 1}, entity_promote=PROMOTE)
        first = run_entity_promote(ctx)
        assert llm.calls == 10  # one batch, the one that spent the budget
        assert first["promoted"] == 10 and "token budget spent" in first["budget_spent"]
        assert first["prompt_tokens"] > 0 and first["completion_tokens"] > 0
        today = _today(ctx)
        assert (today.calls, today.prompt_tokens) == (10, first["prompt_tokens"])
        # The rest waits, unclaimed: neither the LLM nor the fallback decides it today.
        assert _statuses(ctx) == {"promoted": 10, "pending": 20}
        assert all(c.attempts == 0 for c in candidates(ctx) if c.status == "pending")
        again = run_entity_promote(ctx)
        assert llm.calls == 10 and again["promoted"] == 0 and again["budget_spent"]
        assert {d.source for d in decisions(ctx)} == {"llm"}

        _next_day(ctx)
        nxt = run_entity_promote(ctx)
    assert nxt["promoted"] == 10 and llm.calls == 20
    assert _statuses(ctx) == {"promoted": 20, "pending": 10}
    assert {d.source for d in decisions(ctx)} == {"llm"}


def test_a_call_budget_claims_no_more_than_the_calls_left(db_url: str) -> None:
    setup = make_ctx(db_url)
    add_candidates(setup, *({"raw_text": f"Project {i}"} for i in range(30)))
    with OpenAIDouble() as llm:
        ctx = make_ctx(db_url, llm.base_url, llm={"daily_call_budget": 15}, entity_promote=PROMOTE)
        stats = run_entity_promote(ctx)
    assert llm.calls == 15 and stats["promoted"] == 15
    assert "call budget spent: 15 of 15 calls" in stats["budget_spent"]
    assert _statuses(ctx) == {"promoted": 15, "pending": 15}


def test_a_spent_budget_stops_the_purge_and_status_says_so(db_url: str, tmp_path: Path) -> None:
    setup = make_ctx(db_url)
    add_candidates(setup, {"raw_text": "YZOS Core"}, {"raw_text": "Telegram"})
    run_entity_promote(setup)  # dry_run: two active entities, due for a re-judgement
    with transaction(setup.sessions) as s:
        add_usage(s.connection(), budget_day(utcnow()), DayUsage(calls=50), utcnow())
    with OpenAIDouble() as llm:
        ctx = make_ctx(db_url, llm.base_url, llm={"daily_call_budget": 50})
        stats = run_entity_purge_v06(ctx)
    assert llm.calls == 0 and stats["judged"] == 0 and stats["budget_spent"]
    config = write_config(tmp_path / "c.toml", None, llm={"daily_call_budget": 50})
    result = CliRunner().invoke(
        cli, ["--config", str(config), "status"], env={"YZOS_DATABASE_URL": db_url}
    )
    assert result.exit_code == 0, result.output
    assert "daily call budget spent: 50 of 50 calls" in result.output


def test_replies_without_usage_are_counted_as_unknown(db_url: str) -> None:
    setup = make_ctx(db_url)
    add_candidates(setup, *({"raw_text": f"Project {i}"} for i in range(3)))
    with OpenAIDouble(report_usage=False) as llm:
        ctx = make_ctx(db_url, llm.base_url, llm={"daily_token_budget": 1})
        stats = run_entity_promote(ctx)
    # Unknown tokens are never guessed: the token budget is not spent by them.
    assert (stats["llm_calls"], stats["unknown_usage_calls"], stats["prompt_tokens"]) == (3, 3, 0)
    assert "budget_spent" not in stats and stats["promoted"] == 3
    assert _today(ctx) == DayUsage(calls=3, unknown_usage_calls=3)


@pytest.mark.parametrize(
    "failure", [Cut('{"project": "yzos-core", "tasks": [{"title": "Fix'), Raw("not JSON")]
)
def test_a_triage_reply_cut_short_or_not_understood_still_spends_its_tokens(
    db_url: str, failure: Cut | Raw
) -> None:
    with OpenAIDouble(failing_triage(failure)) as llm:
        ctx = make_ctx(db_url, llm.base_url, llm={"daily_token_budget": 1})
        queue_session(ctx, "s1", rephrasing_session()[:3])
        stats = run_entity_promote(ctx)
    # The session waits for its next attempt; the call it cost is on today's row all the same,
    # and it spent the budget: the line-level verdicts do not start today.
    assert stats["triage_retried"] == 1 and llm.calls == 1
    today = _today(ctx)
    assert today.calls == 1 and today.prompt_tokens > 0 and today.completion_tokens > 0
    assert "token budget spent" in stats["budget_spent"]
    assert [t.status for t in triage_rows(ctx)] == ["pending"]


def test_a_spent_budget_leaves_closed_sessions_waiting_for_their_triage(db_url: str) -> None:
    with OpenAIDouble() as llm:
        ctx = make_ctx(db_url, llm.base_url, llm={"daily_call_budget": 5})
        queue_session(ctx, "s1", rephrasing_session())
        with transaction(ctx.sessions) as s:
            add_usage(s.connection(), budget_day(utcnow()), DayUsage(calls=5), utcnow())
        spent = run_entity_promote(ctx)
        assert llm.calls == 0 and spent["triage_triaged"] == 0 and spent["budget_spent"]
        assert [t.status for t in triage_rows(ctx)] == ["pending"]
        assert {c.status for c in candidates(ctx)} == {"held"}

        _next_day(ctx)
        nxt = run_entity_promote(ctx)
    assert nxt["triage_triaged"] == 1 and llm.calls > 0
    assert [t.status for t in triage_rows(ctx)] == ["done"]


@pytest.mark.slow
def test_two_processes_together_ask_no_more_calls_than_the_call_budget(
    db_url: str, tmp_path: Path
) -> None:
    store = make_ctx(db_url)
    add_candidates(store, *({"raw_text": f"Project {i}"} for i in range(100)))
    # Slow replies: each process is judging its batch while the other claims its own.
    with OpenAIDouble(latency_s=1.5) as llm:
        config = write_config(
            tmp_path / "c.toml",
            llm.base_url,
            llm={"daily_call_budget": 30},
            **{"jobs.entity_promote": {"batch_size": 20, "max_attempts": 1}},
        )
        env = cli_env(db_url, YZOS_CONFIG=str(config))
        runs = [spawn_cli("once", "entity_promote", "--json", env=env) for _ in range(2)]
        outputs = [run.communicate(timeout=300) for run in runs]
    for run, (_out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err[-3000:]
    stats = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert llm.calls == 30, (llm.calls, stats)
    assert sum(s["promoted"] for s in stats) == 30
    assert _today(store).calls == 30
    assert _statuses(store) == {"promoted": 30, "pending": 70}
    assert {d.source for d in decisions(store)} == {"llm"}
