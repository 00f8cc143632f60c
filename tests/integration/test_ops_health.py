"""What the health rules make of an operator's own choices: a paused job stops running on
purpose, so its last run ageing past the overdue limit is no problem for `status --check` or
/healthz (which apply the same rules). And the probes answer, whatever the database does: a
writer holding SQLite's lock does not hold them up, a PostgreSQL that hangs makes them 503."""

from __future__ import annotations

import shutil
import socket
import sqlite3
import struct
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import update
from sqlalchemy.engine import make_url

from tests.support.daemons import start_daemon, stop, wait_for, write_config
from tests.support.jobs import add_candidates, make_ctx
from tests.support.scrape import free_port, get, value
from tests.support.tcp_proxy import TcpProxy
from yzos_jobs.cli import cli
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import create_db_engine, transaction
from yzos_jobs.db.models import JobRun
from yzos_jobs.health import check_health
from yzos_jobs.maintain.runner import run_job


def _cli(db_url: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), env={"YZOS_DATABASE_URL": db_url})
    return result.exit_code, result.output


def _age_runs(db_url: str, days: int) -> None:
    ctx = make_ctx(db_url)
    with transaction(ctx.sessions) as s:
        s.execute(update(JobRun).values(started_at=utcnow() - timedelta(days=days)))


def test_a_paused_job_is_not_overdue_and_is_again_once_resumed(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "YZOS Core"})
    assert run_job(ctx, "entity_promote").status == "succeeded"
    _age_runs(db_url, 2)
    code, out = _cli(db_url, "status", "--check")
    assert code == 1 and "entity_promote: overdue" in out  # the rule the pause must lift

    assert _cli(db_url, "pause", "entity_promote")[0] == 0
    code, out = _cli(db_url, "status", "--check")
    assert code == 0, out
    assert "OVERDUE" not in out and "paused      entity_promote by " in out
    engine = create_db_engine(db_url)
    try:
        health = check_health(engine, ctx.settings, tick_age_s=0)
        assert health.ok, health.body()
        assert any(note.startswith("entity_promote paused by ") for note in health.notes)

        assert _cli(db_url, "resume", "entity_promote")[0] == 0
        code, out = _cli(db_url, "status", "--check")
        assert code == 1 and "entity_promote: overdue" in out
        assert not check_health(engine, ctx.settings, tick_age_s=0).ok
    finally:
        engine.dispose()


def test_a_paused_job_that_failed_last_is_still_a_problem(db_url: str) -> None:
    ctx = make_ctx(db_url)
    with transaction(ctx.sessions) as s:
        s.add(
            JobRun(
                job_name="entity_promote",
                slot="x",
                status="failed",
                owner="x:1",
                error="OperationalError: gone",
                started_at=utcnow(),
            )
        )
    assert _cli(db_url, "pause", "entity_promote")[0] == 0
    code, out = _cli(db_url, "status", "--check")
    assert code == 1 and "entity_promote: last run failed" in out


def _daemon_config(tmp_path: Path, port: int) -> Path:
    # No promote or purge run of its own: the probes are all that touch the database.
    return write_config(
        tmp_path / "c.toml",
        None,
        daemon={"http": f"127.0.0.1:{port}"},
        **{"jobs.entity_promote": {"interval_s": 3600, "run_at_start": False}},
    )


@pytest.fixture
def sqlite_url(sqlite_template: Path, tmp_path: Path) -> str:
    path = tmp_path / "yzos.db"
    shutil.copy(sqlite_template, path)
    return f"sqlite:///{path}"


