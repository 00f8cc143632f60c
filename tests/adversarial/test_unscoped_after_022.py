"""A database that ran revision 022 before 022 filled the scope of what came before it: its rows
of 021 are unscoped (candidates without a repository, projects and tasks keyed ''). Revision 027
scopes them by their sessions' repositories, so the next session of a repository adds to the old
task; one whose repository already has an entity of its kind and name stays unscoped and the
upgrade goes through. Both backends."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from tests.adversarial.database_021 import HARBOR, OTHER, T0, database_at_021
from tests.support.cli import run_cli
from tests.support.jobs import candidates, entities, make_ctx
from yzos_jobs.db import migrate
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import create_db_engine, transaction
from yzos_jobs.db.entities import project_key
from yzos_jobs.db.models import Entity
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.schema_state import head_revision
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.jobs import run_entity_promote

pytestmark = pytest.mark.adversarial

TASK = "Add release notes draft"


def _at_026_unscoped(url: str) -> None:
    """021's rows taken to 026 and left as 022 left them before it filled their scope."""
    database_at_021(url)
    engine = create_db_engine(url)
    try:
        migrate.upgrade(engine, "026")
        with engine.begin() as conn:
            conn.execute(text("UPDATE entity_candidates SET project_path = NULL"))
            conn.execute(
                text("UPDATE entities SET project_key = '', project_path = NULL, project_id = NULL")
            )
    finally:
        engine.dispose()


def _next_session(ctx: JobContext, session: str) -> dict[str, int]:
    rows = [
        NewCandidate("harbor-sync", "ai_tool", session, "project", None, None, T0, HARBOR, 1),
        NewCandidate(TASK, "ai_tool", session, "task", None, None, T0, HARBOR, 9),
    ]
    with transaction(ctx.sessions) as s:
        insert_candidates(s, rows, utcnow())
    return run_entity_promote(ctx)


def _upgrade_to_head(url: str) -> None:
    upgraded = run_cli("db", "upgrade", db_url=url)
    assert upgraded.returncode == 0, upgraded.stderr
    engine = create_db_engine(url)
    try:
        assert migrate.current_revision(engine) == head_revision() == "028"
    finally:
        engine.dispose()


def _by_name(ctx: JobContext) -> dict[str, list[Entity]]:
    found: dict[str, list[Entity]] = {}
    for e in entities(ctx):
        found.setdefault(e.display_name, []).append(e)
    return found


def test_the_next_session_of_a_repository_finds_the_task_022_left_unscoped(
    empty_db_url: str,
) -> None:
    _at_026_unscoped(empty_db_url)
    _upgrade_to_head(empty_db_url)
    ctx = make_ctx(empty_db_url)  # dry_run: the next session's candidates promote inline
    old = {c.source_id: c.project_path for c in candidates(ctx)}
    assert old == {"aider-1": HARBOR, "aider-2": HARBOR, "cc-1": OTHER}
    stats = _next_session(ctx, "aider-3")
    assert (stats["promoted"], stats["merged"]) == (0, 2)
    by_name = _by_name(ctx)
    assert len(entities(ctx)) == 4
    [project], [chore] = by_name["harbor-sync"], by_name[TASK]
    assert (project.project_path, project.project_key) == (HARBOR, project_key(HARBOR))
    assert chore.project_key == project_key(HARBOR) and chore.project_id == project.id
    assert chore.sighting_count == 3
    # A person is not scoped; Telegram was seen in kestrel only, so it is kestrel's.
    [person], [telegram] = by_name["Alice Chen"], by_name["Telegram"]
    assert person.project_key == ""
    assert telegram.project_path == OTHER


def test_a_task_whose_repository_already_has_its_twin_stays_unscoped(empty_db_url: str) -> None:
    _at_026_unscoped(empty_db_url)
    ctx = make_ctx(empty_db_url)
    with ctx.sessions() as s:
        [chore_id] = s.execute(
            text("SELECT id FROM entities WHERE display_name = :n"), {"n": TASK}
        ).scalars()
    # What the unscoped 022 did: a session after it made a scoped twin beside the old ones.
    assert _next_session(ctx, "aider-3")["promoted"] == 2
    twins = _by_name(ctx)
    [new_chore] = [e for e in twins[TASK] if e.id != chore_id]
    [new_project] = [e for e in twins["harbor-sync"] if e.project_key]
    # The new project was renamed since, so its old key is an alias: the task alone has a twin.
    with transaction(ctx.sessions) as s:
        s.execute(
            text(
                "UPDATE entities SET display_name = 'harbor', normalized_name = 'harbor'"
                " WHERE id = :e"
            ),
            {"e": new_project.id},
        )
        s.execute(
            text(
                "INSERT INTO entity_aliases (kind, normalized_name, project_key, entity_id,"
                " set_by, created_at) VALUES ('project', 'harbor-sync', :k, :e, 'user', :t)"
            ),
            {"k": project_key(HARBOR), "e": new_project.id, "t": T0},
        )

    _upgrade_to_head(empty_db_url)
    by_id = {e.id: e for e in entities(ctx)}
    old_chore = by_id[chore_id]
    telegram = _by_name(ctx)["Telegram"][0]
    assert telegram.project_path == OTHER  # what has no twin is scoped all the same
    assert (old_chore.project_key, old_chore.project_id) == ("", None)
    assert by_id[new_chore.id].project_key == project_key(HARBOR)
    # The old project's key is an alias of the renamed one: it stays unscoped too, and the
    # next session's "harbor-sync" still lands on the renamed project.
    [old_project] = _by_name(ctx)["harbor-sync"]
    assert old_project.project_key == ""
    stats = _next_session(ctx, "aider-4")
    assert (stats["promoted"], stats["merged"]) == (0, 2)
    assert len(entities(ctx)) == len(by_id)
    # Merged as the docs say, the old task's work joins the scoped one.
    merged = run_cli(
        "correct", f"e:{chore_id}", "--merge-into", f"e:{new_chore.id}", db_url=empty_db_url
    )
    assert merged.returncode == 0, merged.stderr
    assert [e.id for e in _by_name(ctx)[TASK]] == [new_chore.id]


def test_a_task_its_twin_was_merged_into_takes_the_twins_key(empty_db_url: str) -> None:
    _at_026_unscoped(empty_db_url)
    ctx = make_ctx(empty_db_url)
    with transaction(ctx.sessions) as s:
        chore_id = s.execute(
            text("SELECT id FROM entities WHERE display_name = :n"), {"n": TASK}
        ).scalar_one()
        # A scoped twin merged into the old task leaves its key as an alias of the old task.
        s.execute(
            text(
                "INSERT INTO entity_aliases (kind, normalized_name, project_key, entity_id,"
                " set_by, created_at) VALUES ('task', :n, :k, :e, 'user', :t)"
            ),
            {"n": TASK.casefold(), "k": project_key(HARBOR), "e": chore_id, "t": T0},
        )
    _upgrade_to_head(empty_db_url)
    chore = _by_name(ctx)[TASK][0]
    assert (chore.id, chore.project_key) == (chore_id, project_key(HARBOR))
    with ctx.sessions() as s:
        left = s.execute(text("SELECT count(*) FROM entity_aliases")).scalar_one()
    assert left == 0  # the key names the task itself now
    stats = _next_session(ctx, "aider-3")
    assert (stats["promoted"], stats["merged"]) == (0, 2)
    assert [e.id for e in _by_name(ctx)[TASK]] == [chore_id]
