"""entity_promote: classify → create, merge or reject; the fallback chain on classifier failure."""

from __future__ import annotations

from sqlalchemy import select

from tests.support.jobs import add_candidates, candidates, entities, make_ctx, sighting_count
from yzos_jobs.maintain.jobs import run_entity_promote
from yzos_jobs.testing import OpenAIDouble, Status, candidate_of, verdict


def test_real_verdict_promotes_and_app_is_rejected_for_good(db_url: str) -> None:
    def judge(body):
        cand = candidate_of(body)
        return (
            verdict("app")
            if cand["raw_text"] == "Telegram"
            else verdict("project", name="YZOS Core")
        )

    with OpenAIDouble(judge) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        add_candidates(
            ctx,
            {
                "raw_text": "yzos core",
                "surrounding_text": "Refactoring the classifier prompt today",
            },
            {"raw_text": "Telegram"},
        )
        stats = run_entity_promote(ctx)
        assert (stats["promoted"], stats["rejected"], stats["llm_calls"]) == (1, 1, 2)
        # A rejected candidate is terminal: the next run does not ask again.
        again = run_entity_promote(ctx)
        assert again["llm_calls"] == 0 and llm.calls == 2
    yz, tg = candidates(ctx)
    assert yz.status == "promoted" and yz.entity_id is not None and yz.verdict["kind"] == "project"
    assert tg.status == "rejected" and tg.entity_id is None and tg.reject_reason.startswith("app")
    [entity] = entities(ctx)
    assert (entity.kind, entity.display_name, entity.normalized_name) == (
        "project",
        "YZOS Core",
        "yzos core",
    )
    assert entity.verdict_source == "llm" and entity.classified_model == "double-7b"
    assert entity.sighting_count == 1 and sighting_count(ctx, entity.id) == 1
    assert entity.summary == "Refactoring the classifier prompt today"


def test_classifier_failure_falls_back_to_the_structural_filter(db_url: str) -> None:
    with OpenAIDouble(lambda b: Status(500)) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        add_candidates(
            ctx,
            {"raw_text": "/Users/me/Code"},
            {"raw_text": "12345"},
            {"raw_text": "Alice Chen", "suggested_kind": "person"},
            {"raw_text": "Telegram"},  # not structural junk: promoted, re-judged later by the purge
        )
        stats = run_entity_promote(ctx)
    assert (stats["rejected"], stats["promoted"], stats["fallback"], stats["failed"]) == (
        2,
        2,
        2,
        4,
    )
    path, digits, alice, telegram = candidates(ctx)
    assert path.status == digits.status == "rejected"
    assert path.reject_reason.startswith("fallback: structural noise")
    assert alice.status == telegram.status == "promoted"
    assert {(e.display_name, e.kind, e.verdict_source) for e in entities(ctx)} == {
        ("Alice Chen", "person", "fallback"),
        ("Telegram", "project", "fallback"),
    }


def test_two_sources_of_one_name_make_one_entity_with_two_sightings(db_url: str) -> None:
    ctx = make_ctx(db_url)  # dry_run
    add_candidates(
        ctx,
        {"raw_text": "YZOS Core", "source_kind": "window_title", "source_id": "w1"},
        {"raw_text": "yzos  core", "source_kind": "ai_tool", "source_id": "aider-7"},
    )
    stats = run_entity_promote(ctx)
    assert (stats["promoted"], stats["merged"], stats["llm_calls"]) == (1, 1, 0)
    [entity] = entities(ctx)
    assert entity.verdict_source == "dry_run" and entity.sighting_count == 2
    assert sighting_count(ctx, entity.id) == 2
    assert {c.entity_id for c in candidates(ctx)} == {entity.id}


def test_same_sighting_twice_is_stored_once(db_url: str) -> None:
    ctx = make_ctx(db_url)
    row = {
        "raw_text": "YZOS Core",
        "source_id": "s1",
        "surrounding_text": "Reviewing the lease code",
    }
    add_candidates(ctx, row)
    run_entity_promote(ctx)
    add_candidates(ctx, row)
    stats = run_entity_promote(ctx)
    assert (stats["merged"], stats["sightings"]) == (1, 0)
    [entity] = entities(ctx)
    assert entity.sighting_count == 1 and sighting_count(ctx) == 1


