"""Every revision upgrades and downgrades on both backends, and the models match the migrations."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from yzos_jobs.db import migrate
from yzos_jobs.db.connection import create_db_engine
from yzos_jobs.db.models import Base

ALL_TABLES = {
    "entities",
    "entity_candidates",
    "entity_sightings",
    "entity_overrides",
    "activity_sessions",
    "app_metadata",
    "importer_seen",
    "importer_files",
    "job_runs",
    "verdict_cache",
    "decisions",
    "session_triage",
    "entity_aliases",
    "job_pauses",
    "llm_usage_days",
}
HEAD = "028"


def _tables(engine) -> set[str]:
    return set(inspect(engine).get_table_names()) - {"alembic_version"}


def test_full_upgrade_downgrade_upgrade_cycle(empty_db_url: str) -> None:
    engine = create_db_engine(empty_db_url)
    try:
        migrate.upgrade(engine)
        assert migrate.current_revision(engine) == HEAD
        assert _tables(engine) == ALL_TABLES
        for rev in ("027", "026", "025", "024", "023", "022", "021", "020", "019", "018", "017"):
            migrate.downgrade(engine, rev)
            assert migrate.current_revision(engine) == rev
        assert "fingerprint" not in {
            c["name"] for c in inspect(engine).get_columns("entity_sightings")
        }
        migrate.downgrade(engine, "base")
        assert migrate.current_revision(engine) is None
        assert _tables(engine) == set()
        migrate.upgrade(engine, "head")
        assert migrate.current_revision(engine) == HEAD
        assert _tables(engine) == ALL_TABLES
    finally:
        engine.dispose()


def test_models_and_migrations_agree(db_url: str) -> None:
    engine = create_db_engine(db_url)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(
                conn, opts={"compare_type": True, "target_metadata": Base.metadata}
            )
            diff = compare_metadata(ctx, Base.metadata)
        assert diff == []
    finally:
        engine.dispose()
