"""Benchmark: entity_promote on PostgreSQL in dry_run, as shipped.

1. Through the CLI: `yzos-jobs once entity_promote` with the shipped config.toml (only the
   database URL set), start-up included, over N candidates (default 100,000; every name seen
   from two sources), against set-based SQL making every write the product makes (claim with
   lease and attempt, the structural check, entities, sightings, their counts, candidate states,
   decision rows) on an identical database in the same run. Target: ratio >= 0.5.
2. In-process: `run_entity_promote` on a third identical database (the library without the
   command around it), for comparison.
3. Memory: peak RSS of `yzos-jobs once entity_promote` over M candidates (default 1,000,000;
   target < 200 MB).

    .venv/bin/python bench/promote.py [--n 100000] [--m 1000000] [--skip-memory]
"""

from __future__ import annotations

import argparse
import json
import time

import _support
from sqlalchemy import text

from yzos_jobs.config import load_settings
from yzos_jobs.db import migrate
from yzos_jobs.db.connection import create_db_engine, make_session_factory
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.jobs import run_entity_promote
from yzos_jobs.runtime import build_classifier
from yzos_jobs.testing import create_pg_database, drop_pg_database, pg_url

# Names in letters ("Project bcd" for 123): a name made mostly of a long digit run is structural
# noise, and every candidate here is meant to be promoted.
CANDIDATES = """
INSERT INTO entity_candidates (raw_text, suggested_kind, source_kind, source_id, surrounding_text,
                               status, attempts, created_at, updated_at)
SELECT 'Project ' || translate((g / 2)::text, '0123456789', 'abcdefghij'), 'project',
       CASE WHEN g % 2 = 0 THEN 'window_title' ELSE 'ai_tool' END,
       'src-' || g, 'Worked on project ' || (g / 2) || ' in the afternoon', 'pending', 0,
       now() - make_interval(secs => g), now()
FROM generate_series(1, :n) AS g
"""

# Every write the product makes, set-based, in one transaction.
BASELINE = [
    # claim, with a lease and an attempt
    """UPDATE entity_candidates SET status = 'claimed', claimed_by = 'baseline',
       lease_until = now() + interval '5 minutes', attempts = attempts + 1, updated_at = now()
       WHERE status = 'pending' AND suggested_kind IS NOT NULL""",
    # the structural check (letters present) and the entities
    """INSERT INTO entities (kind, display_name, normalized_name, project_key, status,
       confidence, verdict_source, classified_at, sighting_count, created_at, updated_at,
       first_seen_at, summary)
       SELECT DISTINCT ON (suggested_kind, lower(raw_text))
              suggested_kind, raw_text, lower(raw_text), '', 'active', 0.5, 'dry_run', now(), 0,
              now(), now(), created_at, surrounding_text
       FROM entity_candidates WHERE status = 'claimed' AND raw_text ~ '[[:alpha:]]'
       ORDER BY suggested_kind, lower(raw_text), created_at
       ON CONFLICT (kind, normalized_name, project_key) DO NOTHING""",
    # sightings
    """INSERT INTO entity_sightings
       (entity_id, source_kind, source_id, summary, seen_at, fingerprint)
       SELECT e.id, c.source_kind, c.source_id, c.surrounding_text, c.created_at,
              md5(c.source_id || coalesce(c.surrounding_text, ''))
       FROM entity_candidates c
       JOIN entities e ON e.kind = c.suggested_kind AND e.normalized_name = lower(c.raw_text)
                      AND e.project_key = ''
       WHERE c.status = 'claimed'
       ON CONFLICT DO NOTHING""",
    # their counts
    """UPDATE entities e SET sighting_count = e.sighting_count + s.n,
       first_seen_at = least(e.first_seen_at, s.first), last_seen_at = s.last
       FROM (SELECT entity_id, count(*) AS n, min(seen_at) AS first, max(seen_at) AS last
             FROM entity_sightings GROUP BY entity_id) s
       WHERE e.id = s.entity_id""",
    # candidate states
    """UPDATE entity_candidates c SET status = 'promoted', entity_id = e.id,
       verdict = jsonb_build_object('is_real_entity', true, 'kind', e.kind,
                                    'display_name', c.raw_text, 'confidence', 0.5,
                                    'reason', 'dry_run'),
       reject_reason = NULL, decided_at = now(), updated_at = now(), claimed_by = NULL,
       lease_until = NULL
       FROM entities e
       WHERE c.status = 'claimed' AND e.kind = c.suggested_kind
             AND e.normalized_name = lower(c.raw_text) AND e.project_key = ''""",
    # decision rows
    """INSERT INTO decisions (candidate_id, entity_id, call_site, verdict, source, outcome,
       created_at)
       SELECT c.id, c.entity_id, 'promote_candidate', c.verdict, 'dry_run',
              CASE WHEN c.created_at = e.first_seen_at THEN 'created' ELSE 'merged' END, now()
       FROM entity_candidates c JOIN entities e ON e.id = c.entity_id
       WHERE c.status = 'promoted'""",
]


