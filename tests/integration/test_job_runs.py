"""job_runs: one run per (job, slot); a dead owner's run is failed when its lease ends."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from tests.support.jobs import make_ctx
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.models import JobRun
from yzos_jobs.maintain import slots
from yzos_jobs.maintain.runner import run_job
from yzos_jobs.status import collect_status


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
