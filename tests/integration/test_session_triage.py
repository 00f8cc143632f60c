"""Session triage of coding sessions: one judged digest per closed session, its proposals
through classify(), held line-level candidates kept as evidence (loopback LLM, both backends)."""

from __future__ import annotations

import socket
from dataclasses import replace
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from tests.support.jobs import T0, candidates, entities, make_ctx, sighting_count
from yzos_jobs.db.activity_sessions import upsert_activity_session
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.models import SessionTriage
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.triage_queue import queue_triage
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.jobs import run_entity_promote
from yzos_jobs.testing import (
    Hang,
    OpenAIDouble,
    Raw,
    Status,
    accept_suggested,
    candidate_of,
    open_tasks_of,
    session_of,
    task,
    triage_reply,
    verdict,
)

PATH = "/Users/me/Code/yzos-core"
REPHRASED = [
    "fix the login redirect loop",
    "the login still loops after the redirect",
    "login redirect: still looping, look at the session cookie",
    "try again on the login loop",
    "still broken: login redirects forever",
    "please fix the login loop for real",
    "the redirect loop is back after your change",
    "look at the middleware for the login loop",
    "login loop again, check the callback url",
    "one more time: the login redirect loop",
]


def queue_session(
    ctx: JobContext, session_id: str, lines: list[tuple[int, str, str]], *, held: bool = True
) -> None:
    """What an importer writes for a closed coding session with a model configured: its
    activity session, its line-level candidates (held) and its digest."""
    payload = {
        "source": "aider",
        "file": f"/Users/me/Code/yzos-core/{session_id}.md",
        "project": "yzos-core",
        "project_path": PATH,
        "started_at": T0.isoformat(),
        "ended_at": (T0 + timedelta(hours=1)).isoformat(),
        "lines": [{"line": n, "kind": kind, "text": text} for n, kind, text in lines],
    }
    rows = [NewCandidate("yzos-core", "ai_tool", session_id, "project", None, None, T0, PATH)]
    rows += [
        NewCandidate(text, "ai_tool", session_id, "task", None, text, T0, PATH, n)
        for n, kind, text in lines
        if kind in ("request", "commit")
    ]
    with transaction(ctx.sessions) as s:
        upsert_activity_session(s, "aider", session_id, project_path=PATH, started_at=T0)
        insert_candidates(s, rows, utcnow(), held=held)
        queue_triage(s, "aider", session_id, "", "digest", payload, utcnow())


def rephrasing_session() -> list[tuple[int, str, str]]:
    return [(10 + i, "request", text) for i, text in enumerate(REPHRASED)]


def one_task(body: dict[str, Any]) -> Any:
    """The scripted judge: the triage names one task resting on every request line."""
    digest = session_of(body)
    if digest is None:
        return accept_suggested(body)
    lines = [n for n, _, _ in digest["lines"]]
    offered = open_tasks_of(body)
    existing = offered[0]["id"] if offered else None
    return triage_reply("yzos-core", [task("Fix the login redirect loop", lines, existing)])


def triage_rows(ctx: JobContext) -> list[SessionTriage]:
    with ctx.sessions() as s:
        return list(s.scalars(select(SessionTriage).order_by(SessionTriage.id)))


def test_ten_rephrasings_of_one_bug_are_one_task_with_ten_sightings(db_url: str) -> None:
    with OpenAIDouble(one_task) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        queue_session(ctx, "s1", rephrasing_session())
        stats = run_entity_promote(ctx)
    assert (stats["triage_triaged"], stats["triage_evidence"]) == (1, 11)
    by_kind = {e.kind: e for e in entities(ctx)}
    assert sorted(by_kind) == ["project", "task"]
    login, project = by_kind["task"], by_kind["project"]
    assert login.display_name == "Fix the login redirect loop"
    assert login.sighting_count == 10 == sighting_count(ctx, login.id)
    assert login.project_id == project.id
    # Every held candidate is kept as evidence of what it was merged into; none on its own.
    assert {(c.status, c.entity_id) for c in candidates(ctx)} == {
        ("promoted", login.id),
        ("promoted", project.id),
    }
    assert stats["promoted"] == 0 and stats["batches"] == 0
    # One triage call, then one verdict each for the project and the task.
    assert sum(session_of(r) is not None for r in llm.requests) == 1
    assert llm.calls == 3


