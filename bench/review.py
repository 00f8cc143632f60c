"""Benchmark: the review commands against `yzos-jobs status`, on SQLite and PostgreSQL.

A knowledge base of N entities (default 100,000; a third each person, project, task, every task
tied to a project, one in twenty archived) with 3 sightings, 2 candidates and 3 decisions each,
built with set-based SQL. Through the real command line with the shipped config.toml, each
command is run R times (default 5) in turn with `yzos-jobs status` on the same database; the
median wall time of each and its ratio to status's are printed (target: <= 1.5). The time the
queries take inside one process is printed beside it.

    .venv/bin/python bench/review.py [--n 100000] [--runs 5] [--backend sqlite|postgresql|both]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _support
from sqlalchemy import Engine, text

from yzos_jobs.config import load_settings
from yzos_jobs.db import migrate
from yzos_jobs.db.connection import create_db_engine, make_session_factory
from yzos_jobs.entity.refs import resolve
from yzos_jobs.review_reports import entities_report, explain_report
from yzos_jobs.status import collect_status
from yzos_jobs.testing import databases

CONFIG = _support.REPO / "config.toml"


def reference(n: int) -> str:
    """A task in the middle of the data set, found by its name."""
    middle = n // 2
    return f"Entity {middle - (middle % 3) + 2}"


# Per backend: a series 1..:n named g(x), and a timestamp :t0 plus an expression in seconds.
SERIES = {
    "sqlite": "WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < :n) ",
    "postgresql": "",
}
FROM_SERIES = {"sqlite": "FROM g", "postgresql": "FROM generate_series(1, :n) AS g(x)"}


def at(backend: str, seconds: str) -> str:
    if backend == "sqlite":
        shifted = f"strftime('%Y-%m-%d %H:%M:%S', '2026-01-01', '+' || ({seconds}) || ' seconds')"
        return f"({shifted} || '.000000')"
    return f"(timestamptz '2026-01-01 00:00:00+00' + make_interval(secs => ({seconds})))"


KIND = "CASE {e} % 3 WHEN 0 THEN 'person' WHEN 1 THEN 'project' ELSE 'task' END"


def seed_statements(backend: str) -> list[tuple[str, str]]:
    """(what, SQL) pairs; `e` is the entity of each generated row."""
    series, source = SERIES[backend], FROM_SERIES[backend]
    entities = f"""
        INSERT INTO entities (id, kind, display_name, normalized_name, status, project_key,
            project_id, confidence, verdict_source, classified_model, classified_at,
            sighting_count, first_seen_at, last_seen_at, created_at, updated_at)
        {series}SELECT x, {KIND.format(e="x")}, 'Entity ' || x, 'entity ' || x,
            CASE WHEN x % 20 = 0 THEN 'archived' ELSE 'active' END, '',
            CASE WHEN x % 3 = 2 THEN x - 1 END, 0.9, 'llm', 'bench-7b', {at(backend, "x")},
            3, {at(backend, "x")}, {at(backend, "x + 7200")}, {at(backend, "x")},
            {at(backend, "x")}
        {source}"""
    sightings = f"""
        INSERT INTO entity_sightings (entity_id, source_kind, source_id, summary, seen_at,
            fingerprint)
        {series}SELECT (x + 2) / 3, 'window_title', 'src-' || x,
            'Worked on entity ' || ((x + 2) / 3) || ' in the afternoon', {at(backend, "x")},
            'fp-' || x
        {source}"""
    candidates = f"""
        INSERT INTO entity_candidates (id, raw_text, suggested_kind, source_kind, source_id,
            status, attempts, entity_id, created_at, updated_at, decided_at)
        {series}SELECT x, 'Entity ' || ((x + 1) / 2), {KIND.format(e="((x + 1) / 2)")},
            'window_title', 'src-' || x, 'promoted', 1, (x + 1) / 2, {at(backend, "x")},
            {at(backend, "x")}, {at(backend, "x")}
        {source}"""
    verdict = (
        '\'{"is_real_entity": true, "kind": "\' || '
        + KIND.format(e="e")
        + ' || \'", "display_name": "Entity \' || e || \'", "confidence": 0.9, '
        '"reason": "A real piece of work."}\''
    )
    decisions = f"""
        INSERT INTO decisions (candidate_id, entity_id, call_site, job_run_id, verdict, source,
            model, prompt_version, latency_ms, outcome, created_at)
        {series}SELECT CASE x % 3 WHEN 1 THEN 2 * e - 1 WHEN 2 THEN 2 * e END, e,
            CASE WHEN x % 3 = 0 THEN 'entity_purge_v06' ELSE 'promote_candidate' END, 1,
            {"CAST(" + verdict + " AS jsonb)" if backend == "postgresql" else verdict},
            'llm', 'bench-7b', 'v1-bench', 120,
            CASE x % 3 WHEN 1 THEN 'promoted' WHEN 2 THEN 'merged' ELSE 'kept' END,
            {at(backend, "x")}
        FROM (SELECT x, (x + 2) / 3 AS e {source}) AS d"""
    runs = """
        INSERT INTO job_runs (job_name, slot, status, owner, started_at, finished_at, stats)
        VALUES ('entity_promote', 'bench-1', 'succeeded', 'bench:1', :now, :now, '{}'),
               ('entity_purge_v06', 'bench-2', 'succeeded', 'bench:1', :now, :now, '{}')"""
    return [
        ("entities", entities),
        ("sightings", sightings.replace(":n", "(3 * :n)")),
        ("candidates", candidates.replace(":n", "(2 * :n)")),
        ("decisions", decisions.replace(":n", "(3 * :n)")),
        ("runs", runs),
    ]


def build(engine: Engine, backend: str, n: int) -> None:
    from yzos_jobs.db.column_types import utcnow

    started = time.perf_counter()
    with engine.begin() as conn:
        for _, sql in seed_statements(backend):
            conn.execute(text(sql), {"n": n, "now": utcnow()})
        if backend == "postgresql":
            for table in ("entities", "entity_candidates", "decisions"):
                conn.execute(
                    text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), :n * 3)"),
                    {"n": n},
                )
    if backend == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))
    with engine.connect() as conn:
        counts = {
            t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one()
            for t in ("entities", "entity_sightings", "entity_candidates", "decisions")
        }
    print(f"  built in {time.perf_counter() - started:.1f} s: {counts}")


def cli_seconds(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "yzos_jobs", *args],
        env=env,
        cwd=_support.REPO,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"yzos-jobs {' '.join(args)} failed: {done.stderr[-2000:]}")
    return elapsed


def in_process_seconds(url: str, runs: int, ref: str) -> dict[str, float]:
    """The queries alone, in one process (median of `runs`)."""
    settings = load_settings(CONFIG, env={"YZOS_DATABASE_URL": url})
    engine = create_db_engine(url)
    sessions = make_session_factory(engine)
    work: dict[str, Callable[[], object]] = {}

    def timed(fn: Callable[[object], object]) -> Callable[[], object]:
        def run() -> object:
            with sessions() as s:
                return fn(s)

        return run

    work["status"] = timed(lambda s: collect_status(s, settings))  # type: ignore[arg-type]
    work["entities --limit 50"] = timed(
        lambda s: entities_report(  # type: ignore[arg-type]
            s, kind=None, status=None, project=None, search=None, limit=50
        )
    )
    work["explain REF"] = timed(lambda s: explain_report(s, resolve(s, ref)))  # type: ignore[arg-type]
    out = {}
    for name, fn in work.items():
        fn()  # warm the connection and the caches
        samples = []
        for _ in range(runs):
            started = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - started)
        out[name] = statistics.median(samples)
    engine.dispose()
    return out


def measure(backend: str, url: str, runs: int, ref: str) -> None:
    env = _support.cli_env(url, CONFIG)
    commands = {
        "status": ["status"],
        "entities --limit 50": ["entities", "--limit", "50"],
        "explain REF": ["explain", ref],
    }
    print(f"  REF = {ref!r}")
    for args in commands.values():
        cli_seconds(args, env)  # warm the OS caches once
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, args in commands.items():
            samples[name].append(cli_seconds(args, env))
    queries = in_process_seconds(url, runs, ref)
    base = statistics.median(samples["status"])
    base_q = queries["status"]
    print(f"  {'command':<24} {'CLI median':>10} {'ratio':>6}   {'queries':>8} {'ratio':>6}")
    for name in commands:
        wall, q = statistics.median(samples[name]), queries[name]
        print(f"  {name:<24} {wall:9.3f}s {wall / base:6.2f}   {q * 1000:7.1f}ms {q / base_q:6.2f}")
    worst = max(statistics.median(samples[n]) / base for n in commands)
    print(f"  {backend}: worst CLI ratio {worst:.2f} (target <= 1.5)")


def run_backend(backend: str, n: int, runs: int) -> None:
    print(f"{backend}: {n} entities, {3 * n} sightings, {2 * n} candidates, {3 * n} decisions")
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'review.db'}"
            engine = create_db_engine(url)
            migrate.upgrade(engine)
            build(engine, backend, n)
            engine.dispose()
            measure(backend, url, runs, reference(n))
        return
    name = databases.create_pg_database()
    try:
        url = databases.pg_url(name)
        engine = create_db_engine(url)
        migrate.upgrade(engine)
        build(engine, backend, n)
        engine.dispose()
        measure(backend, url, runs, reference(n))
    finally:
        databases.drop_pg_database(name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    args = parser.parse_args()
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    for backend in backends:
        run_backend(backend, args.n, args.runs)


if __name__ == "__main__":
    main()
