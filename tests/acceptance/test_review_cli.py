"""`entities`, `show`, `explain` and `export` through the real command line, as a user runs them
(not on a terminal: plain columns; `--json` for scripts)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.support.cli import assert_one_line_error, run_cli
from tests.support.jobs import add_candidates, candidates, entities, make_ctx
from yzos_jobs.maintain.jobs import run_entity_promote
from yzos_jobs.testing import OpenAIDouble, candidate_of, verdict

REPO_A, REPO_B, REPO_C = "/Users/me/Code/yzos-core", "/Users/me/Code/api", "/Users/me/Code/b/api"


@pytest.fixture
def filled(db_url: str) -> str:
    """A project with a task, a person, a rejected app and two projects named "api" in
    different repositories, judged over the loopback LLM; and an entity a user archived."""

    def judge(body):
        cand = candidate_of(body)
        if cand["raw_text"] == "Telegram":
            return verdict("app", reason="A chat app, not work.")
        return verdict(cand["suggested_kind"], name=cand["raw_text"], reason="Real work.")

    with OpenAIDouble(judge) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        add_candidates(
            ctx,
            {"raw_text": "yzos-core", "project_path": REPO_A, "surrounding_text": "Lease code"},
            {"raw_text": "Fix lease renewal", "suggested_kind": "task", "project_path": REPO_A},
            {"raw_text": "Alice Chen", "suggested_kind": "person", "source_id": "chat"},
            {"raw_text": "Telegram", "source_id": "tg"},
            {"raw_text": "api", "project_path": REPO_C, "source_id": "a1"},
            {"raw_text": "api", "project_path": REPO_B, "source_id": "a2"},
        )
        run_entity_promote(ctx)
    dry = make_ctx(db_url)
    add_candidates(dry, {"raw_text": "Phoenix", "source_id": "p"})
    run_entity_promote(dry)
    done = run_cli("correct", "Phoenix", "--not-entity", db_url=db_url)
    assert done.returncode == 0, done.stderr
    return db_url


def test_entities_lists_filters_and_prints_json(filled: str) -> None:
    out = run_cli("entities", db_url=filled)
    assert out.returncode == 0, out.stderr
    header, *lines = out.stdout.splitlines()
    assert header.split()[:4] == ["ref", "name", "kind", "status"]
    assert len(lines) == 6  # yzos-core, its task, Alice Chen, two "api", archived Phoenix
    task_line = next(line for line in lines if "Fix lease renewal" in line)
    assert "yzos-core" in task_line.split("Fix lease renewal")[1]  # the task's project
    listed = json.loads(run_cli("entities", "--json", db_url=filled).stdout)
    assert {e["name"] for e in listed} == {
        "yzos-core",
        "Fix lease renewal",
        "Alice Chen",
        "api",
        "Phoenix",
    }
    task = next(e for e in listed if e["name"] == "Fix lease renewal")
    assert (task["kind"], task["project"], task["sightings"]) == ("task", "yzos-core", 1)
    assert task["verdict_source"] == "llm" and task["first_seen"] and task["last_seen"]
    only = json.loads(
        run_cli("entities", "--kind", "person", "--search", "ALICE", "--json", db_url=filled).stdout
    )
    assert [e["name"] for e in only] == ["Alice Chen"]
    # a quote or a space alone is looked for as typed: no name here holds a quote, two a space
    for typed, names in (("'", set()), ('"', set()), (" ", {"Alice Chen", "Fix lease renewal"})):
        found = json.loads(run_cli("entities", "--search", typed, "--json", db_url=filled).stdout)
        assert {e["name"] for e in found} == names, typed
    archived = json.loads(
        run_cli("entities", "--status", "archived", "--json", db_url=filled).stdout
    )
    assert [(e["name"], e["verdict_source"]) for e in archived] == [("Phoenix", "user")]
    of_project = json.loads(
        run_cli("entities", "--project", "yzos-core", "--json", db_url=filled).stdout
    )
    assert [e["name"] for e in of_project] == ["Fix lease renewal"]
    limited = run_cli("entities", "--limit", "2", "--json", db_url=filled)
    assert len(json.loads(limited.stdout)) == 2
    # a list cut short says so, beside the JSON (stderr) or under the table
    total = len(listed)  # every entity, the archived one too
    assert total == 6 and f"2 of {total} shown" in limited.stderr
    table = run_cli("entities", "--limit", "2", db_url=filled)
    assert table.stdout.rstrip().splitlines()[-1].startswith(f"2 of {total} shown")
    whole = run_cli("entities", "--limit", str(total), db_url=filled)
    assert "shown" not in whole.stdout + whole.stderr


def test_entities_of_a_project_by_the_name_it_had_before(filled: str) -> None:
    # renamed: its old name still leads to it, as for the commands
    # that take a reference
    renamed = run_cli("correct", "yzos-core", "--rename", "YZOS Core Service", db_url=filled)
    assert renamed.returncode == 0, renamed.stderr
    for name in ("yzos-core", "YZOS Core Service"):
        listed = run_cli("entities", "--project", name, "--json", db_url=filled)
        assert [e["name"] for e in json.loads(listed.stdout)] == ["Fix lease renewal"], name
    unknown = run_cli("entities", "--project", "Nothing Like It", db_url=filled)
    assert unknown.returncode == 1
    assert unknown.stderr.strip() == "yzos-jobs: error: no project named 'Nothing Like It'"


def test_entities_of_a_project_by_the_id_of_something_else_is_an_error(filled: str) -> None:
    listed = json.loads(run_cli("entities", "--json", db_url=filled).stdout)
    person = next(e for e in listed if e["name"] == "Alice Chen")
    # a person holds no tasks: an empty list would read as a project with none
    named = run_cli("entities", "--project", person["ref"], db_url=filled)
    assert named.returncode == 1
    assert named.stderr.strip() == (
        f"yzos-jobs: error: {person['ref']} is a person ('Alice Chen'), not a project"
    )


def test_show_prints_the_entity_its_sightings_tasks_and_decisions(filled: str) -> None:
    out = run_cli("show", "yzos-core", db_url=filled)
    assert out.returncode == 0, out.stderr
    assert "Lease code" in out.stdout  # the newest sighting's summary
    assert "Fix lease renewal" in out.stdout  # its task
    assert "promote_candidate" in out.stdout and "Real work." in out.stdout  # its decision
    report = json.loads(run_cli("show", "yzos-core", "--json", db_url=filled).stdout)
    assert report["entity"]["kind"] == "project" and report["entity"]["project_path"] == REPO_A
    assert [t["name"] for t in report["tasks"]] == ["Fix lease renewal"]
    assert [s["summary"] for s in report["sightings"]] == ["Lease code"]
    assert [d["outcome"] for d in report["decisions"]] == ["promoted"]


def test_explain_prints_the_chain_with_reason_source_and_model(filled: str) -> None:
    ctx = make_ctx(filled)
    phoenix = next(e for e in entities(ctx) if e.display_name == "Phoenix")
    out = run_cli("explain", f"e:{phoenix.id}", db_url=filled)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any(" promote_candidate " in x and " promoted " in x and "dry_run" in x for x in lines)
    assert any(" user " in x and " archived " in x for x in lines)
    chain = json.loads(run_cli("explain", "Phoenix", "--json", db_url=filled).stdout)
    assert chain["state"] == "archived"
    assert [(d["call_site"], d["outcome"], d["source"]) for d in chain["decisions"]] == [
        ("promote_candidate", "promoted", "dry_run"),
        ("user", "archived", "user"),
    ]
    tg = next(c for c in candidates(ctx) if c.raw_text == "Telegram")
    why = json.loads(run_cli("explain", f"c:{tg.id}", "--json", db_url=filled).stdout)
    [decision] = why["decisions"]
    assert why["state"] == "rejected" and decision["kind"] == "app"
    assert (decision["reason"], decision["source"], decision["model"]) == (
        "A chat app, not work.",
        "llm",
        "double-7b",
    )
    text = run_cli("explain", "Telegram", db_url=filled)  # no entity: the candidate of that text
    assert text.returncode == 0 and "A chat app, not work." in text.stdout


def test_an_ambiguous_name_lists_the_matches_and_exits_2(filled: str) -> None:
    out = run_cli("show", "api", db_url=filled)
    assert out.returncode == 2
    apis = [e.id for e in entities(make_ctx(filled)) if e.display_name == "api"]
    assert len(apis) == 2
    assert all(f"e:{i}" in out.stdout for i in apis) and REPO_B in out.stdout
    assert_one_line_error(out, 2, "'api' matches 2 entities")
    as_json = run_cli("explain", "api", "--json", db_url=filled)
    assert as_json.returncode == 2
    assert sorted(m["ref"] for m in json.loads(as_json.stdout)["matches"]) == [
        f"e:{i}" for i in sorted(apis)
    ]
    missing = run_cli("show", "Nothing Like It", db_url=filled)
    assert_one_line_error(missing, 1, "no entity or candidate named 'Nothing Like It'")
    assert_one_line_error(run_cli("explain", "e:999999", db_url=filled), 1, "no entity e:999999")


def test_export_writes_jsonl_and_csv(filled: str) -> None:
    out = run_cli("export", db_url=filled)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) == 5 and "Phoenix" not in {r["name"] for r in rows}
    task = next(r for r in rows if r["name"] == "Fix lease renewal")
    assert (task["kind"], task["project"], task["sightings"]) == ("task", "yzos-core", 1)
    assert task["first_seen"] and task["last_seen"]
    every = run_cli("export", "--format", "csv", "--include-archived", db_url=filled)
    table = list(csv.DictReader(io.StringIO(every.stdout)))
    assert len(table) == 6 and {r["status"] for r in table} == {"active", "archived"}
    assert list(table[0]) == [
        "id",
        "name",
        "kind",
        "status",
        "project",
        "project_path",
        "sightings",
        "first_seen",
        "last_seen",
        "verdict_source",
    ]
