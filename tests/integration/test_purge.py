"""entity_purge_v06: re-judge active entities; noise/app is archived for good."""

from __future__ import annotations

from datetime import timedelta

from click.testing import CliRunner
from sqlalchemy import select, update

from tests.support.jobs import (
    add_candidates,
    candidates,
    decisions,
    entities,
    make_ctx,
    sighting_count,
)
from yzos_jobs.cli import cli
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.models import Decision, EntityOverride
from yzos_jobs.maintain.jobs import run_entity_promote, run_entity_purge_v06, run_prune
from yzos_jobs.testing import OpenAIDouble, Status, candidate_of, verdict


def _seed_dry_run(db_url: str, *names: str) -> None:
    ctx = make_ctx(db_url)  # dry_run: everything with a kind gets in
    add_candidates(
        ctx, *({"raw_text": n, "surrounding_text": f"Working on {n} all afternoon"} for n in names)
    )
    run_entity_promote(ctx)


def test_purge_archives_noise_with_an_override_and_keeps_real_entities(db_url: str) -> None:
    _seed_dry_run(db_url, "Telegram", "YZOS Core")

    def judge(body):
        return (
            verdict("app") if candidate_of(body)["raw_text"] == "Telegram" else verdict("project")
        )

    with OpenAIDouble(judge) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        stats = run_entity_purge_v06(ctx)
    assert (stats["archived"], stats["kept"], stats["llm_calls"]) == (1, 1, 2)
    tg, yz = entities(ctx)
    assert tg.status == "archived" and yz.status == "active"
    assert yz.verdict_source == "llm" and yz.okf["classification"]["kind"] == "project"
    assert candidate_of(llm.requests[0])["surrounding_text"].startswith("Working on")
    with ctx.sessions() as s:
        override = s.scalar(select(EntityOverride).where(EntityOverride.entity_id == tg.id))
    assert override.status == "archived" and override.set_by.startswith("entity_purge_v06")


def test_purge_failure_keeps_state(db_url: str) -> None:
    _seed_dry_run(db_url, "Telegram")
    with OpenAIDouble(lambda b: Status(500)) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        stats = run_entity_purge_v06(ctx)
    [e] = entities(ctx)
    assert stats["failed"] == 1 and e.status == "active" and e.verdict_source == "dry_run"


def test_purge_rejudges_unverified_first_within_max_llm_calls(db_url: str) -> None:
    _seed_dry_run(db_url, "A1", "A2", "A3", "A4", "A5")
    with OpenAIDouble(lambda b: verdict("project")) as llm:
        ctx = make_ctx(db_url, llm.base_url, entity_purge_v06={"max_llm_calls": 3, "batch_size": 2})
        first = run_entity_purge_v06(ctx)
        asked_first = {candidate_of(r)["raw_text"] for r in llm.requests}
        second = run_entity_purge_v06(ctx)
    assert (first["judged"], first["llm_calls"]) == (3, 3)
    # The next run asks about the two never verified; the three verdicts it already has come
    # from the cache, cost no call and change nothing.
    assert (second["llm_calls"], second["cache_hits"], second["judged"]) == (2, 3, 2)
    assert second["unchanged"] == 3
    assert len(asked_first) == 3 and {candidate_of(r)["raw_text"] for r in llm.requests[3:]} == (
        {"A1", "A2", "A3", "A4", "A5"} - asked_first
    )
    assert {e.verdict_source for e in entities(ctx)} == {"llm"}


def test_archived_entity_stays_archived_when_seen_again(db_url: str) -> None:
    _seed_dry_run(db_url, "Telegram")
    with OpenAIDouble(lambda b: verdict("app")) as llm:
        run_entity_purge_v06(make_ctx(db_url, llm.base_url))
    [before] = entities(make_ctx(db_url))
    ctx = make_ctx(db_url)  # dry_run would happily promote it again
    row = {
        "raw_text": "Telegram",
        "source_id": "new-src",
        "surrounding_text": "Chatting about the new plan",
    }
    add_candidates(ctx, row)
    add_candidates(ctx, row)
    stats = run_entity_promote(ctx)
    [after] = entities(ctx)
    assert after.status == "archived"
    assert (after.summary, after.okf) == (before.summary, before.okf)
    assert stats["sightings"] == 1 and after.sighting_count == before.sighting_count + 1
    assert sighting_count(ctx, after.id) == 2
    new = candidates(ctx)[-2:]
    assert all(c.status == "rejected" and c.entity_id == after.id for c in new)