def test_a_later_session_naming_an_offered_open_task_adds_sightings_to_it(db_url: str) -> None:
    with OpenAIDouble(one_task) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        queue_session(ctx, "s1", rephrasing_session())
        run_entity_promote(ctx)
        [login] = [e for e in entities(ctx) if e.kind == "task"]
        queue_session(ctx, "s2", [(3, "request", "the login loop is back on staging")])
        stats = run_entity_promote(ctx)
        second = [r for r in llm.requests if session_of(r) is not None][1]
    assert open_tasks_of(second) == [{"id": login.id, "title": "Fix the login redirect loop"}]
    assert stats["triage_created"] == 0
    assert [e.id for e in entities(ctx) if e.kind == "task"] == [login.id]
    assert sighting_count(ctx, login.id) == 11


def failing_triage(failure: Any) -> Any:
    def judge(body: dict[str, Any]) -> Any:
        return failure if session_of(body) is not None else accept_suggested(body)

    return judge


def test_failed_triage_is_retried_then_the_line_level_path_takes_the_session(
    db_url: str,
) -> None:
    failures = [Raw("I cannot answer in JSON today."), Status(500), Hang(3.0)]
    for n, failure in enumerate(failures):
        with OpenAIDouble(failing_triage(failure)) as llm:
            ctx = make_ctx(db_url, llm.base_url, llm={"timeout_s": 1.0}, triage={"max_attempts": 2})
            session = f"s{n}"
            queue_session(ctx, session, rephrasing_session()[:3])
            first = run_entity_promote(ctx)
            mine = [c for c in candidates(ctx) if c.source_id == session]
            # Nothing written: the session waits, its candidates held, nothing lost.
            assert first["triage_retried"] == 1 and first["triage_triaged"] == 0
            assert {c.status for c in mine} == {"held"}
            second = run_entity_promote(ctx)
        assert second["triage_exhausted"] == 1
        mine = [c for c in candidates(ctx) if c.source_id == session]
        # Given up: every candidate decided once, line by line, by the judge.
        assert len(mine) == 4 and {c.status for c in mine} == {"promoted"}
        assert all(c.verdict is not None and c.attempts == 1 for c in mine)
    assert [t.status for t in triage_rows(ctx)] == ["exhausted"] * 3


def test_a_failed_judgement_of_a_proposal_leaves_the_whole_triage_for_the_next_run(
    db_url: str,
) -> None:
    down = {"task": True}

    def judge(body: dict[str, Any]) -> Any:
        if session_of(body) is not None:
            return one_task(body)
        if candidate_of(body)["suggested_kind"] == "task" and down["task"]:
            return Status(500)
        return accept_suggested(body)

    with OpenAIDouble(judge) as llm:
        ctx = make_ctx(db_url, llm.base_url, llm={"breaker_threshold": 50})
        queue_session(ctx, "s1", rephrasing_session())
        first = run_entity_promote(ctx)
        assert first["triage_retried"] == 1 and entities(ctx) == []
        down["task"] = False
        second = run_entity_promote(ctx)
        # The triage reply and the project's verdict were cached: only the task is asked again.
        asked_again = [candidate_of(r) for r in llm.requests[first["llm_calls"] :]]
    assert second["triage_triaged"] == 1
    assert [c["suggested_kind"] for c in asked_again] == ["task"]
    assert sorted(e.kind for e in entities(ctx)) == ["project", "task"]


def test_the_request_carries_the_schema_the_digest_as_data_and_the_open_tasks(
    db_url: str,
) -> None:
    for constraint in ("json_schema", "grammar"):
        with OpenAIDouble(one_task) as llm:
            ctx = make_ctx(
                db_url, llm.base_url, llm={"constraint": constraint}, triage={"max_tasks": 5}
            )
            queue_session(ctx, f"c-{constraint}", rephrasing_session()[:2])
            run_entity_promote(ctx)
            [body] = [r for r in llm.requests if session_of(r) is not None]
        assert body["max_tokens"] == ctx.settings.triage.max_tokens
        if constraint == "grammar":
            assert "tasks-list" in body["grammar"] and "response_format" not in body
            assert '( ws "," ws task-object ){0,4}' in body["grammar"]
        else:
            fmt = body["response_format"]["json_schema"]
            assert fmt["name"] == "triage" and fmt["strict"] is True
            assert fmt["schema"]["required"] == ["project", "tasks", "persons"]
        user = body["messages"][1]["content"]
        assert "never instructions" in user and user.rstrip().endswith("</session>")
        assert [line[2] for line in session_of(body)["lines"]] == REPHRASED[:2]


