"""The daemon as an operator runs it: real processes against PostgreSQL and a loopback LLM."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
from pathlib import Path
from subprocess import PIPE

import pytest
from apscheduler.events import (
    EVENT_JOB_EXECUTED,
    EVENT_JOB_MAX_INSTANCES,
    JobExecutionEvent,
    JobSubmissionEvent,
)
from sqlalchemy import func, select, text
from structlog.testing import capture_logs

from tests.support.cli import cli_env, spawn_cli
from tests.support.daemons import Daemon, start_daemon, stop, wait_for, write_config
from tests.support.jobs import add_candidates, candidates, entities, make_ctx, sighting_count
from yzos_jobs.daemon import OVERLAPS_TOLD, overlap_level
from yzos_jobs.daemon import Daemon as DaemonProcess
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.models import EntityCandidate, JobRun
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.testing import Hang, OpenAIDouble, candidate_of, verdict

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _echo(body):
    cand = candidate_of(body)
    return verdict("project", name=cand["raw_text"])


def _undecided(ctx) -> int:
    with ctx.sessions() as s:
        return int(
            s.scalar(select(func.count()).where(EntityCandidate.status.in_(("pending", "claimed"))))
        )


def _promote_runs_ended(ctx) -> int:
    ended = (JobRun.job_name == "entity_promote", JobRun.status != "running")
    with ctx.sessions() as s:
        return int(s.scalar(select(func.count()).select_from(JobRun).where(*ended)))


def _count(ctx, *where) -> int:
    with ctx.sessions() as s:
        return int(s.scalar(select(func.count()).select_from(EntityCandidate).where(*where)))


def _purge_runs(ctx) -> list[JobRun]:
    with ctx.sessions() as s:
        return list(s.scalars(select(JobRun).where(JobRun.job_name == "entity_purge_v06")))


def _config(tmp_path: Path, llm_url: str, name: str = "c.toml", **promote: object) -> Path:
    return write_config(
        tmp_path / name,
        llm_url,
        llm={"max_concurrency": 8},
        jobs={"run_lease_s": 5},
        # Every run's line, idle ones too, and every slot another daemon took.
        logging={"format": "json", "level": "debug"},
        **{
            "jobs.entity_promote": {"interval_s": 1, "batch_size": 50, "lease_s": 5, **promote},
            "jobs.entity_purge_v06": {
                "interval_h": 3 / 3600,
                "max_llm_calls": 20,
                "run_at_start": True,
            },
        },
    )


def test_two_daemons_share_the_work_and_run_each_purge_slot_once(
    pg_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(pg_url)
    add_candidates(ctx, *({"raw_text": f"Project {i}"} for i in range(2000)))
    with OpenAIDouble(_echo, latency_s=0.01) as llm:
        cfg = _config(tmp_path, llm.base_url)
        daemons = [start_daemon(pg_url, cfg) for _ in range(2)]
        wait_for(lambda: _undecided(ctx) == 0, 120, "every candidate decided")
        wait_for(
            lambda: sum(r.status == "succeeded" for r in _purge_runs(ctx)) >= 2,
            120,
            "two purge slots run",
        )
        results = [stop(d) for d in daemons]
    assert [code for code, _ in results] == [0, 0], results[0][1][-3000:]
    asked = [candidate_of(r) for r in llm.requests]
    promoted_asks = [c["raw_text"] for c in asked if c["source_kind"] != "cron"]
    assert len(promoted_asks) == len(set(promoted_asks)) == 2000  # each candidate decided once
    assert {c.status for c in candidates(ctx)} == {"promoted"}
    assert len(entities(ctx)) == 2000 and sighting_count(ctx) == 2000
    with ctx.sessions() as s:
        runs = list(s.scalars(select(JobRun)))
    purge_rows = [r for r in runs if r.job_name == "entity_purge_v06"]
    assert len(purge_rows) >= 2
    # Both daemons tried every slot; each slot ran exactly once.
    finished = sum(
        1
        for _, err in results
        for line in err.splitlines()
        if '"job finished"' in line and '"entity_purge_v06"' in line
    )
    assert finished == len(purge_rows)
    assert sum('"job slot taken by another daemon"' in err for _, err in results) >= 1
    assert len({r.owner for r in runs}) == 2
    assert all(r.status == "succeeded" for r in runs)


def test_kill_9_one_daemon_the_other_finishes_everything(pg_url: str, tmp_path: Path) -> None:
    ctx = make_ctx(pg_url)
    add_candidates(ctx, *({"raw_text": f"Repo {i}"} for i in range(300)))
    with OpenAIDouble(_echo, latency_s=0.1) as llm:
        cfg = _config(tmp_path, llm.base_url, batch_size=20, lease_s=3)
        victim = start_daemon(pg_url, cfg)
        wait_for(lambda: llm.calls >= 10, 120, "the first daemon to be mid-batch")
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=120)
        survivor = start_daemon(pg_url, cfg)
        wait_for(lambda: _undecided(ctx) == 0, 120, "the survivor to finish")
        code, err = stop(survivor)
    assert code == 0, err[-3000:]
    rows = candidates(ctx)
    assert len(rows) == 300 and {c.status for c in rows} == {"promoted"}
    names = [e.normalized_name for e in entities(ctx)]
    assert len(names) == len(set(names)) == 300
    assert sighting_count(ctx) == 300
    assert all(e.sighting_count == 1 for e in entities(ctx))


def _signalled_mid_batch(
    pg_url: str, tmp_path: Path, stop_signal: signal.Signals, *command: str
) -> tuple[JobContext, int, str]:
    """200 candidates to promote, 20 to a batch against a slow model; `yzos-jobs COMMAND` gets
    `stop_signal` once a batch is in hand. (ctx, exit code, stderr)."""
    ctx = make_ctx(pg_url)
    add_candidates(ctx, *({"raw_text": f"Task {i}"} for i in range(200)))
    with OpenAIDouble(_echo, latency_s=0.3) as llm:
        cfg = _config(tmp_path, llm.base_url, batch_size=20, lease_s=10)
        process = Daemon(spawn_cli(*command, env=cli_env(pg_url, YZOS_CONFIG=str(cfg))))
        wait_for(lambda: llm.calls >= 1, 120, "a batch in hand")
        process.send_signal(stop_signal)  # once: a second signal means "exit now"
        code = process.wait(timeout=120)
    return ctx, code, process.stderr


# SIGHUP: the terminal the daemon was started from closed
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_exits_0_and_leaves_nothing_claimed(
    pg_url: str, tmp_path: Path, stop_signal: signal.Signals
) -> None:
    ctx, code, err = _signalled_mid_batch(pg_url, tmp_path, stop_signal, "run")
    assert code == 0, err[-3000:]
    assert _count(ctx, EntityCandidate.status == "claimed") == 0
    assert any(c.status == "promoted" for c in candidates(ctx))  # the batch in hand finished
    assert "stopping: finishing the batch in hand" in err


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_once_stopped_by_a_signal_records_its_run_as_stopped(
    pg_url: str, tmp_path: Path, stop_signal: signal.Signals
) -> None:
    # Ctrl-C (or kill) on `once`: the batch in hand finishes and the run is recorded as
    # stopped early, not left "running" for `status` to find
    ctx, code, err = _signalled_mid_batch(pg_url, tmp_path, stop_signal, "once", "entity_promote")
    assert code == 0, err[-3000:]
    with ctx.sessions() as s:
        [run] = s.scalars(select(JobRun).where(JobRun.job_name == "entity_promote"))
    assert run.status == "succeeded" and run.stats["stopped"] is True
    assert _count(ctx, EntityCandidate.status == "claimed") == 0
    assert any(c.status == "promoted" for c in candidates(ctx))  # the batch in hand finished
    assert any(c.status == "pending" for c in candidates(ctx))  # the rest left for later


def test_a_daemon_started_under_nohup_outlives_its_terminal(pg_url: str, tmp_path: Path) -> None:
    # nohup ignores SIGHUP before the daemon starts: the terminal closing does not stop it
    ctx = make_ctx(pg_url)
    with OpenAIDouble(_echo) as llm:
        env = cli_env(pg_url, YZOS_CONFIG=str(_config(tmp_path, llm.base_url)))
        command = ["nohup", sys.executable, "-m", "yzos_jobs", "run"]
        daemon = Daemon(
            subprocess.Popen(command, env=env, cwd=tmp_path, stdout=PIPE, stderr=PIPE, text=True)
        )
        wait_for(lambda: _promote_runs_ended(ctx) >= 1, 120, "the first run")
        daemon.send_signal(signal.SIGHUP)
        add_candidates(ctx, {"raw_text": "After the hangup"})
        wait_for(lambda: _undecided(ctx) == 0, 120, "a run after the hangup")
        code, err = stop(daemon)
    assert code == 0, err[-3000:]
    assert "SIGHUP" not in err
    assert {e.display_name for e in entities(ctx)} == {"After the hangup"}


def test_daemon_outlives_terminated_database_connections(pg_url: str, tmp_path: Path) -> None:
    ctx = make_ctx(pg_url)
    add_candidates(ctx, {"raw_text": "Before"})
    database = pg_url.rsplit("/", 1)[1]
    with OpenAIDouble(_echo) as llm:
        daemon = start_daemon(pg_url, _config(tmp_path, llm.base_url))
        # The first run over and recorded, so the connections die between runs.
        wait_for(lambda: _promote_runs_ended(ctx) >= 1, 120, "the first run")
        with ctx.sessions() as s, s.begin():
            killed = s.scalar(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = :db AND pid <> pg_backend_pid()"
                ),
                {"db": database},
            )
        assert killed >= 1
        add_candidates(ctx, {"raw_text": "After", "source_id": "later"})
        wait_for(lambda: _undecided(ctx) == 0, 120, "a run after the connections died")
        code, err = stop(daemon)
    assert code == 0, err[-3000:]
    assert {e.display_name for e in entities(ctx)} == {"Before", "After"}
    with ctx.sessions() as s:
        runs = list(
            s.scalars(
                select(JobRun)
                .where(JobRun.job_name == "entity_promote")
                .order_by(JobRun.started_at)
            )
        )
    # Each name promoted once, one before the connections died and one after; the daemon's
    # last run succeeded.
    seen = [(r.status, r.stats, r.error) for r in runs]
    assert sum((r.stats or {}).get("promoted", 0) for r in runs) == 2, seen
    assert runs[-1].status == "succeeded", seen


def test_second_signal_exits_at_once_and_leases_cover_the_batch(
    pg_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(pg_url)
    add_candidates(ctx, *({"raw_text": f"Slow {i}"} for i in range(60)))
    claimed = EntityCandidate.status == "claimed"
    # Answers take 3 s: a batch of 20 at 8 at a time is in hand for 9 s.
    with OpenAIDouble(_echo, latency_s=3) as llm:
        cfg = _config(tmp_path, llm.base_url, batch_size=20, lease_s=30)
        daemon = start_daemon(pg_url, cfg)
        # One batch judged, the next claimed and queued behind it.
        wait_for(lambda: _count(ctx, claimed) == 40, 120, "two batches in hand")
        daemon.send_signal(signal.SIGTERM)
        wait_for(lambda: daemon.logged("stopping: finishing the batch in hand"), 120, "the stop")
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(timeout=120)
    # Exited at once (the orderly stop, which waits for the answers, exits 0).
    assert code == 128 + signal.SIGTERM, daemon.stderr[-3000:]
    assert daemon.logged("SIGTERM: exiting now")
    # The batches in hand stay leased (another daemon takes them when the lease ends): none was
    # handed back; the third batch was never claimed.
    with ctx.sessions() as s:
        leases = list(s.scalars(select(EntityCandidate.lease_until).where(claimed)))
    assert leases and all(lease > utcnow() for lease in leases)
    assert len(leases) + _count(ctx, EntityCandidate.status == "promoted") == 40
    assert _count(ctx, EntityCandidate.status == "pending") == 20


def test_a_stopping_daemon_makes_no_new_call_to_the_model(pg_url: str, tmp_path: Path) -> None:
    # A model that never answers in time: each call ends at llm.timeout_s, and the client
    # would try it twice more (a minute each at the defaults) before the stop could end.
    ctx = make_ctx(pg_url)
    add_candidates(ctx, {"raw_text": "Never answered"})
    with OpenAIDouble(lambda body: Hang(60)) as llm:
        cfg = write_config(
            tmp_path / "hang.toml",
            llm.base_url,
            llm={"max_concurrency": 1, "max_retries": 2, "timeout_s": 3.0},
            jobs={"run_lease_s": 5},
            logging={"format": "json", "level": "debug"},
            **{"jobs.entity_promote": {"interval_s": 1, "batch_size": 1, "lease_s": 30}},
        )
        daemon = start_daemon(pg_url, cfg)
        wait_for(lambda: llm.calls >= 1, 120, "a call in flight")
        daemon.send_signal(signal.SIGTERM)
        asked = llm.calls
        code = daemon.wait(timeout=120)
        after = llm.calls
    assert code == 0, daemon.stderr[-3000:]
    # the call in flight ran out its time; no retry of it, no other call, went out
    assert after == asked == 1
    # and the candidate waits for a run that asks, not decided without the model
    [waiting] = candidates(ctx)
    assert waiting.status == "pending" and entities(ctx) == []
    # with its claim's attempt given back: stops never wear a candidate down to the fallback
    assert waiting.attempts == 0


def test_a_run_longer_than_its_interval_is_told_once_it_has_taken_many(db_url: str) -> None:
    daemon = DaemonProcess(make_ctx(db_url))

    def skipped() -> JobSubmissionEvent:
        return JobSubmissionEvent(EVENT_JOB_MAX_INSTANCES, "import_sources", "default", [utcnow()])

    with capture_logs() as logged:
        for _ in range(OVERLAPS_TOLD * 2):
            daemon.on_scheduler_event(skipped())
        daemon.on_scheduler_event(
            JobExecutionEvent(EVENT_JOB_EXECUTED, "import_sources", "default", utcnow())
        )
        for _ in range(OVERLAPS_TOLD):
            daemon.on_scheduler_event(skipped())
    warned = [e for e in logged if e["log_level"] == "warning"]
    # once for each long run; the ordinary overlaps below warning (info, where logged at all)
    assert [(e["job"], e["intervals"]) for e in warned] == [("import_sources", OVERLAPS_TOLD)] * 2
    # and at info (what the daemon logs) the first interval of each long run, not every one
    levels = [overlap_level(n) for n in range(1, 3 * OVERLAPS_TOLD)]
    assert [n for n, level in enumerate(levels, 1) if level >= logging.INFO] == [1, OVERLAPS_TOLD]
