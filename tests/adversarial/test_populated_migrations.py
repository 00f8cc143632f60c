"""Revisions over a database written by revision 021's schema, with rows in every table: the
upgrade scopes what was seen before it by its sessions' repositories (the next session of a
repository adds to its project and task, not beside them), and the way down refuses, in one line
naming them, names that have an entity in each of two repositories. Both backends."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text

from tests.adversarial.database_021 import HARBOR, OTHER, T0, database_at_021
from tests.support.cli import run_cli
from tests.support.jobs import candidates, entities, make_ctx
from yzos_jobs.db import migrate
from yzos_jobs.db.activity_sessions import upsert_activity_session
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import create_db_engine, transaction
from yzos_jobs.db.models import EntityAlias
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.schema_state import head_revision
from yzos_jobs.maintain.jobs import run_entity_promote

pytestmark = pytest.mark.adversarial


def _ids(db_url: str) -> dict[str, list[tuple[int, str]]]:
    engine = create_db_engine(db_url)
    try:
        with engine.connect() as conn:
            return {
                table: [
                    tuple(r)
                    for r in conn.execute(text(f"SELECT id, {name} FROM {table} ORDER BY id"))
                ]
                for table, name in (("entities", "display_name"), ("entity_candidates", "raw_text"))
            }
    finally:
        engine.dispose()


def test_the_next_session_of_a_repository_joins_what_021_knew(empty_db_url: str) -> None:
    database_at_021(empty_db_url)
    before = _ids(empty_db_url)
    upgraded = run_cli("db", "upgrade", db_url=empty_db_url)
    assert upgraded.returncode == 0, upgraded.stderr
    assert _ids(empty_db_url) == before  # SQLite's tables rebuilt (028) keep every row's id
    ctx = make_ctx(empty_db_url)  # dry_run: the next session's candidates promote inline
    rows = [
        NewCandidate("harbor-sync", "ai_tool", "aider-3", "project", None, None, T0, HARBOR, 1),
        NewCandidate(
            "Add release notes draft", "ai_tool", "aider-3", "task", None, None, T0, HARBOR, 9
        ),
    ]
    with transaction(ctx.sessions) as s:
        insert_candidates(s, rows, utcnow())
    stats = run_entity_promote(ctx)
    assert (stats["promoted"], stats["merged"]) == (0, 2)
    by_name = {e.display_name: e for e in entities(ctx)}
    assert len(by_name) == 4
    project, chore = by_name["harbor-sync"], by_name["Add release notes draft"]
    assert project.project_path == HARBOR and chore.project_id == project.id
    assert chore.sighting_count == 3
    # The person is not scoped; the candidates of 021 carry their session's repository.
    assert by_name["Alice Chen"].project_key == ""
    old = [c for c in candidates(ctx) if c.source_id in ("aider-1", "aider-2", "cc-1")]
    assert {c.source_id: c.project_path for c in old} == {
        "aider-1": HARBOR,
        "aider-2": HARBOR,
        "cc-1": OTHER,
    }


def test_downgrade_to_021_refuses_one_name_in_two_repositories_in_one_line(
    empty_db_url: str,
) -> None:
    database_at_021(empty_db_url)
    engine = create_db_engine(empty_db_url)
    try:
        migrate.upgrade(engine)
        ctx = make_ctx(empty_db_url)
        other = NewCandidate("harbor-sync", "ai_tool", "cc-2", "project", None, None, T0, OTHER, 1)
        with transaction(ctx.sessions) as s:
            insert_candidates(s, [other], utcnow())
        run_entity_promote(ctx)
        twins = sorted(e.id for e in entities(ctx) if e.display_name == "harbor-sync")
        assert len(twins) == 2
        with ctx.sessions() as s:
            aliases_before = s.scalar(select(func.count()).select_from(EntityAlias))
        refused = run_cli("db", "downgrade", "021", db_url=empty_db_url)
        assert refused.returncode == 2
        [line] = refused.stderr.strip().splitlines()
        assert f"project 'harbor-sync' (e:{twins[0]}, e:{twins[1]})" in line
        assert "--merge-into" in line
        # Nothing moved: still at head, every entity and alias kept.
        assert migrate.current_revision(engine) == head_revision()
        assert len(entities(ctx)) == 5
        with ctx.sessions() as s:
            assert s.scalar(select(func.count()).select_from(EntityAlias)) == aliases_before
        # Merged as the line says, the way down is open.
        merged = run_cli(
            "correct", f"e:{twins[1]}", "--merge-into", f"e:{twins[0]}", db_url=empty_db_url
        )
        assert merged.returncode == 0, merged.stderr
        down = run_cli("db", "downgrade", "021", db_url=empty_db_url)
        assert down.returncode == 0, down.stderr
        assert migrate.current_revision(engine) == "021"
    finally:
        engine.dispose()


def test_a_segments_task_keeps_its_project_through_a_downgrade_and_back(
    empty_db_url: str,
) -> None:
    # A session read again after it closed as idle writes its later work as segment `<id>#2`:
    # the way back up finds the segment's repository by its session as it does the session's.
    engine = create_db_engine(empty_db_url)
    try:
        migrate.upgrade(engine)
    finally:
        engine.dispose()
    ctx = make_ctx(empty_db_url)
    rows = [
        NewCandidate("harbor-sync", "ai_tool", "aider-9", "project", None, None, T0, HARBOR, 1),
        NewCandidate("Fix billing mailer", "ai_tool", "aider-9#2", "task", None, None, T0, HARBOR),
    ]
    with transaction(ctx.sessions) as s:
        upsert_activity_session(s, "aider", "aider-9", project_path=HARBOR, started_at=T0)
        insert_candidates(s, rows, utcnow())
    run_entity_promote(ctx)

    def linked() -> bool:
        by_name = {e.display_name: e for e in entities(ctx)}
        return by_name["Fix billing mailer"].project_id == by_name["harbor-sync"].id

    assert linked()
    down = run_cli("db", "downgrade", "021", db_url=empty_db_url)
    assert down.returncode == 0, down.stderr
    # the decision trail is gone with revision 023: said, as the way back up brings it empty
    note = down.stdout.strip().splitlines()[-1]
    assert note.startswith("note: dropped with the revisions above 021: decisions (2 rows)")
    up = run_cli("db", "upgrade", db_url=empty_db_url)
    assert up.returncode == 0, up.stderr
    assert linked()