def test_prune_drops_expired_cached_verdicts_and_old_runs(db_url: str) -> None:
    from datetime import timedelta

    from yzos_jobs.db.column_types import utcnow
    from yzos_jobs.db.connection import transaction
    from yzos_jobs.db.models import JobRun, VerdictCacheRow

    ctx = make_ctx(db_url, retention={"job_runs_days": 7})
    now = utcnow()
    with transaction(ctx.sessions) as s:
        for h, expires in (("old", now - timedelta(seconds=1)), ("fresh", now + timedelta(days=1))):
            s.add(
                VerdictCacheRow(
                    model_id="m",
                    prompt_version="v",
                    input_hash=h,
                    verdict={},
                    created_at=now,
                    expires_at=expires,
                )
            )
        for slot, age in (("a", 8), ("b", 1)):
            s.add(
                JobRun(
                    job_name="entity_promote",
                    slot=slot,
                    status="succeeded",
                    owner="x:1",
                    started_at=now - timedelta(days=age),
                )
            )
    stats = run_prune(ctx)
    assert (stats["cache_expired"], stats["runs_pruned"]) == (1, 1)
    with ctx.sessions() as s:
        assert [r.input_hash for r in s.scalars(select(VerdictCacheRow))] == ["fresh"]
        assert [r.slot for r in s.scalars(select(JobRun))] == ["b"]


def _by_kind(body):
    """The purge's judge: "Alice Chen" is a person, whatever kind it was stored as."""
    return verdict("person", name="Alice Chen")


def test_purge_rekinds_an_entity_judged_real_with_another_kind(db_url: str) -> None:
    setup = make_ctx(db_url)
    add_candidates(setup, {"raw_text": "Alice Chen", "suggested_kind": "project"})
    run_entity_promote(setup)
    with OpenAIDouble(_by_kind) as llm:
        stats = run_entity_purge_v06(make_ctx(db_url, llm.base_url))
    [alice] = entities(setup)
    assert stats["rekinded"] == 1 and (alice.kind, alice.status) == ("person", "active")
    [row] = [d for d in decisions(setup) if d.call_site == "entity_purge_v06"]
    assert (row.outcome, row.entity_id, row.verdict["kind"]) == ("rekinded", alice.id, "person")
    # The old kind's name resolves to it: a later "project" sighting lands on the person.
    add_candidates(setup, {"raw_text": "Alice Chen", "suggested_kind": "project", "source_id": "x"})
    run_entity_promote(setup)
    assert [e.id for e in entities(setup)] == [alice.id]
    assert candidates(setup)[-1].entity_id == alice.id


def test_purge_merges_into_the_entity_of_the_new_kind_when_it_exists(db_url: str) -> None:
    setup = make_ctx(db_url)
    add_candidates(
        setup,
        {"raw_text": "Alice Chen", "suggested_kind": "project", "source_id": "a"},
        {"raw_text": "Alice Chen", "suggested_kind": "person", "source_id": "b"},
    )
    run_entity_promote(setup)
    person = next(e for e in entities(setup) if e.kind == "person")
    project = next(e for e in entities(setup) if e.kind == "project")
    with OpenAIDouble(_by_kind) as llm:
        stats = run_entity_purge_v06(make_ctx(db_url, llm.base_url))
    [alice] = entities(setup)
    assert stats["rekinded"] == 1 and alice.id == person.id
    assert alice.sighting_count == 2 == sighting_count(setup, alice.id)
    assert {c.entity_id for c in candidates(setup)} == {alice.id}
    merged = [d for d in decisions(setup) if d.outcome == "merged"]
    assert [(d.call_site, d.entity_id) for d in merged] == [("entity_purge_v06", alice.id)]
    # the project's id, in a script or a note, says where it went
    said = f"e:{project.id} was merged into e:{alice.id} (person 'Alice Chen')"
    gone = CliRunner().invoke(cli, ["show", f"e:{project.id}"], env={"YZOS_DATABASE_URL": db_url})
    assert said in gone.output
    # and still does once the trail around it is past its retention period, later decisions
    # on the person its current state
    add_candidates(setup, {"raw_text": "Alice Chen", "suggested_kind": "person", "source_id": "c"})
    run_entity_promote(setup)
    with transaction(setup.sessions) as s:
        s.execute(update(Decision).values(created_at=utcnow() - timedelta(days=400)))
    assert run_prune(setup)["decisions_pruned"] > 0
    gone = CliRunner().invoke(cli, ["show", f"e:{project.id}"], env={"YZOS_DATABASE_URL": db_url})
    assert said in gone.output


def test_purge_leaves_a_kind_the_user_fixed(db_url: str) -> None:
    from yzos_jobs.entity.corrections import correct

    setup = make_ctx(db_url)
    add_candidates(setup, {"raw_text": "Alice Chen", "suggested_kind": "project"})
    run_entity_promote(setup)
    correct(setup.sessions, "Alice Chen", "kind", "task")
    with OpenAIDouble(_by_kind) as llm:
        stats = run_entity_purge_v06(make_ctx(db_url, llm.base_url))
    [alice] = entities(setup)
    assert (alice.kind, stats["judged"], llm.calls) == ("task", 0, 0)
