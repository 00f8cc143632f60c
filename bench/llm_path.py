"""Benchmark: the LLM path as shipped, end to end through the CLI, against the model server's
own limit.

A loopback OpenAI-protocol server answering in 100 ms with 16 slots (its own process) can give
at most 160 verdicts/s. The product runs with the shipped config.toml except `backend = "openai"`,
`base_url` and `max_concurrency = 16` (batch size as shipped), on PostgreSQL, start-up included:
1. `once entity_promote` over 10,000 candidates (distinct names);
2. `once entity_purge_v06` over 100,000 active entities with `max_llm_calls = 10000`.
Target for both: >= 0.9 of the server's limit.

`--daemon N`: instead, the daemon (`yzos-jobs run`, promote every second) drains N candidates,
once with `[daemon] http` off and once with it on and /metrics and /healthz scraped every second
(as a monitoring system would), alternately `--repeat` times in the same run, each timed from
the daemon's start to the last candidate decided: the HTTP server and its scrapes should cost
nothing measurable.

    .venv/bin/python bench/llm_path.py [--promote 10000] [--entities 100000] [--calls 10000]
    nice .venv/bin/python bench/llm_path.py --daemon 4000 [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
import urllib.request

import _support
from sqlalchemy import text

from yzos_jobs.db import migrate
from yzos_jobs.db.connection import create_db_engine
from yzos_jobs.testing import create_pg_database, drop_pg_database, pg_url

CANDIDATES = """
INSERT INTO entity_candidates (raw_text, suggested_kind, source_kind, source_id, surrounding_text,
                               status, attempts, created_at, updated_at)
SELECT 'Project ' || g, 'project', 'window_title', 'src-' || g,
       'Worked on project ' || g || ' in the afternoon', 'pending', 0,
       now() - make_interval(secs => g), now()
FROM generate_series(1, :n) AS g
"""
ENTITIES = """
INSERT INTO entities (kind, display_name, normalized_name, status, confidence, verdict_source,
                      classified_at, sighting_count, created_at, updated_at, summary)
SELECT 'project', 'Project ' || g, 'project ' || g, 'active', 0.5, 'dry_run', now(), 0, now(),
       now(), 'Worked on project ' || g
FROM generate_series(1, :n) AS g
"""


def seeded(sql: str, n: int) -> tuple[str, str]:
    name = create_pg_database()
    url = pg_url(name)
    engine = create_db_engine(url)
    migrate.upgrade(engine)
    with engine.begin() as conn:
        conn.execute(text(sql), {"n": n})
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE"))
    engine.dispose()
    return name, url


def run(job: list[str], url: str, base_url: str, extra: dict[tuple[str, str], object]) -> tuple:
    changes = {
        ("llm", "backend"): "openai",
        ("llm", "base_url"): base_url,
        ("llm", "max_concurrency"): 16,
        **extra,
    }
    config = _support.shipped_config(_support.OUT / "llm_path.toml", changes)
    env = _support.cli_env(url, config)
    elapsed, peak, out = _support.run_measured(["once", *job, "--json"], env, 0.2)
    return elapsed, peak, json.loads(out)


def report(what: str, n: int, calls: int, elapsed: float, limit: float) -> None:
    ideal = calls / limit
    print(
        f"  {what:<34} {n} items, {calls} LLM calls in {elapsed:6.2f} s "
        f"(ideal {ideal:.2f} s): {calls / elapsed:6.1f} calls/s"
    )
    print(f"  {'':<34} ratio to the server's limit {ideal / elapsed:.3f}  (target >= 0.9)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape_every_second(port: int, stop: threading.Event) -> list[int]:
    """GET /metrics and /healthz each second until `stop`; the statuses seen."""
    seen: list[int] = []
    while not stop.wait(1.0):
        for path in ("/metrics", "/healthz"):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                    r.read()
                    seen.append(r.status)
            except OSError:
                seen.append(0)  # not listening yet, or a 503
    return seen


def undecided(url: str) -> int:
    engine = create_db_engine(url)
    with engine.connect() as conn:
        n = conn.scalar(
            text("SELECT count(*) FROM entity_candidates WHERE status IN ('pending', 'claimed')")
        )
    engine.dispose()
    return int(n or 0)


def drain_with_daemon(n: int, base_url: str, http: bool) -> tuple[float, list[int]]:
    """Seconds from the daemon's start until its promote runs have decided all `n` candidates,
    and the scrapes' statuses when `http` is on."""
    import subprocess

    name, url = seeded(CANDIDATES, n)
    port = free_port()
    changes: dict[tuple[str, str], object] = {
        ("llm", "backend"): "openai",
        ("llm", "base_url"): base_url,
        ("llm", "max_concurrency"): 16,
        ("jobs.entity_promote", "interval_s"): 1,
        ("daemon", "http"): f"127.0.0.1:{port}" if http else "",
    }
    config = _support.shipped_config(_support.OUT / "llm_path_daemon.toml", changes)
    stop, seen = threading.Event(), []
    scraper = threading.Thread(target=lambda: seen.extend(scrape_every_second(port, stop)))
    try:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [_support.YZOS_JOBS, "run"],
            env=_support.cli_env(url, config),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if http:
            scraper.start()
        while undecided(url):
            time.sleep(0.25)
        elapsed = time.perf_counter() - started
        proc.terminate()
        proc.wait(timeout=60)
    finally:
        stop.set()
        if scraper.is_alive():
            scraper.join()
        drop_pg_database(name)
    return elapsed, seen


