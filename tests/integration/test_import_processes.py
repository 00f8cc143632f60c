"""Import as a user runs it: killed halfway and run again; JSONL through the pipelines."""

from __future__ import annotations

import json
import os
import signal
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from tests.support.cli import cli_env, run_cli, spawn_cli
from tests.support.daemons import wait_for
from tests.support.jobs import candidates, entities, make_ctx
from yzos_jobs.db.connection import create_db_engine
from yzos_jobs.db.models import EntityCandidate, ImporterSeen
from yzos_jobs.testing import OpenAIDouble, candidate_of, verdict

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _big_jsonl(path: Path, n: int) -> None:
    with path.open("w") as fh:
        for i in range(n):
            fh.write(
                json.dumps(
                    {
                        "record_id": f"r{i}",
                        "session_id": f"s{i // 100}",
                        "type": "candidate",
                        "raw_text": f"Item {i}",
                        "suggested_kind": "task",
                        "source_kind": "clipboard",
                        "surrounding_text": f"Working on item {i} today",
                    }
                )
                + "\n"
            )


@pytest.mark.slow
def test_import_killed_halfway_then_rerun_imports_every_record_once(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "big.jsonl"
    # Big enough that the import is still running when the test sees its first rows (it reads
    # about 30,000 records a second on a quiet machine), small enough to import twice quickly.
    _big_jsonl(path, 30_000)
    ctx = make_ctx(db_url)
    proc = spawn_cli("import", "jsonl", str(path), env=cli_env(db_url), cwd=tmp_path)

    def imported() -> int:
        with ctx.sessions() as s:
            return int(s.scalar(select(func.count()).select_from(EntityCandidate)) or 0)

    wait_for(lambda: imported() >= 1_000 or proc.poll() is not None, 120, "the first rows")
    assert proc.poll() is None, (
        "the import finished before it could be killed; make the file bigger"
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    halfway = imported()
    assert 0 < halfway < 30_000
    rerun = run_cli("import", "jsonl", str(path), db_url=db_url, cwd=tmp_path, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    with ctx.sessions() as s:
        total = s.scalar(select(func.count()).select_from(EntityCandidate))
        distinct = s.scalar(select(func.count(func.distinct(EntityCandidate.raw_text))))
        seen = s.scalar(select(func.count()).where(ImporterSeen.importer_name == "jsonl"))
    assert total == distinct == seen == 30_000


@pytest.mark.postgres
def test_jsonl_end_to_end_dry_run(pg_url: str, tmp_path: Path) -> None:
    result = run_cli(
        "import", "jsonl", str(FIXTURES / "observations.jsonl"), db_url=pg_url, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "errors 3" in result.stdout
    ctx = make_ctx(pg_url)
    by_text = {c.raw_text: c.status for c in candidates(ctx)}
    # dry_run lets everything with a kind in, Telegram included (the purge re-judges it later)
    assert by_text["Telegram"] == by_text["YZOS Core"] == "promoted"
    promote = run_cli("once", "entity_promote", "--json", db_url=pg_url, cwd=tmp_path)
    assert json.loads(promote.stdout)["promoted"] == 1  # Project Phoenix, from the open session


@pytest.mark.postgres
def test_jsonl_end_to_end_with_the_llm(pg_url: str, tmp_path: Path) -> None:
    def judge(body):
        cand = candidate_of(body)
        if cand.get("app_category"):
            return verdict("app")
        if cand["raw_text"].startswith("/"):
            return verdict("noise")
        return verdict(cand["suggested_kind"], name=cand["raw_text"])

    with OpenAIDouble(judge) as llm:
        env = cli_env(pg_url, YZOS_LLM_BACKEND="openai", YZOS_LLM_BASE_URL=llm.base_url)
        result = run_cli(
            "import", "jsonl", str(FIXTURES / "observations.jsonl"), env=env, cwd=tmp_path
        )
    assert result.returncode == 0, result.stderr
    ctx = make_ctx(pg_url)
    status = {c.raw_text: (c.status, c.reject_reason) for c in candidates(ctx)}
    # the app record came first, so the prompt carried Telegram's category: rejected as an app
    assert status["Telegram"][0] == "rejected" and status["Telegram"][1].startswith("app")
    assert status["/Users/me/Code"][0] == "rejected"
    assert status["YZOS Core"][0] == status["Alice Chen"][0] == "promoted"
    telegram_asks = [
        candidate_of(r) for r in llm.requests if candidate_of(r)["raw_text"] == "Telegram"
    ]
    assert telegram_asks[0]["app_category"] == "public.app-category.social-networking"
    kinds = {(e.kind, e.display_name) for e in entities(ctx)}
    assert ("person", "陈晓明") in kinds and ("project", "yzos-jobs") in kinds


def test_apps_scan_reads_xml_and_binary_plists_and_desktop_entries(
    db_url: str, tmp_path: Path
) -> None:
    result = run_cli("apps", "scan", str(FIXTURES / "apps"), db_url=db_url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    from yzos_jobs.db.models import AppMetadataRow

    with make_ctx(db_url).sessions() as s:
        rows = {
            r.bundle_id: (r.bundle_name, r.category, r.source)
            for r in s.scalars(select(AppMetadataRow))
        }
    assert rows == {
        "com.tdesktop.Telegram": (
            "Telegram",
            "public.app-category.social-networking",
            "info_plist",
        ),
        "com.microsoft.VSCode": ("Code", "public.app-category.developer-tools", "info_plist"),
        "org.gnome.Nautilus": ("Files", "GNOME;GTK;Utility;Core;FileManager", "desktop_entry"),
    }


def test_missing_import_path_is_one_line_and_non_zero(tmp_path: Path) -> None:
    for args in (
        ("import", "aider", "nope"),
        ("import", "jsonl", "nope.jsonl"),
        ("import", "claude-code", "nope"),
        ("apps", "scan", "nope"),
    ):
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode != 0
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "nope" in lines[0] and "Traceback" not in result.stderr


def _history(path: Path, sessions: int) -> None:
    start = datetime(2026, 3, 1, 9, 0)
    blocks = [
        f"# aider chat started at {start + timedelta(minutes=i):%Y-%m-%d %H:%M:%S}\n\n"
        f"> Git repo: /Users/me/Code/shop-{i % 3}/.git with 40 files\n\n"
        f"#### Add the invoice export number {i} to the billing page\n\n"
        "Sure, here is the change.\n\n"
        for i in range(sessions)
    ]
    path.write_text("".join(blocks))
    old = time.time() - 3600
    os.utime(path, (old, old))  # idle: its last session is closed too


@pytest.mark.postgres
def test_a_session_end_that_fails_leaves_its_candidates_pending(
    pg_url: str, tmp_path: Path
) -> None:
    """On PostgreSQL the session end promotes beside the reading of the next sessions. When it
    fails (here the database refuses every new entity), the import fails with one line, the
    sessions stay imported, and their candidates wait, unclaimed, for entity_promote."""
    engine = create_db_engine(pg_url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'no new entities today'; END $$"
            )
        )
        conn.execute(
            text("CREATE TRIGGER refuse BEFORE INSERT ON entities EXECUTE FUNCTION refuse()")
        )
    history = tmp_path / ".aider.chat.history.md"
    _history(history, 1200)  # more than one promote's worth of ended sessions

    result = run_cli("import", "aider", str(history), db_url=pg_url, cwd=tmp_path)
    assert result.returncode != 0
    assert "no new entities today" in result.stderr
    assert "Traceback" not in result.stderr
    ctx = make_ctx(pg_url)
    waiting = candidates(ctx)
    assert len({c.source_id for c in waiting}) >= 1000  # the sessions read so far are kept
    assert all(c.status == "pending" and c.claimed_by is None for c in waiting)

    with engine.begin() as conn:
        conn.execute(text("DROP TRIGGER refuse ON entities"))
    engine.dispose()
    promote = run_cli("once", "entity_promote", "--json", db_url=pg_url, cwd=tmp_path)
    assert promote.returncode == 0, promote.stderr
    assert {c.status for c in candidates(ctx)} == {"promoted"}
