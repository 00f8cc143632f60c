"""`run_at_start = false` delays the daemon's first promote by one interval; it never pauses it.
A real daemon process, on SQLite and PostgreSQL, timed by its own log."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.support.daemons import start_daemon, stop, wait_for, write_config
from tests.support.jobs import add_candidates, entities, make_ctx

pytestmark = [pytest.mark.adversarial, pytest.mark.slow]

INTERVAL_S = 2


def _logged_at(stderr: str, event: str, **fields: str) -> list[datetime]:
    """When the daemon logged `event` (JSON log lines), in order."""
    times = []
    for line in stderr.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event") == event and all(record.get(k) == v for k, v in fields.items()):
            times.append(datetime.fromisoformat(record["timestamp"]))
    return times


def test_run_at_start_false_promotes_one_interval_after_start(db_url: str, tmp_path: Path) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "Project Phoenix"})
    cfg = write_config(
        tmp_path / "c.toml",
        None,
        logging={"format": "json", "level": "debug"},  # "job started" is a debug line
        **{"jobs.entity_promote": {"interval_s": INTERVAL_S, "run_at_start": False}},
    )
    spawned = time.monotonic()
    daemon = start_daemon(db_url, cfg)
    try:
        wait_for(lambda: bool(entities(ctx)), 30, "the daemon's first promote")
        took = time.monotonic() - spawned
    finally:
        code, err = stop(daemon)
    assert code == 0, err[-3000:]
    assert [e.display_name for e in entities(ctx)] == ["Project Phoenix"]
    assert took < 15  # interpreter start-up, then one interval
    (started,) = _logged_at(err, "daemon started")
    first_run = _logged_at(err, "job started", job="entity_promote")[0]
    waited = (first_run - started).total_seconds()
    assert INTERVAL_S - 0.5 <= waited <= INTERVAL_S + 2, waited  # not at once, not much later
