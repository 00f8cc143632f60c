"""`run_at_start = false` delays the daemon's first promote by one interval; it never pauses it.
The schedule the daemon makes, then a real daemon process on SQLite and PostgreSQL, read by its
own log."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.daemons import start_daemon, stop, wait_for, write_config
from tests.support.jobs import add_candidates, entities, make_ctx
from yzos_jobs.daemon import Daemon
from yzos_jobs.db.column_types import utcnow

pytestmark = [pytest.mark.adversarial, pytest.mark.slow]

INTERVAL_S = 2


def _events(stderr: str) -> list[dict[str, str]]:
    """What the daemon logged (JSON log lines), in order."""
    events = []
    for line in stderr.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


@pytest.mark.parametrize("run_at_start", [True, False])
def test_the_first_promote_is_scheduled_at_start_or_one_interval_later(
    db_url: str, run_at_start: bool
) -> None:
    ctx = make_ctx(db_url, entity_promote={"interval_s": INTERVAL_S, "run_at_start": run_at_start})
    daemon = Daemon(ctx)
    before = utcnow()
    daemon._schedule()
    after = utcnow()
    first = daemon.scheduler.get_job("entity_promote").next_run_time
    assert first is not None  # never added paused
    delay = timedelta(0) if run_at_start else timedelta(seconds=INTERVAL_S)
    assert before + delay <= first <= after + delay


def test_run_at_start_false_promotes_after_start(db_url: str, tmp_path: Path) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "Project Phoenix"})
    cfg = write_config(
        tmp_path / "c.toml",
        None,
        logging={"format": "json", "level": "debug"},  # "job started" is a debug line
        **{"jobs.entity_promote": {"interval_s": INTERVAL_S, "run_at_start": False}},
    )
    daemon = start_daemon(db_url, cfg)
    try:
        wait_for(lambda: bool(entities(ctx)), 120, "the daemon's first promote")
    finally:
        code, err = stop(daemon)
    assert code == 0, err[-3000:]
    assert [e.display_name for e in entities(ctx)] == ["Project Phoenix"]
    names = [e["event"] for e in _events(err) if e.get("job") in (None, "entity_promote")]
    assert names.index("daemon started") < names.index("job started")
