"""What the judgement paths must never lose or let through: a name past any index
bound is still decided, JSONL triage skipped in an outage is retried, the purge shows the judge
the app an entity was seen in, `status --check` notices a run the fallback decided, and the
protections that no other test guards. Both backends, LLM through the loopback double."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, update

from tests.adversarial.llm_env import llm_cli_env
from tests.support.cli import cli_env, run_cli
from tests.support.jobs import T0, add_candidates, candidates, entities, make_ctx
from yzos_jobs.db.apps import AppRecord, upsert_app_metadata
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.models import Entity, EntityOverride, ImporterFile
from yzos_jobs.entity.verdict_prompt import SYSTEM_PROMPT
from yzos_jobs.importers.jsonl import JsonlImporter
from yzos_jobs.maintain.jobs import run_entity_promote, run_entity_purge_v06
from yzos_jobs.testing import OpenAIDouble, Status, accept_suggested, candidate_of, verdict

pytestmark = pytest.mark.adversarial


def test_a_name_longer_than_any_index_bound_is_decided_not_stalled(db_url: str) -> None:
    ctx = make_ctx(db_url)  # dry_run: the name itself is written as the entity's name
    long_name = "Refactor the ingestion pipeline " + "x" * 3990
    add_candidates(ctx, {"raw_text": long_name}, {"raw_text": "After it"})
    stats = run_entity_promote(ctx)
    assert stats["promoted"] == 2
    assert {c.status for c in candidates(ctx)} == {"promoted"}
    [long_entity] = [e for e in entities(ctx) if e.display_name.startswith("Refactor")]
    assert len(long_entity.display_name) == 200 and long_entity.display_name.endswith("…")
    assert len(long_entity.normalized_name) <= 200


def _triage_file(path: Path) -> Path:
    record = {
        "record_id": "t1",
        "session_id": "s1",
        "type": "triage",
        "projects": [{"name": "yzos-core", "path": "/Users/me/Code/yzos-core", "summary": None}],
        "tasks": [{"title": "Fix lease renewal", "project": "yzos-core"}],
    }
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def test_jsonl_triage_skipped_in_an_outage_is_retried_by_entity_promote(
    db_url: str, tmp_path: Path
) -> None:
    down = {"llm": True}

    def judge(body: dict) -> object:
        return Status(503) if down["llm"] else accept_suggested(body)

    with OpenAIDouble(judge) as llm:
        env = llm_cli_env(tmp_path, db_url, llm.base_url)
        imported = run_cli("import", "jsonl", str(_triage_file(tmp_path / "t.jsonl")), env=env)
        assert imported.returncode == 0, imported.stderr
        assert entities(make_ctx(db_url)) == []  # nothing written in the outage…
        down["llm"] = False
        again = run_cli("import", "jsonl", "--json", str(tmp_path / "t.jsonl"), env=env)
        # …the record is seen: importing again adds nothing
        assert json.loads(again.stdout)["records"] == 0
        promoted = run_cli("once", "entity_promote", "--json", env=env)
    assert promoted.returncode == 0, promoted.stderr
    assert json.loads(promoted.stdout)["triage_triaged"] == 1  # …and entity_promote retries it
    assert sorted(e.kind for e in entities(make_ctx(db_url))) == ["project", "task"]


def test_the_purge_shows_the_judge_the_app_an_entity_was_seen_in(db_url: str) -> None:
    setup = make_ctx(db_url)
    with transaction(setup.sessions) as s:
        upsert_app_metadata(
            s,
            [
                AppRecord(
                    "com.tdesktop.Telegram",
                    "Telegram",
                    "public.app-category.social-networking",
                    "test",
                )
            ],
        )
    add_candidates(setup, {"raw_text": "Telegram", "app_bundle_id": "com.tdesktop.Telegram"})
    run_entity_promote(setup)  # dry_run lets it in
    with OpenAIDouble(lambda body: verdict("app")) as llm:
        stats = run_entity_purge_v06(make_ctx(db_url, llm.base_url))
        [asked] = [candidate_of(r) for r in llm.requests]
    assert asked["app_bundle_id"] == "com.tdesktop.Telegram"
    assert asked["app_category"] == "public.app-category.social-networking"
    assert stats["archived"] == 1


def test_status_check_fails_when_the_fallback_decided_the_last_run(
    db_url: str, tmp_path: Path
) -> None:
    add_candidates(make_ctx(db_url), *({"raw_text": f"Project {i}"} for i in range(4)))
    with OpenAIDouble(lambda body: Status(500)) as llm:
        env = llm_cli_env(tmp_path, db_url, llm.base_url)
        run = run_cli("once", "entity_promote", env=env)
    assert run.returncode == 0, run.stderr  # the run itself "succeeded"…
    check = run_cli("status", "--check", env=cli_env(db_url), cwd=tmp_path)
    assert check.returncode == 1  # …but a human must know the LLM was down
    [line] = [ln for ln in check.stderr.splitlines() if "fallback" in ln]
    assert "100%" in line and "max_fallback_share" in line


def test_jsonl_records_stay_imported_once_without_file_offsets(db_url: str, tmp_path: Path) -> None:
    ctx = make_ctx(db_url)
    source = Path(__file__).resolve().parents[1] / "fixtures" / "observations.jsonl"
    first = JsonlImporter(ctx).import_paths([source])
    assert first.candidates > 0
    with transaction(ctx.sessions) as s:
        s.execute(delete(ImporterFile))  # the file is read from its first byte again
    again = JsonlImporter(ctx).import_paths([source])
    assert again.candidates == 0 and again.skipped == first.records
    assert len(candidates(ctx)) == first.candidates


def test_an_archived_entity_takes_no_summary_from_a_later_sighting(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "Telegram"})  # no context: no summary
    run_entity_promote(ctx)
    with OpenAIDouble(lambda body: verdict("app")) as llm:
        run_entity_purge_v06(make_ctx(db_url, llm.base_url))
    later = "Planning the launch"
    add_candidates(ctx, {"raw_text": "Telegram", "source_id": "later", "surrounding_text": later})
    run_entity_promote(ctx)
    [entity] = entities(ctx)
    assert (entity.status, entity.summary) == ("archived", None)


def test_the_purge_never_rejudges_an_entity_a_user_pinned(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "Pinned"}, {"raw_text": "Open"})
    run_entity_promote(ctx)
    pinned = next(e for e in entities(ctx) if e.display_name == "Pinned")
    with transaction(ctx.sessions) as s:
        s.add(EntityOverride(entity_id=pinned.id, status="active", set_by="user", created_at=T0))
    with OpenAIDouble(lambda body: verdict("noise")) as llm:
        run_entity_purge_v06(make_ctx(db_url, llm.base_url))
        asked = {candidate_of(r)["raw_text"] for r in llm.requests}
    assert asked == {"Open"}
    assert next(e for e in entities(ctx) if e.id == pinned.id).status == "active"


def test_the_purge_asks_about_unverified_entities_before_old_verdicts(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "Judged long ago"})
    with OpenAIDouble(lambda body: verdict("project")) as llm:
        run_entity_promote(make_ctx(db_url, llm.base_url))
    with transaction(ctx.sessions) as s:
        s.execute(update(Entity).values(classified_at=utcnow() - timedelta(days=30)))
    add_candidates(ctx, {"raw_text": "By dry run", "source_id": "d"})
    run_entity_promote(ctx)
    with OpenAIDouble(lambda body: Status(500)) as llm:
        add_candidates(ctx, {"raw_text": "By fallback", "source_id": "f"})
        run_entity_promote(make_ctx(db_url, llm.base_url))
    with OpenAIDouble(lambda body: verdict("project")) as llm:
        budget = {"max_llm_calls": 2, "batch_size": 1}
        run_entity_purge_v06(make_ctx(db_url, llm.base_url, entity_purge_v06=budget))
        asked = [candidate_of(r)["raw_text"] for r in llm.requests]
    assert sorted(asked) == ["By dry run", "By fallback"]


def test_an_app_in_a_social_networking_category_is_never_a_project_by_rule_and_data(
    db_url: str,
) -> None:
    assert (
        "3. An app whose category is social-networking, utilities or developer-tools is never a "
        "project." in SYSTEM_PROMPT
    )
    setup = make_ctx(db_url)
    with transaction(setup.sessions) as s:
        category = "public.app-category.developer-tools"
        upsert_app_metadata(s, [AppRecord("com.microsoft.VSCode", "Code", category, "test")])
    with OpenAIDouble(lambda body: verdict("app")) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        add_candidates(ctx, {"raw_text": "Code", "app_bundle_id": "com.microsoft.VSCode"})
        run_entity_promote(ctx)
        [body] = llm.requests
    assert SYSTEM_PROMPT in body["messages"][0]["content"]
    assert candidate_of(body)["app_category"] == category
    assert candidates(ctx)[0].status == "rejected"
