"""Real processes on PostgreSQL: two promote runs at once, and a run killed with SIGKILL."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from tests.support.cli import cli_env, run_cli, spawn_cli
from tests.support.daemons import wait_for
from tests.support.jobs import add_candidates, candidates, entities, make_ctx
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.models import EntityCandidate
from yzos_jobs.testing import OpenAIDouble, candidate_of, verdict

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _env(pg_url: str, llm_url: str, tmp_path: Path, **config: str) -> dict[str, str]:
    cfg = tmp_path / "config.toml"
    lines = ["[llm]", "max_retries = 0", "max_concurrency = 8", "[jobs.entity_promote]"]
    lines += [f"{k} = {v}" for k, v in config.items()]
    cfg.write_text("\n".join(lines) + "\n")
    return cli_env(
        pg_url, YZOS_LLM_BACKEND="openai", YZOS_LLM_BASE_URL=llm_url, YZOS_CONFIG=str(cfg)
    )


def _echo_name(body):
    cand = candidate_of(body)
    return verdict("project", name=cand["raw_text"])


def test_two_promote_runs_at_once_decide_each_candidate_once(pg_url: str, tmp_path: Path) -> None:
    ctx = make_ctx(pg_url)
    variants = ["Name {i}", "name {i}", "NAME {i}", " Name   {i} "]
    # 1,000 distinct inputs; every 4 of them normalise to one name.
    add_candidates(ctx, *({"raw_text": v.format(i=i)} for i in range(250) for v in variants))
    with OpenAIDouble(_echo_name, latency_s=0.005) as llm:
        env = _env(pg_url, llm.base_url, tmp_path, batch_size="25")
        procs = [spawn_cli("once", "entity_promote", "--json", env=env) for _ in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    rows = candidates(ctx)
    assert {c.status for c in rows} == {"promoted"}
    assert llm.calls == 1000  # each candidate asked once, by one of the two
    names = [e.normalized_name for e in entities(ctx)]
    assert len(names) == len(set(names)) == 250
    assert all(e.sighting_count == 4 for e in entities(ctx))
    per_run = [json.loads(o[0]) for o in outs]
    assert sum(r["promoted"] + r["merged"] for r in per_run) == 1000
    assert all(r["promoted"] + r["merged"] > 0 for r in per_run)  # both did work


def _claimed(ctx, *where) -> int:
    with ctx.sessions() as s:
        return int(
            s.scalar(
                select(func.count())
                .select_from(EntityCandidate)
                .where(EntityCandidate.status == "claimed", *where)
            )
        )


def test_killed_run_loses_nothing(pg_url: str, tmp_path: Path) -> None:
    ctx = make_ctx(pg_url)
    add_candidates(ctx, *({"raw_text": f"Project {i}"} for i in range(60)))
    with OpenAIDouble(_echo_name, latency_s=0.5) as llm:
        env = _env(pg_url, llm.base_url, tmp_path, batch_size="20", lease_s="2")
        victim = spawn_cli("once", "entity_promote", env=env)
        # One batch judged, the next claimed and queued behind it.
        wait_for(lambda: _claimed(ctx) == 40, 120, "two batches in hand")
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=120)
        # The batches in hand stay claimed by the dead process until their lease runs out.
        in_hand = _claimed(ctx)
        assert in_hand > 0
        wait_for(
            lambda: _claimed(ctx, EntityCandidate.lease_until > utcnow()) == 0,
            60,
            "the dead run's leases to run out",
        )
        rerun = run_cli("once", "entity_promote", "--json", env=env, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    stats = json.loads(rerun.stdout)
    assert stats["reclaimed"] == in_hand
    rows = candidates(ctx)
    assert {c.status for c in rows} == {"promoted"} and len(rows) == 60
    assert len(entities(ctx)) == 60


def test_an_import_loses_nothing_to_merges_a_user_makes_meanwhile(
    pg_url: str, tmp_path: Path
) -> None:
    # an import's session ends promote their candidates while the user merges the entities
    # they name into another: a sighting written for an entity merged away a moment before
    # goes where it went, and the import ends well
    from yzos_jobs.entity.corrections import correct

    ctx = make_ctx(pg_url)
    names = [f"Harbor Item {i}" for i in range(60)]
    add_candidates(ctx, *({"raw_text": n, "source_id": "first"} for n in [*names, "Harbor"]))
    run_cli("once", "entity_promote", db_url=pg_url)
    feed = tmp_path / "feed.jsonl"
    with feed.open("w") as fh:
        for s in range(SESSIONS):
            for i, name in enumerate(names):
                record = {"record_id": f"{s}-{i}", "session_id": f"s{s}", "type": "candidate"}
                fh.write(json.dumps({**record, "raw_text": name, "suggested_kind": "project"}))
                fh.write("\n")
            fh.write(json.dumps({"record_id": "end", "session_id": f"s{s}", "type": "session_end"}))
            fh.write("\n")
    proc = spawn_cli("import", "jsonl", str(feed), env=cli_env(pg_url))
    # the merges once the import promotes what its sessions ended
    wait_for(lambda: _promoted(ctx) > len(names) + 1, 120, "the import promoting")
    for name in names:
        correct(ctx.sessions, name, "merge_into", "Harbor")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    assert {c.status for c in candidates(ctx)} == {"promoted"}
    active = [e for e in entities(ctx) if e.status == "active"]
    assert len(active) == 1, [(e.id, e.display_name, e.sighting_count) for e in active]
    [harbor] = active
    # a sighting per session it was seen in
    assert harbor.display_name == "Harbor" and harbor.sighting_count == 1 + SESSIONS


SESSIONS = 200


def _promoted(ctx) -> int:
    with ctx.sessions() as s:
        where = EntityCandidate.status == "promoted"
        return int(s.scalar(select(func.count()).select_from(EntityCandidate).where(where)) or 0)


_UPSERT = """
import json, sys
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import create_db_engine, make_session_factory, transaction
from yzos_jobs.db.entities import EntityDraft, upsert_entities

