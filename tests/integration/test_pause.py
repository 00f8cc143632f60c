"""Pause and resume, stored in the database: every daemon on it obeys from its next run; `once`
on a paused job says so and exits 3 unless --force."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from tests.support.daemons import start_daemon, stop, wait_for, write_config
from tests.support.jobs import add_candidates, candidates, make_ctx
from tests.support.scrape import free_port, value
from yzos_jobs.cli import cli
from yzos_jobs.db.models import JobRun
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.testing import OpenAIDouble, candidate_of


def _cli(db_url: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env={"YZOS_DATABASE_URL": db_url})
    return result.exit_code, result.output


def test_once_on_a_paused_job_exits_3_unless_forced(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "YZOS Core"})
    code, out = _cli(db_url, "pause", "entity_promote")
    # when, as every time is shown to a person
    assert re.search(r" since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)$", out.strip()), out
    shown = _cli(db_url, "status")[1]
    assert re.search(r"^paused +entity_promote by \S+ since \S+ \S+ UTC$", shown, re.M), shown
    assert code == 0 and out.startswith("entity_promote paused (by ")
    assert _cli(db_url, "pause", "entity_promote")[1].startswith("entity_promote was already")

    code, out = _cli(db_url, "once", "entity_promote")
    assert code == 3 and "entity_promote is paused (by " in out
    assert [c.status for c in candidates(ctx)] == ["pending"]
    code, out = _cli(db_url, "status", "--json")
    [pause] = json.loads(out)["paused"]
    assert pause["job"] == "entity_promote" and "@" in pause["paused_by"]

    code, out = _cli(db_url, "once", "entity_promote", "--force", "--json")
    assert code == 0 and json.loads(out.splitlines()[-1])["promoted"] == 1
    assert _cli(db_url, "resume", "entity_promote") == (0, "entity_promote resumed\n")
    assert _cli(db_url, "resume", "entity_promote") == (0, "entity_promote was not paused\n")
    assert json.loads(_cli(db_url, "status", "--json")[1])["paused"] == []


def test_the_purge_alias_pauses_the_purge(db_url: str) -> None:
    code, out = _cli(db_url, "pause", "entity_purge")
    assert code == 0 and out.startswith("entity_purge_v06 paused")
    assert _cli(db_url, "once", "entity_purge_v06")[0] == 3


@pytest.mark.postgres
@pytest.mark.slow
def test_two_daemons_obey_a_pause_and_pick_up_on_resume(pg_url: str, tmp_path: Path) -> None:
    ctx = make_ctx(pg_url)
    assert _cli(pg_url, "pause", "entity_promote")[0] == 0
    add_candidates(ctx, *({"raw_text": f"Project {i}"} for i in range(200)))
    ports = [free_port(), free_port()]
    with OpenAIDouble() as llm:
        daemons = [
            start_daemon(
                pg_url,
                write_config(
                    tmp_path / f"d{port}.toml",
                    llm.base_url,
                    daemon={"http": f"127.0.0.1:{port}"},
                    **{"jobs.entity_promote": {"interval_s": 1, "batch_size": 20}},
                ),
            )
            for port in ports
        ]
        for port in ports:  # each daemon has come to its promote run a few times, and skipped it
            wait_for(
                lambda p=port: (
                    value(p, "yzos_job_runs_total", job="entity_promote", outcome="paused") >= 3
                ),
                60,
                f"paused promote runs on the daemon at :{port}",
            )
        assert llm.calls == 0 and {c.status for c in candidates(ctx)} == {"pending"}
        with ctx.sessions() as s:
            promote_rows = s.scalar(select(func.count()).where(JobRun.job_name == "entity_promote"))
        assert promote_rows == 0

        assert _cli(pg_url, "resume", "entity_promote")[0] == 0
        wait_for(
            lambda: {c.status for c in candidates(ctx)} == {"promoted"}, 120, "every candidate"
        )
        for port in ports:  # each daemon runs promote again (one may have found the work done)
            wait_for(
                lambda p=port: (
                    value(p, "yzos_job_runs_total", job="entity_promote", outcome="succeeded") >= 1
                ),
                60,
                f"a promote run after the resume on the daemon at :{port}",
            )
        results = [stop(d) for d in daemons]
    assert [code for code, _ in results] == [0, 0], results[0][1][-3000:]
    asked = [candidate_of(r)["raw_text"] for r in llm.requests]
    assert len(asked) == len(set(asked)) == 200  # each decided once, after the resume


@pytest.mark.slow
def test_a_pause_stops_the_run_in_progress_at_its_next_batch(db_url: str, tmp_path: Path) -> None:
    """A pause is how an operator stops a run that spends too much: a promote run draining a
    long queue ends at its next batch, not once the queue is empty."""
    ctx = make_ctx(db_url)
    add_candidates(ctx, *({"raw_text": f"Project {i}"} for i in range(300)))
    with OpenAIDouble(latency_s=1.0) as llm:
        config = write_config(
            tmp_path / "c.toml",
            llm.base_url,
            llm={"max_concurrency": 4},
            **{"jobs.entity_promote": {"interval_s": 3600, "batch_size": 8}},
        )
        daemon = start_daemon(db_url, config)
        try:
            wait_for(lambda: llm.calls >= 8, 120, "the first batch judged")
            assert _cli(db_url, "pause", "entity_promote")[0] == 0
            wait_for(lambda: _promote_runs(ctx) == ["succeeded"], 120, "the paused run to finish")
            asked = llm.calls
            statuses = {c.status for c in candidates(ctx)}
        finally:
            code, err = stop(daemon)
    assert code == 0, err[-3000:]
    assert "pending" in statuses and asked < 300, (asked, statuses)
    assert llm.calls == asked  # nothing more once it ended
    with ctx.sessions() as s:
        [stats] = s.scalars(select(JobRun.stats).where(JobRun.job_name == "entity_promote"))
    assert stats["stopped"] is True and stats["paused"] is True
    code, shown = _cli(db_url, "status")
    assert "stopped early by a pause; it runs again after `resume`" in shown
    assert "by a signal" not in shown


def _promote_runs(ctx: JobContext) -> list[str]:
    with ctx.sessions() as s:
        return list(s.scalars(select(JobRun.status).where(JobRun.job_name == "entity_promote")))
