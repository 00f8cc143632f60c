"""Session triage of proposals (merge_or_create_project/task) and process_session_end
(apply_entities)."""

from __future__ import annotations

from tests.support.jobs import (
    add_candidates,
    candidates,
    entities,
    make_ctx,
    sighting_count,
    triage_session,
)
from yzos_jobs.entity.triage_writes import SessionTriage, TriagePerson, TriageProject, TriageTask
from yzos_jobs.maintain.jobs import run_entity_promote
from yzos_jobs.supply.session_end import process_session_end
from yzos_jobs.testing import OpenAIDouble, Status, candidate_of, verdict


def test_triage_creates_then_merges_a_project_by_path(db_url: str) -> None:
    with OpenAIDouble(
        lambda b: verdict(candidate_of(b)["suggested_kind"], name=candidate_of(b)["raw_text"])
    ) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        first = triage_session(
            ctx,
            "sess-1",
            SessionTriage(
                projects=[
                    TriageProject(
                        "yzos-core", "/Users/me/Code/yzos-core/", "Worked on the classifier prompt"
                    )
                ],
                tasks=[
                    TriageTask("Fix lease renewal", "yzos-core", "Renewal thread stops too early")
                ],
                persons=[TriagePerson("陈晓明")],
            ),
        )
        # Another session calls the same repository something else: matched by path.
        second = triage_session(
            ctx,
            "sess-2",
            SessionTriage(
                projects=[TriageProject("YZOS Core", "/Users/me/Code/yzos-core/README.md")]
            ),
        )
    assert (first.created, first.merged, first.retried) == (3, 0, 0)
    assert (second.created, second.merged) == (0, 1)
    by_kind = {e.kind: e for e in entities(ctx)}
    project = by_kind["project"]
    assert project.project_path == "/Users/me/Code/yzos-core"
    assert project.summary == "Worked on the classifier prompt"
    assert project.sighting_count == 2 and sighting_count(ctx, project.id) == 2
    assert by_kind["task"].okf == {"project": "yzos-core"}
    assert by_kind["person"].display_name == "陈晓明"


def test_triage_noise_writes_nothing_and_a_failure_leaves_the_triage_for_the_next_run(
    db_url: str,
) -> None:
    flaky = {"down": True}

    def judge(body):
        if candidate_of(body)["raw_text"] == "Flaky" and flaky["down"]:
            return Status(500)
        return verdict("noise")

    with OpenAIDouble(judge) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        stats = triage_session(
            ctx,
            "s",
            SessionTriage(projects=[TriageProject("Settings")], tasks=[TriageTask("Flaky")]),
        )
        # Skipped means nothing written in that run: the triage waits, nothing is lost.
        assert (stats.triaged, stats.retried, stats.created) == (0, 1, 0)
        assert entities(ctx) == [] and sighting_count(ctx) == 0
        flaky["down"] = False
        again = run_entity_promote(ctx)
    assert (again["triage_triaged"], again["triage_rejected"]) == (1, 2)
    assert entities(ctx) == [] and sighting_count(ctx) == 0


def test_session_end_promotes_that_sessions_candidates_inline(db_url: str) -> None:
    with OpenAIDouble() as llm:
        ctx = make_ctx(db_url, llm.base_url)
        add_candidates(
            ctx,
            {"raw_text": "Alpha", "source_id": "sess-A"},
            {"raw_text": "Beta", "source_id": "sess-A"},
            {"raw_text": "Gamma", "source_id": "sess-B"},
        )
        stats = process_session_end(ctx, "ai_tool", "sess-A")
    assert stats.promoted == 2
    assert [c.status for c in candidates(ctx)] == ["promoted", "promoted", "pending"]


def test_session_end_failure_leaves_candidates_pending_for_entity_promote(db_url: str) -> None:
    with OpenAIDouble(lambda b: Status(503)) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        add_candidates(ctx, {"raw_text": "Alpha", "source_id": "sess-A"})
        stats = process_session_end(ctx, "ai_tool", "sess-A")
    assert (stats.promoted, stats.skipped, stats.failed) == (0, 1, 1)
    [c] = candidates(ctx)
    assert (c.status, c.claimed_by, c.lease_until) == ("pending", None, None)
    assert entities(ctx) == []
