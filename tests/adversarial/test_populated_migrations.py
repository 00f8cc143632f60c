"""Revisions over a database written by revision 021's schema, with rows in every table: the
upgrade scopes what was seen before it by its sessions' repositories (the next session of a
repository adds to its project and task, not beside them), and the way down refuses, in one line
naming them, names that have an entity in each of two repositories. Both backends."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import Connection, func, select, text

from tests.support.cli import run_cli
from tests.support.jobs import candidates, entities, make_ctx
from yzos_jobs.db import migrate
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import create_db_engine, transaction
from yzos_jobs.db.models import EntityAlias
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.schema_state import head_revision
from yzos_jobs.maintain.jobs import run_entity_promote

pytestmark = pytest.mark.adversarial

T0 = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)
HARBOR = "/Users/me/Code/harbor-sync"
OTHER = "/Users/me/Code/kestrel"


def _row(conn: Connection, sql: str, **values: object) -> None:
    conn.execute(text(sql), {"t": T0, **values})


def _entity(conn: Connection, kind: str, name: str, path: str | None = None) -> int:
    _row(
        conn,
        "INSERT INTO entities (kind, display_name, normalized_name, status, project_path,"
        " verdict_source, sighting_count, first_seen_at, last_seen_at, created_at, updated_at)"
        " VALUES (:k, :n, :nn, 'active', :p, 'dry_run', 0, :t, :t, :t, :t)",
        k=kind,
        n=name,
        nn=name.casefold(),
        p=path,
    )
    return int(
        conn.execute(
            text("SELECT id FROM entities WHERE kind = :k AND normalized_name = :nn"),
            {"k": kind, "nn": name.casefold()},
        ).scalar_one()
    )


def _seen(conn: Connection, entity_id: int, text_: str, kind: str, session: str) -> None:
    """A promoted candidate of an aider session and its sighting, as revision 021 wrote them."""
    _row(
        conn,
        "INSERT INTO entity_candidates (raw_text, suggested_kind, source_kind, source_id,"
        " status, attempts, entity_id, created_at, updated_at, decided_at)"
        " VALUES (:r, :k, 'ai_tool', :s, 'promoted', 1, :e, :t, :t, :t)",
        r=text_,
        k=kind,
        s=session,
        e=entity_id,
    )
    _row(
        conn,
        "INSERT INTO entity_sightings (entity_id, source_kind, source_id, summary, seen_at,"
        " fingerprint) VALUES (:e, 'ai_tool', :s, :r, :t, :f)",
        e=entity_id,
        s=session,
        r=text_,
        f=f"{entity_id}-{session}",
    )
    _row(conn, "UPDATE entities SET sighting_count = sighting_count + 1 WHERE id = :e", e=entity_id)


def _database_at_021(url: str) -> None:
    """Every table of revision 021 with rows: a project and a task of one repository, a person,
    an archived entity, their sessions, app metadata, importer state, a job run, a cached
    verdict."""
    engine = create_db_engine(url)
    try:
        migrate.upgrade(engine, "021")
        with engine.begin() as conn:
            project = _entity(conn, "project", "harbor-sync")
            chore = _entity(conn, "task", "Add release notes draft")
            person = _entity(conn, "person", "Alice Chen")
            gone = _entity(conn, "project", "Telegram")
            for sid, path in (("aider-1", HARBOR), ("aider-2", HARBOR), ("cc-1", OTHER)):
                _row(
                    conn,
                    "INSERT INTO activity_sessions (source_kind, external_id, project_path,"
                    " started_at, ended_at, status) VALUES ('aider', :s, :p, :t, :t, 'ended')",
                    s=sid,
                    p=path,
                )
            _seen(conn, project, "harbor-sync", "project", "aider-1")
            _seen(conn, chore, "Add release notes draft", "task", "aider-1")
            _seen(conn, chore, "add release notes draft", "task", "aider-2")
            _seen(conn, person, "Alice Chen", "person", "cc-1")
            _seen(conn, gone, "Telegram", "project", "cc-1")
            _row(
                conn,
                "INSERT INTO entity_overrides (entity_id, status, reason, set_by, created_at)"
                " VALUES (:e, 'archived', 'an app', 'entity_purge_v06', :t)",
                e=gone,
            )
            _row(
                conn,
                "INSERT INTO app_metadata (bundle_id, bundle_name, category, source, updated_at)"
                " VALUES ('com.tdesktop.Telegram', 'Telegram', 'social', 'jsonl', :t)",
            )
            _row(
                conn,
                "INSERT INTO importer_seen (importer_name, session_id, record_id, last_seen)"
                " VALUES ('aider', 'aider-1', 'r1', :t)",
            )
            _row(
                conn,
                'INSERT INTO importer_files (importer_name, path, size, mtime_ns, "offset",'
                " head_hash, updated_at) VALUES ('aider', :p, 10, 1, 10, 'h', :t)",
                p=f"{HARBOR}/.aider.chat.history.md",
            )
            _row(
                conn,
                "INSERT INTO job_runs (job_name, slot, status, owner, started_at, finished_at)"
                " VALUES ('entity_promote', 'once:1', 'succeeded', 'host:1', :t, :t)",
            )
            _row(
                conn,
                "INSERT INTO verdict_cache (model_id, prompt_version, input_hash, verdict,"
                " created_at, expires_at) VALUES ('m', 'v1', 'h', '{}', :t, :t)",
            )
    finally:
        engine.dispose()


def test_the_next_session_of_a_repository_joins_what_021_knew(empty_db_url: str) -> None:
    _database_at_021(empty_db_url)
    upgraded = run_cli("db", "upgrade", db_url=empty_db_url)
    assert upgraded.returncode == 0, upgraded.stderr
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
    _database_at_021(empty_db_url)
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
