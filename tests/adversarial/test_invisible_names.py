"""Names that draw nothing, or look like another: format characters (zero-width, bidi controls)
leave a name's key, a name with no visible character is refused by `correct` and dropped
everywhere else, and a triage record's proposals are bounded as a triage reply's are. Both
backends, the judge through the loopback double."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.jobs import add_candidates, candidates, entities, make_ctx, triage_session
from yzos_jobs.entity.triage_writes import SessionTriage, TriagePerson, TriageProject, TriageTask
from yzos_jobs.maintain.jobs import run_entity_promote
from yzos_jobs.testing import OpenAIDouble, accept_suggested

pytestmark = pytest.mark.adversarial

INVISIBLE = ["\u200b\u202e", "\u2066\u2069", "\u200d \ufeff", "\u00ad"]


def test_a_rename_to_a_name_with_nothing_visible_is_refused(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "harbor-sync"})
    run_entity_promote(ctx)
    for name in INVISIBLE:
        refused = run_cli("correct", "harbor-sync", "--rename", name, db_url=db_url)
        assert refused.returncode == 2, refused.stdout
        assert "visible character" in refused.stderr
    assert [e.display_name for e in entities(ctx)] == ["harbor-sync"]


def test_format_characters_leave_the_key(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(
        ctx,
        {"raw_text": "Kestrel\u200bBoard", "source_id": "a"},
        {"raw_text": "KestrelBoard", "source_id": "b"},
        {"raw_text": "Kestrel\u2060Bo\u00adard\u200e", "source_id": "c"},
    )
    stats = run_entity_promote(ctx)
    assert (stats["promoted"], stats["merged"]) == (1, 2)
    [board] = entities(ctx)
    assert board.normalized_name == "kestrelboard"
    shown = run_cli("show", "KestrelBoard", "--json", db_url=db_url)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["entity"]["id"] == board.id


def test_candidates_with_nothing_visible_never_become_entities(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(
        ctx, *({"raw_text": name, "source_id": f"s{i}"} for i, name in enumerate(INVISIBLE))
    )
    run_entity_promote(ctx)
    assert entities(ctx) == []
    assert {c.status for c in candidates(ctx)} == {"rejected"}


def test_a_jsonl_candidate_with_nothing_visible_is_reported_and_skipped(
    db_url: str, tmp_path: Path
) -> None:
    lines = [
        {"record_id": "r1", "session_id": "s", "type": "candidate", "raw_text": "\u200b\u202e"},
        {"record_id": "r2", "session_id": "s", "type": "candidate", "raw_text": "Harbor Sync"},
    ]
    path = tmp_path / "obs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    done = run_cli("import", "jsonl", str(path), db_url=db_url)
    assert done.returncode == 0, done.stderr
    assert ":1: candidate raw_text has no visible character" in done.stderr
    assert [c.raw_text for c in candidates(make_ctx(db_url))] == ["Harbor Sync"]


def test_triage_titles_and_persons_with_nothing_visible_are_dropped(db_url: str) -> None:
    proposals = SessionTriage(
        [TriageProject("harbor-sync", "/Users/me/Code/harbor-sync")],
        [TriageTask(name, "harbor-sync") for name in INVISIBLE] + [TriageTask("Ship 1.2")],
        [TriagePerson(name) for name in INVISIBLE],
    )
    with OpenAIDouble(accept_suggested) as llm:
        run = triage_session(make_ctx(db_url, llm.base_url), "s1", proposals)
        assert llm.calls == 2  # the project and the one task with a name
    assert run.triaged == 1
    assert sorted(e.display_name for e in entities(make_ctx(db_url))) == ["Ship 1.2", "harbor-sync"]


def test_a_triage_record_is_capped_as_a_triage_reply_is(db_url: str) -> None:
    proposals = SessionTriage(
        [TriageProject(f"project {i}") for i in range(50)],
        [TriageTask(f"Task number {i}") for i in range(3000)],
        [TriagePerson(f"Person {i}") for i in range(1000)],
    )
    with OpenAIDouble(accept_suggested) as llm:
        ctx = make_ctx(db_url, llm.base_url, triage={"max_tasks": 8})
        run = triage_session(ctx, "s1", proposals)
        # 10 projects, 8 tasks and 10 persons at most: the bounds of a reply.
        assert llm.calls == 28
    assert run.triaged == 1 and run.created == 28
