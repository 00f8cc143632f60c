"""What the health rules make of an operator's own choices: a paused job stops running on
purpose, so its last run ageing past the overdue limit is no problem for `status --check` or
/healthz (which apply the same rules)."""

from __future__ import annotations

from datetime import timedelta

from click.testing import CliRunner
from sqlalchemy import update

from tests.support.jobs import add_candidates, make_ctx
from yzos_jobs.cli import cli
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import create_db_engine, transaction
from yzos_jobs.db.models import JobRun
from yzos_jobs.health import check_health
from yzos_jobs.maintain.runner import run_job


def _cli(db_url: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env={"YZOS_DATABASE_URL": db_url})
    return result.exit_code, result.output


def _age_runs(db_url: str, days: int) -> None:
    ctx = make_ctx(db_url)
    with transaction(ctx.sessions) as s:
        s.execute(update(JobRun).values(started_at=utcnow() - timedelta(days=days)))


def test_a_paused_job_is_not_overdue_and_is_again_once_resumed(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "YZOS Core"})
    assert run_job(ctx, "entity_promote").status == "succeeded"
    _age_runs(db_url, 2)
    code, out = _cli(db_url, "status", "--check")
    assert code == 1 and "entity_promote: overdue" in out  # the rule the pause must lift

    assert _cli(db_url, "pause", "entity_promote")[0] == 0
    code, out = _cli(db_url, "status", "--check")
    assert code == 0, out
    assert "OVERDUE" not in out and "paused      entity_promote by " in out
    engine = create_db_engine(db_url)
    try:
        health = check_health(engine, ctx.settings, tick_age_s=0)
        assert health.ok, health.body()
        assert any(note.startswith("entity_promote paused by ") for note in health.notes)

        assert _cli(db_url, "resume", "entity_promote")[0] == 0
        code, out = _cli(db_url, "status", "--check")
        assert code == 1 and "entity_promote: overdue" in out
        assert not check_health(engine, ctx.settings, tick_age_s=0).ok
    finally:
        engine.dispose()


def test_a_paused_job_that_failed_last_is_still_a_problem(db_url: str) -> None:
    ctx = make_ctx(db_url)
    with transaction(ctx.sessions) as s:
        s.add(
            JobRun(
                job_name="entity_promote",
                slot="x",
                status="failed",
                owner="x:1",
                error="OperationalError: gone",
                started_at=utcnow(),
            )
        )
    assert _cli(db_url, "pause", "entity_promote")[0] == 0
    code, out = _cli(db_url, "status", "--check")
    assert code == 1 and "entity_promote: last run failed" in out
