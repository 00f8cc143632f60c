"""`once` and `status` as an operator uses them (health probes included)."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import text

from tests.support.cli import REPO, assert_one_line_error, run_cli
from tests.support.jobs import add_candidates, make_ctx
from yzos_jobs.db.connection import create_db_engine

EXAMPLES = REPO / "examples" / "observations.jsonl"


def _rename(db_url: str, old: str, new: str) -> None:
    engine = create_db_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text(f"ALTER TABLE {old} RENAME TO {new}"))
    engine.dispose()


def test_status_check_fails_after_a_failed_run_and_passes_after_a_good_one(
    db_url: str, tmp_path: Path
) -> None:
    add_candidates(make_ctx(db_url), {"raw_text": "YZOS Core"})
    _rename(db_url, "entity_sightings", "entity_sightings_away")
    failed = run_cli("once", "entity_promote", db_url=db_url, cwd=tmp_path)
    assert failed.returncode == 1
    assert "entity_promote failed" in failed.stdout
    check = run_cli("status", "--check", db_url=db_url, cwd=tmp_path)
    assert check.returncode == 1
    assert "entity_promote: last run failed" in check.stderr

    _rename(db_url, "entity_sightings_away", "entity_sightings")
    good = run_cli("once", "entity_promote", "--json", db_url=db_url, cwd=tmp_path)
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["promoted"] == 1
    assert run_cli("status", "--check", db_url=db_url, cwd=tmp_path).returncode == 0


def test_once_prints_its_counts_and_logs_them_when_asked(db_url: str, tmp_path: Path) -> None:
    add_candidates(
        make_ctx(db_url),
        {"raw_text": "Alpha"},
        {"raw_text": "alpha"},
        {"raw_text": "42"},  # structural junk: rejected even without a model
    )
    result = run_cli("-v", "once", "entity_promote", db_url=db_url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("entity_promote succeeded  promoted 1  merged 1  rejected 1")
    logged = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    finished = [e for e in logged if e["event"] == "job finished"]
    assert finished and finished[0]["promoted"] == 1 and finished[0]["owner"]


def test_status_json_reports_queue_entities_runs_and_daemons(db_url: str, tmp_path: Path) -> None:
    add_candidates(
        make_ctx(db_url), {"raw_text": "Alpha"}, {"raw_text": "Bob", "suggested_kind": "person"}
    )
    run_cli("once", "entity_promote", db_url=db_url, cwd=tmp_path)
    add_candidates(make_ctx(db_url), {"raw_text": "Later"})
    result = run_cli("status", "--json", db_url=db_url, cwd=tmp_path)
    report = json.loads(result.stdout)
    # every status and kind, those with none at 0: a monitor reads the same keys every time
    assert report["candidates"] == {
        "pending": 1,
        "held": 0,
        "claimed": 0,
        "promoted": 2,
        "rejected": 0,
    }
    assert report["triage"] == {"pending": 0, "claimed": 0, "done": 0, "exhausted": 0}
    assert report["entities"]["active"] == {"person": 1, "project": 1, "task": 0}
    assert report["entities"]["archived"] == {"person": 0, "project": 0, "task": 0}
    assert report["jobs"]["entity_promote"]["status"] == "succeeded"
    assert len(report["daemons"]) == 1


def test_purge_alias_and_unmigrated_postgres_refusal(empty_db_url: str, tmp_path: Path) -> None:
    result = run_cli("once", "entity_purge", db_url=empty_db_url, cwd=tmp_path)
    if empty_db_url.startswith("sqlite"):
        assert result.returncode == 0, result.stderr  # embedded: migrated on first use
        assert result.stdout.startswith("entity_purge_v06 succeeded")
    else:
        assert result.returncode == 1
        assert "run `yzos-jobs db upgrade`" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_a_command_run_away_from_the_database_names_it_rather_than_make_an_empty_one(
    tmp_path: Path,
) -> None:
    # the daemon keeps the default relative database in its own folder; a person runs a review
    # command or a pause from another with the same settings
    daemon, elsewhere = tmp_path / "daemon", tmp_path / "home"
    daemon.mkdir()
    elsewhere.mkdir()
    imported = run_cli("import", "jsonl", str(EXAMPLES), cwd=daemon)
    assert imported.returncode == 0, imported.stderr
    for command in (
        ["status", "--check"],
        ["entities"],
        ["db", "current"],
        ["pause", "entity_promote"],
        ["correct", "Telegram", "--not-entity"],
        ["db", "downgrade", "021"],
    ):
        ran = run_cli(*command, cwd=elsewhere)
        assert_one_line_error(
            ran, 1, f"no database at {elsewhere / 'yzos.db'}", "set database.url to an absolute"
        )
    assert list(elsewhere.iterdir()) == []
    # named absolutely, it is found from anywhere
    absolute = run_cli("status", db_url=f"sqlite:///{daemon / 'yzos.db'}", cwd=elsewhere)
    assert absolute.returncode == 0, absolute.stderr
    assert "candidates  pending" in absolute.stdout
    assert list(elsewhere.iterdir()) == []
