"""What a health probe or a scrape asks the database must stay cheap as history grows: job_runs
keeps every run by default (a promote run a minute per daemon, for ever), and /healthz reads it
at every probe. No statement the probe or the gauges run may read job_runs whole; each reads
an index range, as the database's own query plan shows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, event, text

from tests.support.jobs import make_ctx
from yzos_jobs.db.connection import create_db_engine
from yzos_jobs.health import check_database
from yzos_jobs.metrics import read_gauges

RUNS = 50_000


def _fill_job_runs(engine: Engine) -> None:
    # A long history: most runs days old, a few recent, from three daemons.
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(
                text(
                    "INSERT INTO job_runs (job_name, slot, status, owner, started_at, "
                    "finished_at) SELECT CASE WHEN g % 100 = 0 THEN 'entity_purge_v06' ELSE "
                    "'entity_promote' END, 'run:' || g, 'succeeded', 'vm:' || (g % 3), "
                    "now() - g * interval '20 seconds', now() - g * interval '20 seconds' "
                    f"FROM generate_series(1, {RUNS}) g"
                )
            )
            conn.execute(text("ANALYZE job_runs"))
        else:
            conn.execute(
                text(
                    "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g "
                    f"WHERE n < {RUNS}) INSERT INTO job_runs (job_name, slot, status, owner, "
                    "started_at, finished_at) SELECT CASE WHEN n % 100 = 0 THEN "
                    "'entity_purge_v06' ELSE 'entity_promote' END, 'run:' || n, 'succeeded', "
                    "'vm:' || (n % 3), strftime('%Y-%m-%d %H:%M:%f', 'now', "
                    "(-20 * n) || ' seconds'), strftime('%Y-%m-%d %H:%M:%f', 'now', "
                    "(-20 * n) || ' seconds') FROM g"
                )
            )
            conn.execute(text("ANALYZE"))


@pytest.fixture
def filled(db_url: str) -> Iterator[Engine]:
    engine = create_db_engine(db_url)
    _fill_job_runs(engine)
    yield engine
    engine.dispose()


def _statements_of(engine: Engine, read: object) -> list[tuple[str, object]]:
    seen: list[tuple[str, object]] = []

    def record(_conn: object, _cursor: object, statement: str, params: object, *_: object) -> None:
        if "job_runs" in statement and statement.lstrip().upper().startswith(("SELECT", "WITH")):
            seen.append((statement, params))

    event.listen(engine, "before_cursor_execute", record)
    try:
        assert callable(read)
        read()
    finally:
        event.remove(engine, "before_cursor_execute", record)
    return seen


def _whole_table_reads(engine: Engine, statements: list[tuple[str, object]]) -> list[str]:
    whole = []
    with engine.connect() as conn:
        for statement, params in statements:
            if conn.dialect.name == "postgresql":
                plan = conn.exec_driver_sql(f"EXPLAIN {statement}", params).scalars().all()
                if any("Seq Scan on job_runs" in line for line in plan):
                    whole.append(f"{statement}\n" + "\n".join(plan))
            else:
                plan = [
                    row[-1]
                    for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", params)
                ]
                if any(line.startswith("SCAN job_runs") for line in plan):
                    whole.append(f"{statement}\n" + "\n".join(plan))
    return whole


def test_the_health_probe_and_the_gauges_read_job_runs_by_index(
    db_url: str, filled: Engine
) -> None:
    settings = make_ctx(db_url).settings

    def probe() -> None:
        health = check_database(filled, settings)
        assert not any("does not answer" in p for p in health.problems), health.body()
        with filled.connect() as conn:
            read_gauges(conn, settings)

    statements = _statements_of(filled, probe)
    assert statements
    whole = _whole_table_reads(filled, statements)
    assert whole == [], "\n\n".join(whole)