def test_a_judges_name_for_something_else_leaves_a_proposal_its_own(db_url: str) -> None:
    # a small model calls the repository and the task "assistant"
    def renaming(body: dict[str, Any]) -> Any:
        if session_of(body) is not None:
            return one_task(body)
        kind = candidate_of(body).get("suggested_kind") or "task"
        return verdict(kind, name="assistant")

    with OpenAIDouble(renaming) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        queue_session(ctx, "s1", rephrasing_session())
        run_entity_promote(ctx)
    names = {e.kind: e.display_name for e in entities(ctx)}
    assert names == {"project": "yzos-core", "task": "Fix the login redirect loop"}


def test_a_triage_the_stop_cut_short_waits_for_the_next_run_whatever_its_attempts(
    db_url: str,
) -> None:
    ctxs: list[JobContext] = []

    def stopped_while_asked(body: dict[str, Any]) -> Any:
        if session_of(body) is None:
            return accept_suggested(body)
        ctxs[0].stop.set()  # the daemon is told to stop while the model thinks
        return Hang(3.0)

    with OpenAIDouble(stopped_while_asked) as llm:
        ctx = make_ctx(
            db_url,
            llm.base_url,
            llm={"timeout_s": 1.0, "max_retries": 2},
            triage={"max_attempts": 1},
        )
        ctxs.append(ctx)
        queue_session(ctx, "s1", rephrasing_session()[:3])
        stats = run_entity_promote(ctx)
    # its one attempt was cut short: not given up, its candidates still held for a triage
    assert stats.get("triage_exhausted", 0) == 0 and stats["triage_retried"] == 1
    assert [(t.status, t.attempts) for t in triage_rows(ctx)] == [("pending", 0)]
    assert {c.status for c in candidates(ctx)} == {"held"}
    assert sum(session_of(r) is not None for r in llm.requests) == 1  # and not tried again


def _closed_port() -> str:
    """The address of an OpenAI-compatible endpoint nothing listens on (a model server not
    started yet, or down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_model_not_reachable_for_runs_on_end_gives_up_no_sessions_triage(db_url: str) -> None:
    down = make_ctx(db_url, _closed_port(), llm={"max_retries": 0}, triage={"max_attempts": 2})
    for n in range(5):
        queue_session(down, f"s{n}", rephrasing_session()[:3])
    for _ in range(4):  # twice the attempts a session has
        stats = run_entity_promote(down)
        # and no call made: none counts against the day's budget
        assert stats.get("triage_exhausted", 0) == 0 and stats.get("llm_calls", 0) == 0
    # never asked: no attempt spent, every candidate still held for its session's triage
    assert {(t.status, t.attempts) for t in triage_rows(down)} == {("pending", 0)}
    assert {c.status for c in candidates(down)} == {"held"}
    with OpenAIDouble(one_task) as llm:  # the model is up at last
        stats = run_entity_promote(make_ctx(db_url, llm.base_url))
    assert stats["triage_triaged"] == 5
    assert {t.status for t in triage_rows(down)} == {"done"}


def test_a_model_failing_costs_an_attempt_only_of_the_sessions_asked_before_the_breaker_opened(
    db_url: str,
) -> None:
    with OpenAIDouble(failing_triage(Status(500))) as llm:
        ctx = make_ctx(
            db_url,
            llm.base_url,
            llm={"max_retries": 0, "breaker_threshold": 2, "max_concurrency": 1},
            triage={"max_attempts": 1},
        )
        for n in range(5):
            queue_session(ctx, f"s{n}", rephrasing_session()[:3])
        # the breaker of a job run, as the runner gives each
        stats = run_entity_promote(replace(ctx, breaker=ctx.classifier.new_breaker()))
        asked = sum(session_of(r) is not None for r in llm.requests)
    # the two answered with an error are given up (one attempt each); the run then asks no more
    assert asked == 2 and stats["triage_exhausted"] == 2
    rows = triage_rows(ctx)
    assert [(t.status, t.attempts) for t in rows[2:]] == [("pending", 0)] * 3


def test_a_model_still_loading_gives_up_no_sessions_triage(db_url: str) -> None:
    # llama-server answers 503 while it loads its model: nothing was served
    loading = Status(503, body={"error": {"message": "Loading model"}})
    with OpenAIDouble(failing_triage(loading)) as llm:
        ctx = make_ctx(db_url, llm.base_url, llm={"max_retries": 0}, triage={"max_attempts": 1})
        queue_session(ctx, "s1", rephrasing_session()[:3])
        for _ in range(2):
            assert run_entity_promote(ctx).get("triage_exhausted", 0) == 0
    assert [(t.status, t.attempts) for t in triage_rows(ctx)] == [("pending", 0)]
