"""Retention, as the daily prune job applies it: decisions and finished run rows older than
their periods go; every user correction and each active entity's latest decision stay."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import select, update

from tests.support.daemons import write_config
from tests.support.jobs import add_candidates, decisions, entities, make_ctx
from yzos_jobs.cli import cli
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.models import Decision, JobRun
from yzos_jobs.entity.corrections import correct
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.jobs import run_entity_promote, run_prune


def _age_every_decision(ctx: JobContext, days: int) -> None:
    with transaction(ctx.sessions) as s:
        s.execute(update(Decision).values(created_at=utcnow() - timedelta(days=days)))


def _purge_decision(
    ctx: JobContext, entity_id: int, outcome: str, days: int, **fields: object
) -> None:
    """A decision the purge made about an entity `days` ago."""
    with transaction(ctx.sessions) as s:
        s.add(
            Decision(
                call_site="entity_purge_v06",
                source="llm",
                outcome=outcome,
                entity_id=entity_id,
                created_at=utcnow() - timedelta(days=days),
                **fields,
            )
        )


def _once_prune(db_url: str, config: Path) -> dict[str, object]:
    result = CliRunner().invoke(
        cli,
        ["--config", str(config), "once", "prune", "--json"],
        env={"YZOS_DATABASE_URL": db_url},
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


def test_prune_keeps_corrections_and_current_state_and_drops_the_rest(
    db_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(db_url)
    add_candidates(
        ctx,
        {"raw_text": "YZOS Core"},
        {"raw_text": "Telegram"},
        {"raw_text": "3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22"},  # rejected: structural noise
    )
    run_entity_promote(ctx)
    by_name = {e.display_name: e.id for e in entities(ctx)}
    correct(ctx.sessions, f"e:{by_name['Telegram']}", "not_entity")
    _age_every_decision(ctx, 100)
    # A later (still old) re-judgement of YZOS Core: now its current state's decision.
    _purge_decision(ctx, by_name["YZOS Core"], "kept", days=95)
    with transaction(ctx.sessions) as s:
        s.add(Decision(call_site="promote_candidate", source="llm", created_at=utcnow()))
    before = {d.id: d for d in decisions(ctx)}
    assert {"promoted", "rejected"} <= {d.outcome for d in before.values()}
    config = write_config(tmp_path / "c.toml", None, decisions={"retention_days": 90})

    stats = _once_prune(db_url, config)

    kept = {d.id: d for d in decisions(ctx)}
    assert stats["status"] == "succeeded" and stats["decisions_pruned"] == len(before) - 3
    assert {(d.call_site, d.outcome) for d in kept.values()} == {
        ("user", "archived"),  # the correction of Telegram (archived: its other rows go)
        ("entity_purge_v06", "kept"),  # YZOS Core's current state
        ("promote_candidate", None),  # younger than the period
    }
    [core_kept] = [d for d in kept.values() if d.call_site == "entity_purge_v06"]
    assert core_kept.entity_id == by_name["YZOS Core"]


def test_job_runs_go_after_their_period_and_zero_keeps_everything(
    db_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(db_url)
    now = utcnow()
    with transaction(ctx.sessions) as s:
        for slot, age, status in (("old", 40, "succeeded"), ("new", 1, "failed")):
            s.add(
                JobRun(
                    job_name="entity_promote",
                    slot=slot,
                    status=status,
                    owner="x:1",
                    started_at=now - timedelta(days=age),
                )
            )
    add_candidates(ctx, {"raw_text": "YZOS Core"})
    run_entity_promote(ctx)
    _age_every_decision(ctx, 400)

    forever = write_config(
        tmp_path / "forever.toml",
        None,
        retention={"job_runs_days": 0},
        decisions={"retention_days": 0},
    )
    stats = _once_prune(db_url, forever)
    assert (stats["runs_pruned"], stats["decisions_pruned"]) == (0, 0)

    month = write_config(tmp_path / "month.toml", None, retention={"job_runs_days": 30})
    stats = _once_prune(db_url, month)
    assert stats["runs_pruned"] == 1
    with ctx.sessions() as s:
        slots = set(s.scalars(select(JobRun.slot).where(JobRun.job_name == "entity_promote")))
    assert "old" not in slots and "new" in slots
    assert run_prune(ctx)["runs_pruned"] == 0  # the default keeps run rows forever


def test_prune_keeps_the_decision_that_made_an_entity_what_it_is_under_later_sightings(
    db_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "YZOS Core", "source_id": "monday"})
    run_entity_promote(ctx)
    # Seen again: the new candidate is merged into the entity, a row that adds evidence and
    # says nothing of why the entity is real.
    add_candidates(ctx, {"raw_text": "YZOS Core", "source_id": "tuesday"})
    run_entity_promote(ctx)
    [core] = entities(ctx)
    assert [d.outcome for d in decisions(ctx) if d.entity_id == core.id] == ["promoted", "merged"]
    _age_every_decision(ctx, 100)
    config = write_config(tmp_path / "c.toml", None, decisions={"retention_days": 90})

    _once_prune(db_url, config)

    kept = [d.outcome for d in decisions(ctx) if d.entity_id == core.id]
    assert "promoted" in kept, kept
    result = CliRunner().invoke(
        cli,
        ["--config", str(config), "explain", f"e:{core.id}", "--json"],
        env={"YZOS_DATABASE_URL": db_url},
    )
    assert result.exit_code == 0 and '"promoted"' in result.output, result.output


def test_prune_keeps_a_merge_of_an_id_past_32_bits(db_url: str, tmp_path: Path) -> None:
    # ids are 64-bit: one a long-lived database reached must not stop the daily prune (nor the
    # cache expiry and run pruning of its transaction), and its merge still leads on
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "Harbor"})
    run_entity_promote(ctx)
    [harbor] = entities(ctx)
    gone = 3_000_000_000
    _purge_decision(ctx, harbor.id, "merged", days=400, verdict={"merged_from": gone})
    config = write_config(tmp_path / "c.toml", None, decisions={"retention_days": 90})
    assert _once_prune(db_url, config)["status"] == "succeeded"
    shown = CliRunner().invoke(cli, ["show", f"e:{gone}"], env={"YZOS_DATABASE_URL": db_url})
    assert f"e:{gone} was merged into e:{harbor.id}" in shown.output
