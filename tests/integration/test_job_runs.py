"""job_runs: one run per (job, slot); a dead owner's run is failed when its lease ends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from tests.support.jobs import make_ctx
from yzos_jobs.db import job_runs
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import run_in_transaction, transaction
from yzos_jobs.db.models import JobRun
from yzos_jobs.maintain import slots
from yzos_jobs.maintain.runner import run_job
from yzos_jobs.status import collect_status, render_status


def test_a_slot_runs_once_and_a_dead_owners_slot_can_run_again(db_url: str) -> None:
    ctx = make_ctx(db_url)
    slot = slots.interval_slot(utcnow(), timedelta(hours=6))
    assert run_job(ctx, "entity_purge_v06", slot).status == "succeeded"
    other = make_ctx(db_url, owner="other:2")
    assert run_job(other, "entity_purge_v06", slot).status == "skipped"

    # A daemon died holding the next slot: its row is running, its lease over.
    dead_slot = "2026-01-01T06:00:00Z"
    with transaction(ctx.sessions) as s:
        s.add(
            JobRun(
                job_name="entity_purge_v06",
                slot=dead_slot,
                status="running",
                owner="dead:1",
                started_at=utcnow() - timedelta(minutes=5),
                lease_until=utcnow() - timedelta(seconds=1),
            )
        )
    result = run_job(other, "entity_purge_v06", dead_slot)
    assert result.status == "succeeded"
    with ctx.sessions() as s:
        row = s.scalar(select(JobRun).where(JobRun.slot == dead_slot))
    assert (row.owner, row.status) == ("other:2", "succeeded")


def test_a_live_running_slot_is_not_taken(db_url: str) -> None:
    ctx = make_ctx(db_url)
    with transaction(ctx.sessions) as s:
        s.add(
            JobRun(
                job_name="entity_purge_v06",
                slot="s1",
                status="running",
                owner="alive:1",
                started_at=utcnow(),
                lease_until=utcnow() + timedelta(minutes=1),
            )
        )
    assert run_job(ctx, "entity_purge_v06", "s1").status == "skipped"


def test_status_says_the_purge_did_nothing_without_a_model(db_url: str) -> None:
    ctx = make_ctx(db_url)  # dry_run: no model to re-judge with
    assert run_job(ctx, "entity_purge_v06", "s1").status == "succeeded"
    with ctx.sessions() as s:
        shown = render_status(collect_status(s, ctx.settings))
    lines = shown.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("entity_purge_v06"))
    assert lines[at].startswith("entity_purge_v06   succeeded")
    assert lines[at + 1].strip() == "did nothing: dry_run: no model to re-judge with"


def test_status_reports_an_overdue_job(db_url: str) -> None:
    ctx = make_ctx(db_url, entity_promote={"interval_s": 60})
    with transaction(ctx.sessions) as s:
        s.add(
            JobRun(
                job_name="entity_promote",
                slot="old",
                status="succeeded",
                owner="x:1",
                started_at=utcnow() - timedelta(hours=1),
                finished_at=utcnow(),
            )
        )
    with ctx.sessions() as s:
        report = collect_status(s, ctx.settings)
    assert report["jobs"]["entity_promote"]["overdue"] is True
    assert report["problems"] and "overdue" in report["problems"][0]


def test_idempotent_work_is_done_again_when_its_connection_drops(pg_url: str) -> None:
    ctx = make_ctx(pg_url)
    handle = slots.claim_slot(ctx.sessions, "entity_promote", "dropped", ctx.owner, 60)
    assert handle is not None
    attempts: list[int] = []

    def record_end(s: Session) -> None:
        attempts.append(len(attempts) + 1)
        if len(attempts) == 1:  # the server ends this connection mid-transaction
            s.execute(text("SELECT pg_terminate_backend(pg_backend_pid())"))
        job_runs.finish_run(s, handle.id, handle.owner, {"promoted": 3}, None, utcnow())

    with pytest.raises(DBAPIError):  # by default a dropped connection is the caller's to handle
        run_in_transaction(ctx.sessions, record_end)
    attempts.clear()
    run_in_transaction(ctx.sessions, record_end, idempotent=True)
    assert attempts == [1, 2]
    with ctx.sessions() as s:
        row = s.get(JobRun, handle.id)
    assert (row.status, row.stats) == ("succeeded", {"promoted": 3})


def test_a_runs_end_is_recorded_though_its_connection_ends_while_recording_it(
    pg_url: str,
) -> None:
    ctx = make_ctx(pg_url)
    handle = slots.claim_slot(ctx.sessions, "entity_promote", "ends-mid-record", ctx.owner, 60)
    assert handle is not None
    # The server ends the backend in the middle of the first update of job_runs (a sequence
    # counts the attempts: it is not rolled back with the transaction).
    with transaction(ctx.sessions) as s:
        s.execute(text("CREATE SEQUENCE record_attempts"))
        s.execute(
            text(
                "CREATE FUNCTION end_first_attempt() RETURNS trigger AS $$ BEGIN "
                "IF nextval('record_attempts') = 1 THEN "
                "PERFORM pg_terminate_backend(pg_backend_pid()); END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
        )
        s.execute(
            text(
                "CREATE TRIGGER end_first_attempt BEFORE UPDATE ON job_runs "
                "FOR EACH ROW EXECUTE FUNCTION end_first_attempt()"
            )
        )
    slots.finish_run(ctx.sessions, handle, {"promoted": 2}, None)
    with ctx.sessions() as s:
        row = s.get(JobRun, handle.id)
        attempts = s.scalar(text("SELECT last_value FROM record_attempts"))
    assert (row.status, row.stats, attempts) == ("succeeded", {"promoted": 2}, 2)


def test_a_run_the_database_refuses_before_it_begins_is_a_failed_run(db_url: str) -> None:
    # the pause table gone from under a daemon (a database dropped and made again): the run
    # cannot learn whether it is paused; it fails as a run, which the daemon's metrics and log
    # count, rather than raising into the scheduler
    ctx = make_ctx(db_url)
    with transaction(ctx.sessions) as s:
        s.execute(text("ALTER TABLE job_pauses RENAME TO job_pauses_away"))
    result = run_job(ctx, "entity_promote")
    assert result.status == "failed" and result.error is not None
    assert "job_pauses" in result.error
    forced = run_job(ctx, "entity_promote", force=True)  # not asked whether paused: it runs
    assert forced.status == "succeeded", forced.error


def test_status_says_a_run_whose_process_stopped_did_not_finish(db_url: str) -> None:
    # `once` stopped by a signal, or a daemon killed: its row stays "running" with a lease nobody
    # renews any more; `status` (and `status --check`) says the run stopped unfinished
    ctx = make_ctx(db_url)
    started = utcnow() - timedelta(minutes=10)
    with transaction(ctx.sessions) as s:
        for name, lease in (("import_sources", -5), ("entity_promote", 5)):
            s.add(
                JobRun(
                    job_name=name,
                    slot="s1",
                    status="running",
                    owner="vm:18955",
                    started_at=started,
                    lease_until=utcnow() + timedelta(minutes=lease),
                )
            )
    with ctx.sessions() as s:
        report = collect_status(s, ctx.settings)
    assert report["jobs"]["import_sources"]["unfinished"] is True
    assert report["jobs"]["entity_promote"]["unfinished"] is False  # still renewed: at work
    [problem] = [p for p in report["problems"] if p.startswith("import_sources")]
    assert "vm:18955" in problem and "stopped without finishing" in problem
    lines = render_status(report).splitlines()
    assert any(line.startswith("import_sources     stopped unfinished ") for line in lines)
    assert any(line.startswith("entity_promote     running at") for line in lines)
