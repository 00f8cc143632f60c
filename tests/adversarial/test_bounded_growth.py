"""Nothing grows without bound: a purge slot whose every verdict comes from the cache writes
nothing, and a user's long --reason stays a bounded part of every later prompt. Both backends,
the judge through the loopback double."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from tests.support.jobs import add_candidates, decisions, entities, make_ctx
from yzos_jobs.db.models import Decision
from yzos_jobs.entity.corrections import correct
from yzos_jobs.entity.verdict_prompt import SYSTEM_PROMPT
from yzos_jobs.maintain.jobs import run_entity_promote, run_entity_purge_v06
from yzos_jobs.testing import OpenAIDouble, candidate_of, verdict

pytestmark = pytest.mark.adversarial


def _real(body: dict) -> object:
    return verdict(candidate_of(body).get("suggested_kind") or "project")


def test_a_purge_slot_answered_by_the_cache_writes_nothing(db_url: str) -> None:
    setup = make_ctx(db_url)  # dry_run promotes; the purge judges them first
    add_candidates(setup, *({"raw_text": f"Project {n}", "source_id": f"s{n}"} for n in range(6)))
    run_entity_promote(setup)
    with OpenAIDouble(_real) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        first = run_entity_purge_v06(ctx)
        assert (first["judged"], first["kept"], llm.calls) == (6, 6, 6)
        before = {e.id: (e.updated_at, e.classified_at, e.verdict_source) for e in entities(ctx)}
        rows_before = len(decisions(ctx))
        for _ in range(3):  # three more slots inside the cache's TTL
            again = run_entity_purge_v06(ctx)
            assert (again["judged"], again["unchanged"], again["cache_hits"]) == (0, 6, 6)
        assert llm.calls == 6
    after = {e.id: (e.updated_at, e.classified_at, e.verdict_source) for e in entities(ctx)}
    assert after == before
    assert len(decisions(ctx)) == rows_before
    with ctx.sessions() as s:
        cached = s.scalar(
            select(func.count()).select_from(Decision).where(Decision.source == "cache")
        )
    assert cached == 0


def test_a_long_correction_reason_is_a_bounded_part_of_every_later_prompt(db_url: str) -> None:
    setup = make_ctx(db_url)
    names = [f"Project {n}" for n in range(10)]
    add_candidates(setup, *({"raw_text": n, "source_id": f"s{n}"} for n in names))
    run_entity_promote(setup)
    for n, name in enumerate(names):
        reason = f"reason {n} " + "because " * 4000  # 32,000 characters
        correct(setup.sessions, name, "not_entity", reason=reason)
    with OpenAIDouble(_real) as llm:
        ctx = make_ctx(db_url, llm.base_url, llm={"max_correction_examples": 10})
        add_candidates(ctx, {"raw_text": "Harbor Sync", "source_id": "later"})
        run_entity_promote(ctx)
        [body] = llm.requests
    system = body["messages"][0]["content"]
    assert "reason 9 because" in system  # the newest correction is shown…
    assert "because " * 40 not in system  # …its reason cut as a verdict's is (300 characters)
    assert system.count("<correction>") < 10  # the oldest that do not fit are left out
    # The whole block of examples is bounded: 4,000 characters and its header.
    assert len(system) - len(SYSTEM_PROMPT) <= 4500
