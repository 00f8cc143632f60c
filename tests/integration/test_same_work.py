"""The same work proposed by two importers (two daemons on one PostgreSQL database) is one task:
each batch reads the project's tasks made since and its task candidates not promoted yet, with
the project locked until the batch is written. (SQLite, the embedded default, has one daemon:
an import reads a project's open tasks once.)"""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from tests.support.corpus import REAL
from tests.support.jobs import add_candidates, entities, make_ctx
from yzos_jobs.config import load_settings
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.entities import project_key
from yzos_jobs.db.project_work import lock_projects, project_lock_key
from yzos_jobs.importers.same_work import OPEN_TASKS, OpenTaskNames
from yzos_jobs.maintain.jobs import run_entity_promote

REPO = "/home/ana/work/roles"
ASKED = "Añadir funcionalidad de aprobación de roles para admins"
ASKED_AGAIN = "agregar funcionalidad de aprobación de roles para los admins"
THRESHOLD = load_settings(REAL.parents[2] / "config.toml").importers.same_task_similarity


def _waiting(*names: str) -> list[dict[str, str]]:
    return [
        {"raw_text": n, "suggested_kind": "task", "source_kind": "ai_tool", "project_path": REPO}
        for n in names
    ]


def test_work_another_importer_proposed_meanwhile_is_the_same_task(pg_url: str) -> None:
    ctx = make_ctx(pg_url)
    other_daemon = OpenTaskNames(THRESHOLD)
    with transaction(ctx.sessions) as s:  # its batch before: nothing open in the project yet
        other_daemon.load(s, [REPO])
        assert other_daemon.same_work(REPO, "Set up the CI workflow") is None
        # within the batch, what it proposed is known to the sessions after
        assert other_daemon.same_work(REPO, "Set up the CI workflows") == "Set up the CI workflow"
    # meanwhile this daemon's batch proposed the work, waiting for a promote run
    add_candidates(ctx, *_waiting(ASKED))
    with transaction(ctx.sessions) as s:  # its next batch asks for the same work again
        other_daemon.load(s, [REPO])
        assert other_daemon.same_work(REPO, ASKED_AGAIN) == ASKED
        # and what it proposed itself before is still known to it
        assert other_daemon.same_work(REPO, "Set up the CI workflows") == "Set up the CI workflow"


def test_a_task_another_importer_made_meanwhile_is_the_same_work(pg_url: str) -> None:
    ctx = make_ctx(pg_url)
    other_daemon = OpenTaskNames(THRESHOLD)
    with transaction(ctx.sessions) as s:  # its first batch read the project: nothing open
        other_daemon.load(s, [REPO])
    # meanwhile this daemon proposed the work and its promote run made the task
    add_candidates(ctx, *_waiting(ASKED))
    run_entity_promote(ctx)
    assert [e.display_name for e in entities(ctx) if e.kind == "task"] == [ASKED]
    with transaction(ctx.sessions) as s:
        other_daemon.load(s, [REPO])
        assert other_daemon.same_work(REPO, ASKED_AGAIN) == ASKED


def test_the_newest_proposals_are_compared_with_first_when_there_are_too_many(
    pg_url: str,
) -> None:
    ctx = make_ctx(pg_url)
    names = OpenTaskNames(THRESHOLD)
    with transaction(ctx.sessions) as s:
        names.load(s, [REPO])
    add_candidates(ctx, *_waiting(*(f"Port module {n:04d} to the new API" for n in range(600))))
    with transaction(ctx.sessions) as s:
        names.load(s, [REPO])
        # the newest of more than OPEN_TASKS waiting names is among those compared with
        assert OPEN_TASKS < 600
        assert names.same_work(REPO, "port module 0599 to the new API") == (
            "Port module 0599 to the new API"
        )


def test_a_batch_holds_its_projects_until_it_is_written(pg_url: str) -> None:
    ctx = make_ctx(pg_url)
    held = project_lock_key(project_key(REPO))
    with transaction(ctx.sessions) as batch:
        lock_projects(batch, [project_key(REPO)])
        with ctx.sessions() as other:
            taken = other.scalar(text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": held})
            assert taken is False  # another daemon's batch of the project waits
            other.rollback()
    with ctx.sessions() as other:
        assert other.scalar(text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": held}) is True
        other.rollback()


def test_reading_a_project_for_a_batch_waits_for_another_batch_of_it(pg_url: str) -> None:
    ctx = make_ctx(pg_url)
    with transaction(ctx.sessions) as batch:
        lock_projects(batch, [project_key(REPO)])
        with ctx.sessions() as other:
            other.execute(text("SET LOCAL lock_timeout = '200ms'"))
            with pytest.raises(OperationalError, match="lock timeout"):
                OpenTaskNames(THRESHOLD).load(other, [REPO])
            other.rollback()
