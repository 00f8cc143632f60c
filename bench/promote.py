"""Benchmark: entity_promote on PostgreSQL in dry_run.

1. Throughput: N candidates (default 100,000; every name seen from two sources) promoted by
   `run_entity_promote`, against a set-based SQL baseline that performs the same transitions
   (claim, create entities, insert sightings, count them, mark candidates promoted) on an
   identical database in the same run. Prints candidates/s for both and the ratio (target >= 0.5).
2. Memory: peak RSS of a `yzos-jobs once entity_promote` process over M candidates (default
   1,000,000; target < 200 MB).

    .venv/bin/python bench/promote.py [--n 100000] [--m 1000000] [--batch-size 1000]
"""

from __future__ import annotations

import argparse
import json
import time

import _support
from sqlalchemy import text

from tests.support import databases
from tests.support.cli import cli_env
from tests.support.jobs import make_ctx
from yzos_jobs.db import migrate
from yzos_jobs.db.engine import create_db_engine
from yzos_jobs.maintain.jobs import run_entity_promote

SEED = """
INSERT INTO entity_candidates (raw_text, suggested_kind, source_kind, source_id, surrounding_text,
                               status, attempts, created_at, updated_at)
SELECT 'Project ' || (g / 2), 'project', CASE WHEN g % 2 = 0 THEN 'window_title' ELSE 'ai_tool' END,
       'src-' || g, 'Worked on project ' || (g / 2) || ' in the afternoon', 'pending', 0,
       now() - make_interval(secs => g), now()
FROM generate_series(1, :n) AS g
"""

BASELINE = [
    """UPDATE entity_candidates SET status = 'claimed', claimed_by = 'baseline',
       lease_until = now() + interval '5 minutes', attempts = attempts + 1, updated_at = now()
       WHERE status = 'pending'""",
    """INSERT INTO entities (kind, display_name, normalized_name, status, confidence,
       verdict_source, classified_at, sighting_count, created_at, updated_at, first_seen_at)
       SELECT DISTINCT ON (suggested_kind, lower(raw_text))
              suggested_kind, raw_text, lower(raw_text),
              'active', 0.5, 'dry_run', now(), 0, now(), now(), created_at
       FROM entity_candidates WHERE status = 'claimed'
       ORDER BY suggested_kind, lower(raw_text), created_at
       ON CONFLICT (kind, normalized_name, project_key) DO NOTHING""",
    """INSERT INTO entity_sightings
       (entity_id, source_kind, source_id, summary, seen_at, fingerprint)
       SELECT e.id, c.source_kind, c.source_id, c.surrounding_text, c.created_at,
              md5(c.source_id || coalesce(c.surrounding_text, ''))
       FROM entity_candidates c
       JOIN entities e ON e.kind = c.suggested_kind AND e.normalized_name = lower(c.raw_text)
       WHERE c.status = 'claimed'
       ON CONFLICT DO NOTHING""",
    """UPDATE entities e SET sighting_count = e.sighting_count + s.n,
       last_seen_at = greatest(e.last_seen_at, s.last), summary = coalesce(e.summary, s.summary)
       FROM (SELECT entity_id, count(*) AS n, max(seen_at) AS last, min(summary) AS summary
             FROM entity_sightings GROUP BY entity_id) s
       WHERE e.id = s.entity_id""",
    """UPDATE entity_candidates c SET status = 'promoted', entity_id = e.id,
       verdict = jsonb_build_object('is_real_entity', true, 'kind', e.kind,
                                    'display_name', c.raw_text, 'confidence', 0.5,
                                    'reason', 'dry_run'),
       decided_at = now(), updated_at = now(), claimed_by = NULL, lease_until = NULL
       FROM entities e
       WHERE c.status = 'claimed' AND e.kind = c.suggested_kind
             AND e.normalized_name = lower(c.raw_text)""",
]


def fresh_database(n: int) -> tuple[str, str]:
    name = databases.create_pg_database()
    url = databases.pg_url(name)
    engine = create_db_engine(url)
    migrate.upgrade(engine)
    with engine.begin() as conn:
        conn.execute(text(SEED), {"n": n})
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE"))
    engine.dispose()
    return name, url


def run_baseline(url: str) -> float:
    engine = create_db_engine(url)
    started = time.perf_counter()
    with engine.begin() as conn:
        for sql in BASELINE:
            conn.execute(text(sql))
    elapsed = time.perf_counter() - started
    engine.dispose()
    return elapsed


def run_ours(url: str, batch_size: int) -> tuple[float, dict[str, object]]:
    ctx = make_ctx(url, entity_promote={"batch_size": batch_size})
    started = time.perf_counter()
    stats = run_entity_promote(ctx)
    return time.perf_counter() - started, stats


def check(url: str, n: int) -> None:
    engine = create_db_engine(url)
    with engine.connect() as conn:
        promoted = conn.execute(
            text("SELECT count(*) FROM entity_candidates WHERE status = 'promoted'")
        ).scalar_one()
        ents = conn.execute(text("SELECT count(*) FROM entities")).scalar_one()
        sights = conn.execute(text("SELECT count(*) FROM entity_sightings")).scalar_one()
    engine.dispose()
    assert promoted == n, (promoted, n)
    print(f"  check: {promoted} promoted, {ents} entities, {sights} sightings")


def throughput(n: int, batch_size: int) -> None:
    print(f"throughput: {n} candidates, {n // 2 + 1} names, PostgreSQL, dry_run")
    base_name, base_url = fresh_database(n)
    ours_name, ours_url = fresh_database(n)
    try:
        base_s = run_baseline(base_url)
        check(base_url, n)
        ours_s, stats = run_ours(ours_url, batch_size)
        check(ours_url, n)
    finally:
        databases.drop_pg_database(base_name)
        databases.drop_pg_database(ours_name)
    print(f"  set-based SQL baseline   {base_s:7.2f} s  {n / base_s:9.0f} candidates/s")
    print(
        f"  run_entity_promote       {ours_s:7.2f} s  {n / ours_s:9.0f} candidates/s "
        f"(batch_size {batch_size}, promoted {stats['promoted']}, merged {stats['merged']})"
    )
    print(f"  ratio                    {base_s / ours_s:.2f}  (target >= 0.5)")


def memory(m: int, batch_size: int) -> None:
    print(f"memory: {m} candidates, `yzos-jobs once entity_promote` in its own process")
    name, url = fresh_database(m)
    try:
        env = cli_env(url)
        env["YZOS_CONFIG"] = str(_support.REPO / "bench" / "out" / "promote.toml")
        (_support.REPO / "bench" / "out").mkdir(exist_ok=True)
        (_support.REPO / "bench" / "out" / "promote.toml").write_text(
            f"[jobs.entity_promote]\nbatch_size = {batch_size}\n[logging]\nlevel = 'warning'\n"
        )
        elapsed, peak_mb, out = _support.run_measured(
            ["once", "entity_promote", "--json"], env, poll_s=0.2
        )
        check(url, m)
    finally:
        databases.drop_pg_database(name)
    stats = json.loads(out)
    print(
        f"  promoted {stats['promoted']} merged {stats['merged']} in {elapsed:.1f} s "
        f"({m / elapsed:.0f} candidates/s)"
    )
    print(f"  peak RSS {peak_mb:.0f} MB  (target < 200 MB)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--m", type=int, default=1_000_000)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    throughput(args.n, args.batch_size)
    if not args.skip_memory:
        memory(args.m, args.batch_size)


if __name__ == "__main__":
    main()