def fresh_database(n: int) -> tuple[str, str]:
    name = create_pg_database()
    url = pg_url(name)
    engine = create_db_engine(url)
    migrate.upgrade(engine)
    with engine.begin() as conn:
        conn.execute(text(CANDIDATES), {"n": n})
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


def run_cli(url: str) -> tuple[float, float, dict[str, object]]:
    env = _support.cli_env(url, _support.SHIPPED_CONFIG)
    elapsed, peak, out = _support.run_measured(["once", "entity_promote", "--json"], env, 0.2)
    return elapsed, peak, json.loads(out)


def run_in_process(url: str) -> float:
    settings = load_settings(_support.SHIPPED_CONFIG, env={"YZOS_DATABASE_URL": url})
    sessions = make_session_factory(create_db_engine(url))
    ctx = JobContext(settings, sessions, build_classifier(settings, sessions))
    started = time.perf_counter()
    run_entity_promote(ctx)
    return time.perf_counter() - started


def check(url: str, n: int) -> None:
    engine = create_db_engine(url)
    with engine.connect() as conn:
        promoted = conn.execute(
            text("SELECT count(*) FROM entity_candidates WHERE status = 'promoted'")
        ).scalar_one()
        ents = conn.execute(text("SELECT count(*) FROM entities")).scalar_one()
        sights = conn.execute(text("SELECT count(*) FROM entity_sightings")).scalar_one()
        trail = conn.execute(text("SELECT count(*) FROM decisions")).scalar_one()
    engine.dispose()
    assert promoted == n == trail, (promoted, n, trail)
    print(f"    check: {promoted} promoted, {ents} entities, {sights} sightings, {trail} decisions")


def throughput(n: int) -> None:
    print(f"throughput: {n} candidates, {n // 2 + 1} names, PostgreSQL, dry_run, shipped config")
    dbs = [fresh_database(n) for _ in range(3)]
    try:
        base_s = run_baseline(dbs[0][1])
        check(dbs[0][1], n)
        cli_s, _, stats = run_cli(dbs[1][1])
        check(dbs[1][1], n)
        lib_s = run_in_process(dbs[2][1])
        check(dbs[2][1], n)
    finally:
        for name, _ in dbs:
            drop_pg_database(name)
    print(f"  set-based SQL, every write       {base_s:7.2f} s  {n / base_s:9.0f} candidates/s")
    print(
        f"  yzos-jobs once entity_promote    {cli_s:7.2f} s  {n / cli_s:9.0f} candidates/s "
        f"(start-up included; {stats['batches']} batches)"
    )
    print(f"  run_entity_promote in-process    {lib_s:7.2f} s  {n / lib_s:9.0f} candidates/s")
    print(f"  ratio, CLI / set-based SQL       {base_s / cli_s:.2f}  (target >= 0.5)")


def memory(m: int) -> None:
    print(f"memory: {m} candidates, `yzos-jobs once entity_promote`, shipped config")
    name, url = fresh_database(m)
    try:
        elapsed, peak_mb, out = run_cli(url)
        check(url, m)
    finally:
        drop_pg_database(name)
    print(
        f"  promoted {out['promoted']} merged {out['merged']} in {elapsed:.1f} s "
        f"({m / elapsed:.0f} candidates/s)"
    )
    print(f"  peak RSS {peak_mb:.0f} MB  (target < 200 MB)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--m", type=int, default=1_000_000)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    print(f"{_support.cores()} cores")
    throughput(args.n)
    if not args.skip_memory:
        memory(args.m)


if __name__ == "__main__":
    main()
