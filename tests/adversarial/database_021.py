"""A database written by revision 021's schema with rows in every table: a project and a task of
one repository, a person, an archived entity, their aider sessions, app metadata, importer state,
a job run, a cached verdict."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, text

from yzos_jobs.db import migrate
from yzos_jobs.db.connection import create_db_engine

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


def database_at_021(url: str) -> None:
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