@pytest.mark.slow
def test_probes_answer_while_another_process_writes_to_sqlite(
    sqlite_url: str, tmp_path: Path
) -> None:
    add_candidates(make_ctx(sqlite_url), {"raw_text": "YZOS Core"})
    port = free_port()
    daemon = start_daemon(sqlite_url, _daemon_config(tmp_path, port))
    writer = sqlite3.connect(make_url(sqlite_url).database or "", isolation_level=None)
    try:
        wait_for(lambda: get(f"http://127.0.0.1:{port}/healthz")[0] == 200, 60, "/healthz 200")
        wait_for(
            lambda: value(port, "yzos_job_runs_total", job="prune", outcome="succeeded") == 1,
            60,
            "the start-up prune",
        )
        writer.execute("BEGIN IMMEDIATE")  # an import's batch holding the write lock
        # The answers come while the lock is held: a probe only reads, and never waits for it.
        status, body = get(f"http://127.0.0.1:{port}/healthz", timeout=45)
        assert (status, body.splitlines()[:1]) == (200, ["ok"]), body
        assert value(port, "yzos_store_read_failed") == 0
        assert value(port, "yzos_candidates", status="pending") == 1
        assert writer.in_transaction
    finally:
        writer.close()
        code, err = stop(daemon)
    assert code == 0, err[-3000:]


@pytest.mark.postgres
@pytest.mark.slow
def test_healthz_answers_503_when_the_database_hangs(pg_url: str, tmp_path: Path) -> None:
    url = make_url(pg_url)
    proxy = TcpProxy((url.host or "127.0.0.1", url.port or 5432)).up()
    through_proxy = url.set(port=proxy.port).render_as_string(hide_password=False)
    port = free_port()
    daemon = start_daemon(through_proxy, _daemon_config(tmp_path, port))
    try:
        wait_for(lambda: get(f"http://127.0.0.1:{port}/healthz")[0] == 200, 60, "/healthz 200")
        assert value(port, "yzos_store_read_failed") == 0
        proxy.freeze()
        # Several probes while it hangs, as a monitoring system keeps probing: each is answered.
        for _ in range(3):
            status, body = get(f"http://127.0.0.1:{port}/healthz", timeout=45)
            assert status == 503 and "database does not answer" in body, (status, body)
        status, _ = get(f"http://127.0.0.1:{port}/metrics", timeout=45)
        assert status == 200
        wait_for(lambda: value(port, "yzos_store_read_failed") == 1, 60, "the gauges given up")
        proxy.thaw()
        wait_for(lambda: get(f"http://127.0.0.1:{port}/healthz")[0] == 200, 60, "/healthz 200")
        wait_for(lambda: value(port, "yzos_store_read_failed") == 0, 60, "the gauges read again")
    finally:
        proxy.thaw()
        code, err = stop(daemon)
        proxy.down()
    assert code == 0, err[-3000:]


def _hang_up(port: int, path: str) -> None:
    """Ask and hang up at once (a reset, not a close), as a probe that timed out does."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


@pytest.mark.slow
def test_a_client_that_hangs_up_leaves_no_traceback(sqlite_url: str, tmp_path: Path) -> None:
    port = free_port()
    daemon = start_daemon(sqlite_url, _daemon_config(tmp_path, port))
    try:
        wait_for(lambda: get(f"http://127.0.0.1:{port}/healthz")[0] == 200, 60, "/healthz 200")
        for _ in range(5):
            _hang_up(port, "/healthz")
            _hang_up(port, "/metrics")
        assert get(f"http://127.0.0.1:{port}/healthz")[0] == 200  # still serving
    finally:
        code, err = stop(daemon)
    assert code == 0, err[-3000:]
    assert "Traceback" not in err and "Exception occurred" not in err, err[-3000:]


def _age_runs_hours(db_url: str, hours: int) -> None:
    ctx = make_ctx(db_url)
    with transaction(ctx.sessions) as s:
        s.execute(update(JobRun).values(started_at=utcnow() - timedelta(hours=hours)))


def test_the_daily_prune_is_overdue_after_a_missed_day_not_within_one(db_url: str) -> None:
    ctx = make_ctx(db_url)
    assert run_job(ctx, "prune").status == "succeeded"
    _age_runs_hours(db_url, 13)  # past the purge's 12 hours, within the prune's day
    code, out = _cli(db_url, "status", "--check")
    assert code == 0 and "prune: overdue" not in out, out
    _age_runs_hours(db_url, 50)  # a whole day's run missed
    code, out = _cli(db_url, "status", "--check")
    assert code == 1 and "prune: overdue" in out
