"""The decision trail: every call site writes one row per verdict that changed or confirmed state,
in the transaction of that change (a refused row undoes the change with it)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.exc import DBAPIError

from tests.support.faults import allow_decisions, refuse_decisions
from tests.support.jobs import (
    add_candidates,
    candidates,
    decisions,
    entities,
    make_ctx,
    sighting_count,
    triage_session,
)
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.models import Decision, EntityOverride, JobRun
from yzos_jobs.entity.corrections import correct
from yzos_jobs.entity.triage_writes import SessionTriage, TriageProject, TriageTask
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.jobs import run_entity_promote, run_entity_purge_v06, run_prune
from yzos_jobs.maintain.runner import run_job
from yzos_jobs.supply.session_end import process_session_end
from yzos_jobs.testing import OpenAIDouble, Status, candidate_of, verdict


def _judge(body):
    raw = candidate_of(body)["raw_text"]
    if raw == "Telegram":
        return verdict("app", reason="A chat app.")
    if raw.startswith("Flaky"):
        return Status(500)
    return verdict("project", name="YZOS Core", reason="A repository.")


def test_promote_writes_one_row_per_promoted_merged_or_rejected_candidate(db_url: str) -> None:
    with OpenAIDouble(_judge, latency_s=0.05) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        add_candidates(
            ctx,
            {"raw_text": "YZOS Core", "source_id": "a"},
            {"raw_text": "yzos core", "source_id": "b"},
            {"raw_text": "Telegram", "source_id": "c"},
            {"raw_text": "Flaky", "source_id": "d"},  # LLM down: promoted by the fallback
            {"raw_text": "Flaky too", "suggested_kind": None},  # LLM down, no kind: released
        )
        result = run_job(ctx, "entity_promote")
        # The same input again: the verdict comes from the cache.
        add_candidates(ctx, {"raw_text": "Telegram", "source_id": "c"})
        run_entity_promote(ctx)
    assert result.status == "succeeded"
    with ctx.sessions() as s:
        run_id = s.scalar(select(JobRun.id).where(JobRun.job_name == "entity_promote"))
    by_text = {c.raw_text: c for c in candidates(ctx)[:5]}
    [entity] = [e for e in entities(ctx) if e.display_name == "YZOS Core"]
    rows = decisions(ctx)
    assert [r.candidate_id for r in rows[:4]] == sorted(
        by_text[t].id for t in ("YZOS Core", "yzos core", "Telegram", "Flaky")
    )
    first, merged, app, fallback, cached = rows
    assert (first.outcome, merged.outcome) == ("promoted", "merged")
    assert first.entity_id == merged.entity_id == entity.id
    for row in (first, merged, app):
        assert (row.call_site, row.source, row.model) == ("promote_candidate", "llm", "double-7b")
        assert row.job_run_id == run_id
        assert row.prompt_version and row.prompt_version.startswith("v1-")
        # The model's time is in it: the double answers after 50 ms.
        assert isinstance(row.latency_ms, int) and row.latency_ms >= 50
    assert first.verdict["reason"] == "A repository."
    assert (app.outcome, app.entity_id, app.verdict["kind"]) == ("rejected", None, "app")
    assert (fallback.outcome, fallback.source, fallback.model) == ("promoted", "fallback", None)
    assert fallback.verdict["reason"].startswith("fallback: LlmFailed")
    assert (cached.source, cached.outcome, cached.latency_ms) == ("cache", "rejected", None)
    assert cached.prompt_version == app.prompt_version and cached.job_run_id is None
    assert by_text["Flaky too"].status == "pending"  # released: no row


def test_session_end_writes_its_rows_as_apply_entities(db_url: str) -> None:
    ctx = make_ctx(db_url)  # dry_run
    add_candidates(
        ctx,
        {"raw_text": "Alpha", "source_id": "sess-A"},
        {"raw_text": "3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22", "source_id": "sess-A"},
    )
    process_session_end(ctx, "ai_tool", "sess-A")
    alpha, junk = decisions(ctx)
    assert (alpha.call_site, alpha.source, alpha.outcome) == (
        "apply_entities",
        "dry_run",
        "promoted",
    )
    assert (junk.source, junk.outcome) == ("dry_run", "rejected")
    assert junk.verdict["reason"] == "dry_run: structural noise"


def test_triage_writes_a_row_per_project_and_task_it_writes(db_url: str) -> None:
    with OpenAIDouble(
        lambda b: verdict(candidate_of(b)["suggested_kind"], name=candidate_of(b)["raw_text"])
    ) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        path = "/Users/me/Code/yzos-core"
        triage = SessionTriage(
            projects=[TriageProject("yzos-core", path)], tasks=[TriageTask("Fix lease renewal")]
        )
        triage_session(ctx, "s1", triage)
        triage_session(ctx, "s2", SessionTriage(projects=[TriageProject("YZOS", path)]))
    project, task, again = decisions(ctx)
    assert (project.call_site, project.outcome) == ("merge_or_create_project", "created")
    assert (task.call_site, task.outcome) == ("merge_or_create_task", "created")
    assert (again.call_site, again.outcome, again.entity_id) == (
        "merge_or_create_project",
        "merged",
        project.entity_id,
    )
    assert project.source == "llm" and project.model == "double-7b"


def test_purge_writes_kept_and_archived_rows_and_prunes_old_ones(db_url: str) -> None:
    setup = make_ctx(db_url)
    add_candidates(setup, {"raw_text": "Telegram"}, {"raw_text": "YZOS Core"})
    run_entity_promote(setup)
    old_user, old_job = utcnow() - timedelta(days=400), utcnow() - timedelta(days=100)
    with transaction(setup.sessions) as s:
        s.add(Decision(call_site="promote_candidate", source="llm", created_at=old_job))
        s.add(Decision(call_site="user", source="user", outcome="archived", created_at=old_user))
    with OpenAIDouble(_judge) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        run_entity_purge_v06(ctx)
    # retention_days 90: the old job decision goes, the user's correction stays
    assert run_prune(ctx)["decisions_pruned"] == 1
    rows = [r for r in decisions(ctx) if r.call_site == "entity_purge_v06"]
    by_entity = {e.display_name: e.id for e in entities(ctx)}
    assert {(r.entity_id, r.outcome) for r in rows} == {
        (by_entity["Telegram"], "archived"),
        (by_entity["YZOS Core"], "kept"),
    }
    assert {r.call_site for r in decisions(ctx)} >= {"user", "promote_candidate"}


# -- a refused trail row takes the state change with it --------------------------------------


def _one_entity(db_url: str) -> JobContext:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "Telegram", "source_id": "s1"})
    run_entity_promote(ctx)
    return ctx


def _promote(db_url: str, llm: str) -> Callable[[], object]:
    ctx = make_ctx(db_url, llm)
    add_candidates(ctx, {"raw_text": "YZOS Core", "source_id": "sess-A"})
    return lambda: run_entity_promote(ctx)


def _session_end(db_url: str, llm: str) -> Callable[[], object]:
    ctx = make_ctx(db_url, llm)
    add_candidates(ctx, {"raw_text": "YZOS Core", "source_id": "sess-A"})
    return lambda: process_session_end(ctx, "ai_tool", "sess-A")


def _triage(item: TriageProject | TriageTask) -> Callable[[str, str], Callable[[], object]]:
    def build(db_url: str, llm: str) -> Callable[[], object]:
        ctx = make_ctx(db_url, llm)
        triage = SessionTriage(
            projects=[item] if isinstance(item, TriageProject) else [],
            tasks=[item] if isinstance(item, TriageTask) else [],
        )
        return lambda: triage_session(ctx, "s1", triage)

    return build


def _purge(db_url: str, llm: str) -> Callable[[], object]:
    _one_entity(db_url)
    ctx = make_ctx(db_url, llm)
    return lambda: run_entity_purge_v06(ctx)


def _user(db_url: str, llm: str) -> Callable[[], object]:
    ctx = _one_entity(db_url)
    return lambda: correct(ctx.sessions, "Telegram", "not_entity")


SITES = {
    "promote_candidate": _promote,
    "apply_entities": _session_end,
    "merge_or_create_project": _triage(TriageProject("YZOS Core", "/Users/me/Code/yzos")),
    "merge_or_create_task": _triage(TriageTask("Fix lease renewal")),
    "entity_purge_v06": _purge,
    "user": _user,
}


def _state(ctx: JobContext) -> tuple[object, ...]:
    with ctx.sessions() as s:
        overrides = [(o.entity_id, o.status) for o in s.scalars(select(EntityOverride))]
    return (
        [(e.id, e.kind, e.status, e.verdict_source, e.sighting_count) for e in entities(ctx)],
        [(c.id, c.status, c.entity_id) for c in candidates(ctx)],
        sighting_count(ctx),
        overrides,
        len(decisions(ctx)),
    )


@pytest.mark.parametrize("call_site", sorted(SITES))
def test_a_refused_trail_row_undoes_the_state_change_it_explains(
    db_url: str, call_site: str
) -> None:
    def judge(body):
        # The purge's question: Telegram is an app; every other proposal is real.
        cand = candidate_of(body)
        if cand["source_kind"] == "cron":
            return verdict("app")
        return verdict(cand["suggested_kind"], name=cand["raw_text"])

    with OpenAIDouble(judge) as llm:
        act = SITES[call_site](db_url, llm.base_url)
        ctx = make_ctx(db_url)
        before = _state(ctx)
        engine = ctx.sessions.kw["bind"]
        refuse_decisions(engine, call_site)
        with pytest.raises(DBAPIError, match="decision trail refused"):
            act()
        after = _state(ctx)
        # Candidates a failed run held are handed back: pending again, as before.
        assert after == before
        allow_decisions(engine)
        act()
    changed = _state(ctx)
    assert changed != before
    assert [r.call_site for r in decisions(ctx)][-1] == call_site