def daemon_mode(n: int, repeat: int, latency: float, slots: int) -> None:
    limit = slots / latency
    print(
        f"the daemon draining {n} candidates, PostgreSQL, {_support.cores()} cores; server "
        f"{slots} slots x {latency * 1000:.0f} ms = {limit:.0f} verdicts/s; ideal {n / limit:.2f} s"
    )
    with _support.llm_double_process(latency, slots) as base_url:
        for i in range(repeat):
            for http in (False, True):
                elapsed, seen = drain_with_daemon(n, base_url, http)
                label = "http on, scraped every 1 s" if http else "http off"
                scrapes = f"  ({sum(s == 200 for s in seen)} scrapes answered 200)" if http else ""
                print(
                    f"  run {i + 1} {label:<27} {elapsed:6.2f} s, ratio to the server's limit "
                    f"{n / limit / elapsed:.3f}{scrapes}"
                )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--promote", type=int, default=10_000)
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--daemon", type=int, default=0, metavar="N")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if args.daemon:
        daemon_mode(args.daemon, args.repeat, args.latency, args.slots)
        return
    limit = args.slots / args.latency
    print(
        f"LLM path through the CLI, shipped config, PostgreSQL, {_support.cores()} cores; "
        f"server {args.slots} slots x {args.latency * 1000:.0f} ms = {limit:.0f} verdicts/s"
    )
    with _support.llm_double_process(args.latency, args.slots) as base_url:
        name, url = seeded(CANDIDATES, args.promote)
        try:
            elapsed, peak, stats = run(["entity_promote"], url, base_url, {})
        finally:
            drop_pg_database(name)
        report("once entity_promote", args.promote, stats["llm_calls"], elapsed, limit)
        print(
            f"  {'':<34} promoted {stats['promoted']}, failed {stats['failed']}, "
            f"peak RSS {peak:.0f} MB"
        )
        name, url = seeded(ENTITIES, args.entities)
        try:
            budget = {("jobs.entity_purge_v06", "max_llm_calls"): args.calls}
            elapsed, peak, stats = run(["entity_purge_v06"], url, base_url, budget)
        finally:
            drop_pg_database(name)
        report("once entity_purge_v06", args.entities, stats["llm_calls"], elapsed, limit)
        print(
            f"  {'':<34} judged {stats['judged']}, failed {stats['failed']}, peak RSS {peak:.0f} MB"
        )


if __name__ == "__main__":
    main()