now = utcnow()
draft = EntityDraft("project", sys.argv[2], sys.argv[3], None, "rule", None, now, None)
with transaction(make_session_factory(create_db_engine(sys.argv[1]))) as s:
    [ref] = upsert_entities(s, [draft], now).values()
print(json.dumps({"id": ref.id, "created": ref.created}))
"""


def test_an_entity_made_while_its_name_is_merged_away_leads_where_it_went(pg_url: str) -> None:
    # A writer that creates an entity of a name waits on the row of that name a merge is
    # deleting; once the merge commits, the name is an alias of where the user put it, and the
    # writer's entity must not stay beside it as a second one of that name.
    from yzos_jobs.db.entities import entity_rows
    from yzos_jobs.entity.merge import merge_entities

    ctx = make_ctx(pg_url)
    add_candidates(ctx, {"raw_text": "Harbor Item"}, {"raw_text": "Harbor"})
    run_cli("once", "entity_promote", db_url=pg_url)
    by_name = {e.display_name: e.id for e in entities(ctx)}
    merging = ctx.sessions()
    rows = {e.display_name: e for e in entity_rows(merging, list(by_name.values()), lock=True)}
    source, target = rows["Harbor Item"], rows["Harbor"]
    merge_entities(merging, source, target, "user", utcnow())
    merging.flush()
    writer = subprocess.Popen(
        [sys.executable, "-c", _UPSERT, pg_url, source.normalized_name, source.display_name],
        env=cli_env(pg_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    merger = merging.scalar(text("SELECT pg_backend_pid()"))
    wait_for(
        lambda: _waiting_on(ctx, merger) or writer.poll() is not None, 60, "the writer to wait"
    )
    merging.commit()
    merging.close()
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    assert json.loads(out)["id"] == target.id
    assert sorted(e.display_name for e in entities(ctx)) == ["Harbor"]


def _waiting_on(ctx, blocker: int) -> bool:
    """Whether a backend of the database waits on a lock the backend `blocker` holds."""
    with ctx.sessions() as s:
        waiting = s.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND :blocker = ANY(pg_blocking_pids(pid))"
            ),
            {"blocker": blocker},
        )
    return bool(waiting)
