"""Terminal states hold and knowledge stays coherent: a task the user archived does not come back
through session triage, and a project corrected into another kind lets go of its tasks. Both
backends, the judge through the loopback double."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from tests.support.cli import run_cli
from tests.support.jobs import T0, candidates, decisions, entities, make_ctx, sighting_count
from yzos_jobs.db.activity_sessions import upsert_activity_session
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.triage_queue import queue_triage
from yzos_jobs.entity.corrections import correct
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.jobs import run_entity_promote, run_entity_purge_v06
from yzos_jobs.testing import (
    OpenAIDouble,
    accept_suggested,
    candidate_of,
    session_of,
    task,
    triage_reply,
    verdict,
)

pytestmark = pytest.mark.adversarial

PATH = "/Users/me/Code/harbor-sync"
TITLE = "Add release notes draft"


def _queue_session(ctx: JobContext, session_id: str, commit_line: int) -> None:
    """A closed aider session with a model configured: its project and commit candidates held,
    its digest queued for triage."""
    payload = {
        "source": "aider",
        "file": f"{PATH}/.aider.chat.history.md",
        "project": "harbor-sync",
        "project_path": PATH,
        "started_at": T0.isoformat(),
        "ended_at": (T0 + timedelta(hours=1)).isoformat(),
        "lines": [{"line": commit_line, "kind": "commit", "text": TITLE}],
    }
    rows = [
        NewCandidate("harbor-sync", "ai_tool", session_id, "project", None, None, T0, PATH),
        NewCandidate(TITLE, "ai_tool", session_id, "task", None, TITLE, T0, PATH, commit_line),
    ]
    with transaction(ctx.sessions) as s:
        upsert_activity_session(s, "aider", session_id, project_path=PATH, started_at=T0)
        insert_candidates(s, rows, utcnow(), held=True)
        queue_triage(s, "aider", session_id, "", "digest", payload, utcnow())


def _names_the_task(body: dict[str, Any]) -> Any:
    """A triage reply naming the work item on the digest's lines (no offered id: an archived
    task is never offered)."""
    digest = session_of(body)
    if digest is None:
        return accept_suggested(body)
    lines = [n for n, _, _ in digest["lines"]]
    return triage_reply("harbor-sync", [task(TITLE, lines)])


def test_triage_does_not_bring_back_a_task_the_user_archived(db_url: str) -> None:
    with OpenAIDouble(_names_the_task) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        _queue_session(ctx, "s1", 12)
        run_entity_promote(ctx)
        [archived] = [e for e in entities(ctx) if e.kind == "task"]
        correct(ctx.sessions, f"e:{archived.id}", "not_entity")
        _queue_session(ctx, "s2", 40)
        stats = run_entity_promote(ctx)
    after = {e.id: e for e in entities(ctx)}[archived.id]
    assert after.status == "archived"
    assert stats["triage_triaged"] == 1 and stats["triage_rejected"] == 1
    # The held commit candidate is rejected, naming the entity that held it off, as the
    # promote path does; its sighting still counts.
    [commit] = [c for c in candidates(ctx) if c.source_id == "s2" and c.suggested_kind == "task"]
    assert (commit.status, commit.entity_id) == ("rejected", archived.id)
    assert "archived" in (commit.reject_reason or "")
    assert after.sighting_count == 2 == sighting_count(ctx, archived.id)
    later = [d for d in decisions(ctx) if d.entity_id == archived.id and d.call_site != "user"]
    assert [d.outcome for d in later if d.candidate_id is None] == ["created", "rejected"]
    assert "merged" not in {d.outcome for d in later[1:]}


def test_a_project_corrected_into_a_person_lets_go_of_its_tasks(db_url: str) -> None:
    with OpenAIDouble(_names_the_task) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        _queue_session(ctx, "s1", 12)
        run_entity_promote(ctx)
    by_kind = {e.kind: e for e in entities(ctx)}
    assert by_kind["task"].project_id == by_kind["project"].id
    done = run_cli("correct", "harbor-sync", "--kind", "person", db_url=db_url)
    assert done.returncode == 0, done.stderr
    by_kind = {e.kind: e for e in entities(ctx)}
    assert set(by_kind) == {"person", "task"}
    assert by_kind["task"].project_id is None
    shown = run_cli("show", TITLE, "--json", db_url=db_url)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["entity"]["project"] is None
    listed = run_cli("entities", "--kind", "task", "--json", db_url=db_url)
    assert [t["project_id"] for t in json.loads(listed.stdout)] == [None]


def test_a_project_the_purge_rekinds_lets_go_of_its_tasks(db_url: str) -> None:
    with OpenAIDouble(_names_the_task) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        _queue_session(ctx, "s1", 12)
        run_entity_promote(ctx)

    def project_is_a_person(body: dict[str, Any]) -> Any:
        cand = candidate_of(body)
        return verdict("person" if cand["raw_text"] == "harbor-sync" else "task")

    with OpenAIDouble(project_is_a_person) as llm:
        stats = run_entity_purge_v06(make_ctx(db_url, llm.base_url))
    assert stats["rekinded"] == 1
    by_kind = {e.kind: e for e in entities(ctx)}
    assert set(by_kind) == {"person", "task"} and by_kind["task"].project_id is None