def test_without_a_model_a_candidate_with_no_suggested_kind_waits_for_a_real_judge(
    db_url: str,
) -> None:
    ctx = make_ctx(db_url)  # dry_run
    add_candidates(
        ctx,
        {"raw_text": "Something", "suggested_kind": None},
        {"raw_text": "3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22", "suggested_kind": "task"},
    )
    run_entity_promote(ctx)
    waiting, junk = candidates(ctx)
    assert (waiting.status, waiting.attempts) == ("pending", 0)
    assert junk.status == "rejected" and "structural noise" in junk.reject_reason
    assert entities(ctx) == []
    with OpenAIDouble(lambda b: verdict("person", name="Something")) as llm:
        run_entity_promote(make_ctx(db_url, llm.base_url))
    [judged] = [c for c in candidates(ctx) if c.raw_text == "Something"]
    assert judged.status == "promoted" and llm.calls == 1


def test_expired_leases_come_back_and_attempts_are_bounded(db_url: str) -> None:
    from datetime import timedelta

    from sqlalchemy import update

    from yzos_jobs.db.column_types import utcnow
    from yzos_jobs.db.connection import transaction
    from yzos_jobs.db.models import EntityCandidate

    with OpenAIDouble() as llm:
        ctx = make_ctx(db_url, llm.base_url, entity_promote={"max_attempts": 2})
        add_candidates(ctx, {"raw_text": "Fresh"}, {"raw_text": "Poison"})
        # "Poison" was claimed by a daemon that died, twice already; its lease ran out.
        with transaction(ctx.sessions) as s:
            s.execute(
                update(EntityCandidate)
                .where(EntityCandidate.raw_text == "Poison")
                .values(
                    status="claimed",
                    claimed_by="dead:1",
                    attempts=2,
                    lease_until=utcnow() - timedelta(seconds=1),
                )
            )
        stats = run_entity_promote(ctx)
    assert stats["reclaimed"] == 1
    fresh, poison = candidates(ctx)
    assert fresh.status == poison.status == "promoted"
    assert poison.attempts == 3
    assert llm.calls == 1  # the exhausted candidate was decided without the LLM
    assert {e.display_name: e.verdict_source for e in entities(ctx)} == {
        "Fresh": "llm",
        "Poison": "fallback",
    }
    with ctx.sessions() as s:
        assert (
            s.scalar(select(EntityCandidate.claimed_by).where(EntityCandidate.id == poison.id))
            is None
        )


def test_rows_lost_to_another_owner_are_not_written(db_url: str) -> None:
    from sqlalchemy import update

    from yzos_jobs.db.column_types import utcnow
    from yzos_jobs.db.connection import transaction
    from yzos_jobs.db.lease_claim import Claim
    from yzos_jobs.db.models import EntityCandidate
    from yzos_jobs.db.queue import claim_batch
    from yzos_jobs.entity.updater import promote_candidate, write_decisions

    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "Kept"}, {"raw_text": "Stolen"})
    with transaction(ctx.sessions) as s:
        batch = claim_batch(s, Claim(ctx.owner, limit=10, lease_s=60, now=utcnow()))
    # Our lease ran out and another daemon took "Stolen" while we were classifying.
    with transaction(ctx.sessions) as s:
        s.execute(
            update(EntityCandidate)
            .where(EntityCandidate.raw_text == "Stolen")
            .values(claimed_by="other:2")
        )
    stats = write_decisions(ctx, promote_candidate(ctx, batch, on_failure="fallback").result())
    assert (stats.promoted, stats.lost) == (1, 1)
    kept, stolen = candidates(ctx)
    assert kept.status == "promoted"
    assert (stolen.status, stolen.claimed_by, stolen.entity_id) == ("claimed", "other:2", None)
    assert [e.display_name for e in entities(ctx)] == ["Kept"]
    assert sighting_count(ctx) == 1


def test_a_batch_size_set_is_used_without_a_model_too(db_url: str) -> None:
    names = [{"raw_text": f"project {i}", "source_id": f"s{i}"} for i in range(20)]
    configured = make_ctx(db_url, entity_promote={"batch_size": 7})
    add_candidates(configured, *names)
    stats = run_entity_promote(configured)
    assert (stats["promoted"], stats["batches"]) == (20, 3)


def test_unset_the_batch_size_without_a_model_is_the_larger_default(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, *[{"raw_text": f"task {i}", "source_id": f"s{i}"} for i in range(150)])
    stats = run_entity_promote(ctx)
    assert (stats["promoted"], stats["batches"]) == (150, 1)
