"""What a daemon left running writes to its log: one line per run that did something, at info,
with the counters that are not zero (all of them in JSON logs); an idle run only at debug."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tests.support.daemons import start_daemon, stop, wait_for, write_config
from tests.support.jobs import add_candidates, entities, make_ctx
from yzos_jobs.db.models import JobRun

pytestmark = pytest.mark.slow
IDLE_RUNS = 3


def _promote_runs(ctx) -> int:
    with ctx.sessions() as s:
        return int(
            s.scalar(
                select(func.count())
                .select_from(JobRun)
                .where(JobRun.job_name == "entity_promote", JobRun.status == "succeeded")
            )
        )


def _run_daemon(db_url: str, tmp_path: Path, log_format: str) -> str:
    """A daemon that promotes two candidates, then runs idle a few times; its stderr."""
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "Project Phoenix"}, {"raw_text": "Project Ares"})
    config = write_config(
        tmp_path / "c.toml",
        None,
        logging={"format": log_format},
        **{"jobs.entity_promote": {"interval_s": 1}},
    )
    daemon = start_daemon(db_url, config)
    try:
        wait_for(lambda: len(entities(ctx)) == 2, 60, "both candidates promoted")
        done = _promote_runs(ctx)
        wait_for(lambda: _promote_runs(ctx) >= done + IDLE_RUNS, 60, "idle promote runs")
    finally:
        code, err = stop(daemon)
    assert code == 0, err[-3000:]
    return err


def test_a_console_line_per_run_that_did_something(db_url: str, tmp_path: Path) -> None:
    err = _run_daemon(db_url, tmp_path, "console")
    # the purge's slots fall on the clock's hours (it may run during the test): the promote's
    # idle runs are the ones not at info
    finished = [
        line
        for line in err.splitlines()
        if "job finished" in line and "job=entity_purge_v06" not in line
    ]
    assert len(finished) == 1, err[-3000:]
    (line,) = finished
    assert "job=entity_promote" in line and "promoted=2" in line
    assert "=0 " not in line and not line.rstrip().endswith("=0")  # zeros say nothing


def test_json_lines_carry_every_counter(db_url: str, tmp_path: Path) -> None:
    err = _run_daemon(db_url, tmp_path, "json")
    records = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    finished = [
        r for r in records if r["event"] == "job finished" and r["job"] != "entity_purge_v06"
    ]
    assert len(finished) == 1, err[-3000:]
    (run,) = finished
    assert (run["job"], run["promoted"], run["merged"], run["rejected"]) == (
        "entity_promote",
        2,
        0,
        0,
    )
    assert run["slot"].startswith("run:") and run["owner"]


def test_a_second_signal_exits_at_once_whatever_the_daemon_was_printing(
    db_url: str, tmp_path: Path
) -> None:
    import signal
    import subprocess

    ctx = make_ctx(db_url)
    config = write_config(tmp_path / "c.toml", None, **{"jobs.entity_promote": {"interval_s": 1}})
    daemon = start_daemon(db_url, config)
    wait_for(lambda: _promote_runs(ctx) >= 1, 60, "the daemon's first run")
    daemon.send_signal(signal.SIGTERM)
    daemon.send_signal(signal.SIGTERM)
    try:
        code = daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        daemon.proc.kill()
        raise AssertionError("the daemon hung after two signals") from None
    # Stopped by the first (0), exited on the second (143), or the second came as the
    # interpreter finished, its handlers gone (-15): never a hang.
    assert code in (0, 128 + signal.SIGTERM, -signal.SIGTERM), daemon.stderr[-3000:]
    assert "Traceback" not in daemon.stderr
