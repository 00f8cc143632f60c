"""What the summaries count: `status` shows held candidates and the session triage queue, and a
JSONL import counts each session once however many batches its records span. Both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.jobs import T0, make_ctx
from yzos_jobs.db.activity_sessions import upsert_activity_session
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.triage_queue import queue_triage

pytestmark = pytest.mark.adversarial

PATH = "/Users/me/Code/harbor-sync"


def test_status_shows_held_candidates_and_the_triage_queue(db_url: str) -> None:
    ctx = make_ctx(db_url)
    for sid in ("s1", "s2", "s3"):
        rows = [
            NewCandidate(f"Request of {sid}", "ai_tool", sid, "task", None, None, T0, PATH, n)
            for n in (3, 7)
        ]
        with transaction(ctx.sessions) as s:
            upsert_activity_session(s, "aider", sid, project_path=PATH, started_at=T0)
            insert_candidates(s, rows, utcnow(), held=True)
            queue_triage(s, "aider", sid, "", "digest", {"lines": []}, utcnow())
    shown = run_cli("status", db_url=db_url)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    [candidates] = [line for line in lines if line.startswith("candidates")]
    assert " held 6 " in f"{candidates} "
    [triage] = [line for line in lines if line.startswith("triage")]
    assert "pending 3" in triage
    report = json.loads(run_cli("status", "--json", db_url=db_url).stdout)
    assert report["candidates"]["held"] == 6 and report["triage"]["pending"] == 3


def test_a_jsonl_import_counts_each_session_once(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "obs.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for n in range(1200):  # two sessions, their records spread over three batches
            record = {
                "record_id": f"r{n}",
                "session_id": f"session-{n % 2}",
                "type": "candidate",
                "raw_text": f"Candidate {n}",
                "suggested_kind": "task",
            }
            out.write(json.dumps(record) + "\n")
    done = run_cli("import", "jsonl", str(path), db_url=db_url)
    assert done.returncode == 0, done.stderr
    [summary] = [line for line in done.stdout.splitlines() if line.startswith("jsonl:")]
    assert " sessions 2 " in f"{summary} "
