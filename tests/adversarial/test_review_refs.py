"""Every review command with every form of reference, on every kind of thing a reference can
name: `show`, `explain` (plain and JSON) and `correct`, by name, by `e:ID` and by `c:ID`, on a
decided candidate, a pending candidate, a held candidate, an archived entity and a name merged
into another (an alias). In-process through click's runner, both backends."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from click.testing import CliRunner, Result

from tests.support.jobs import T0, add_candidates, candidates, entities, make_ctx
from yzos_jobs.cli import cli
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.entity.corrections import correct
from yzos_jobs.maintain.jobs import run_entity_promote

pytestmark = pytest.mark.adversarial


@dataclass(frozen=True)
class Named:
    """What a set of references names: an entity or a candidate, by its ref."""

    what: str  # "entity" | "candidate"
    ref: str
    refs: tuple[str, ...]  # every form that names it


def _world(db_url: str) -> dict[str, Named]:
    ctx = make_ctx(db_url)  # dry_run
    add_candidates(
        ctx,
        {"raw_text": "Harbor Sync", "source_id": "s1"},
        {"raw_text": "Old Harbor", "source_id": "s2"},
        {"raw_text": "Telegram", "source_id": "s3"},
        {"raw_text": "{{project_name}}", "source_id": "s4"},  # rejected: structural noise
        {"raw_text": "Quarterly planning", "source_id": "s5", "suggested_kind": None},
    )
    run_entity_promote(ctx)
    with transaction(ctx.sessions) as s:
        held = NewCandidate("Fix the flaky upload test", "ai_tool", "s6", "task", None, None, T0)
        insert_candidates(s, [held], utcnow(), held=True)
    by_name = {e.display_name: e for e in entities(ctx)}
    correct(ctx.sessions, "Telegram", "not_entity")
    correct(ctx.sessions, "Old Harbor", "merge_into", "Harbor Sync")
    cands = {c.raw_text: c for c in candidates(ctx)}
    harbor, telegram = by_name["Harbor Sync"].id, by_name["Telegram"].id
    rejected, pending = cands["{{project_name}}"], cands["Quarterly planning"]
    held_row = cands["Fix the flaky upload test"]
    assert (rejected.status, pending.status, held_row.status) == ("rejected", "pending", "held")
    return {
        "decided": Named("candidate", f"c:{rejected.id}", (f"c:{rejected.id}", "{{project_name}}")),
        "promoted": Named(
            "candidate", f"c:{cands['Harbor Sync'].id}", (f"c:{cands['Harbor Sync'].id}",)
        ),
        "pending": Named("candidate", f"c:{pending.id}", (f"c:{pending.id}", "Quarterly planning")),
        "held": Named(
            "candidate",
            f"c:{held_row.id}",
            (f"c:{held_row.id}", "Fix the flaky upload test", " Fix the flaky upload test "),
        ),
        "archived": Named(
            "entity", f"e:{telegram}", (f"e:{telegram}", "Telegram", "telegram", '"Telegram"')
        ),
        "alias": Named("entity", f"e:{harbor}", ("Old Harbor", "OLD HARBOR", f"e:{harbor}")),
    }


def _run(db_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"YZOS_DATABASE_URL": db_url})


@pytest.mark.parametrize("command", ["show", "explain"])
def test_show_and_explain_answer_every_reference_form(db_url: str, command: str) -> None:
    world = _world(db_url)
    for label, named in world.items():
        for ref in named.refs:
            as_json = _run(db_url, command, ref, "--json")
            assert as_json.exit_code == 0, (label, ref, as_json.output)
            report = json.loads(as_json.output)
            assert report[named.what]["ref"] == named.ref, (label, ref)
            assert report["decisions_total"] == len(report["decisions"]) or named.what == "entity"
            plain = _run(db_url, command, ref)
            assert plain.exit_code == 0, (label, ref, plain.output)
            assert named.ref in plain.output


def test_correct_answers_every_reference_form(db_url: str) -> None:
    world = _world(db_url)
    decided, pending, held = world["decided"], world["pending"], world["held"]
    archived, alias = world["archived"], world["alias"]
    steps = [
        # A candidate that names no entity can only be requeued, and only once rejected.
        ([decided.refs[1], "--not-entity"], 2, "names no entity"),
        ([decided.refs[1], "--requeue"], 0, f"{decided.ref} requeued"),
        ([decided.ref, "--requeue"], 2, "only a rejected candidate"),
        ([pending.refs[1], "--requeue"], 2, "only a rejected candidate"),
        ([pending.ref, "--kind", "task"], 2, "names no entity"),
        ([held.refs[1], "--requeue"], 2, "only a rejected candidate"),
        ([held.ref, "--not-entity"], 2, "names no entity"),
        # An archived entity by each of its names and its id.
        ([archived.refs[1], "--restore"], 0, f"{archived.ref} restored"),
        ([archived.ref, "--not-entity"], 0, f"{archived.ref} archived"),
        ([archived.refs[2], "--restore"], 0, f"{archived.ref} restored"),
        # A merged-away name acts on the entity it was merged into.
        ([alias.refs[0], "--rename", "Harbor Sync Server"], 0, f"{alias.ref} renamed"),
        ([alias.refs[1], "--kind", "task"], 0, f"{alias.ref} rekinded"),
        # A promoted candidate stands for its entity.
        ([world["promoted"].ref, "--kind", "project"], 0, f"{alias.ref} rekinded"),
    ]
    for args, code, said in steps:
        done = _run(db_url, "correct", *args)
        assert done.exit_code == code, (args, done.output)
        assert said in done.output, (args, done.output)


def test_an_unknown_or_ambiguous_reference_is_one_line(db_url: str) -> None:
    _world(db_url)
    for command in (["show"], ["explain"], ["correct", "--restore"]):
        for ref in ("e:999999", "c:999999", "Nothing Like It", "   "):
            done = _run(db_url, *command[:1], ref, *command[1:])
            assert done.exit_code != 0, (command, ref)
            assert len(done.output.strip().splitlines()) == 1, (command, ref, done.output)


def test_the_id_of_an_entity_merged_away_is_never_given_again(db_url: str) -> None:
    # the newest entity merged into an older one: the next entity made gets an id of its own,
    # so a script's `e:ID` and the decision trail of the merged one name nothing else
    ctx = make_ctx(db_url)  # dry_run
    add_candidates(ctx, {"raw_text": "Harbor Sync", "source_id": "s1"})
    add_candidates(ctx, {"raw_text": "Harbor Sync App", "source_id": "s2"})
    run_entity_promote(ctx)
    older, newest = sorted(e.id for e in entities(ctx))
    correct(ctx.sessions, f"e:{newest}", "merge_into", f"e:{older}")
    add_candidates(ctx, {"raw_text": "Tide Tables", "source_id": "s3"})
    run_entity_promote(ctx)
    made = {e.display_name: e.id for e in entities(ctx)}
    assert made["Tide Tables"] > newest
    gone = _run(db_url, "show", f"e:{newest}")
    assert gone.exit_code != 0 and len(gone.output.strip().splitlines()) == 1


def test_the_id_of_an_entity_merged_away_says_where_it_went(db_url: str) -> None:
    # a script's e:ID of an entity merged away (then its target merged again) names the entity
    # that holds it now, for each command, and acts on nothing
    ctx = make_ctx(db_url)  # dry_run
    add_candidates(
        ctx,
        {"raw_text": "Harbor Sync", "source_id": "s1"},
        {"raw_text": "Harbor Sync App", "source_id": "s2"},
        {"raw_text": "Harbor Platform", "source_id": "s3"},
    )
    run_entity_promote(ctx)
    ids = {e.display_name: e.id for e in entities(ctx)}
    first, second, last = ids["Harbor Sync App"], ids["Harbor Sync"], ids["Harbor Platform"]
    correct(ctx.sessions, f"e:{first}", "merge_into", f"e:{second}")
    correct(ctx.sessions, f"e:{second}", "merge_into", f"e:{last}")
    for command in (["show"], ["explain"], ["correct", "--not-entity"]):
        for gone in (first, second):
            done = _run(db_url, command[0], f"e:{gone}", *command[1:])
            assert done.exit_code != 0, (command, done.output)
            assert done.output.strip() == (
                f"yzos-jobs: error: e:{gone} was merged into e:{last} (project 'Harbor Platform'); "
                f"name e:{last} instead"
            ), (command, done.output)
    assert {e.display_name: e.status for e in entities(ctx)} == {"Harbor Platform": "active"}
    never = _run(db_url, "show", "e:999999")
    assert never.output.strip().endswith("no entity e:999999")
