"""Steps of the wall clock under a running daemon (NTP correcting a drifted clock, a person
setting the time, a virtual machine restored from a snapshot).

APScheduler 3 keeps each job's next run as a wall-clock time and sleeps until it: a clock set
back an hour leaves every job an hour away, and the daemon idle for that hour. A step forward
needs nothing (the jobs are due at once, and run once: they coalesce). The daemon looks at the
clock every second; where it went back, every job's next run is moved back by the same step, or
to its next boundary where it runs on fixed ones, so the jobs keep their pace on the new clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.base import BaseScheduler
from apscheduler.triggers.interval import IntervalTrigger

# Below this, a difference between the wall clock and the monotonic one is drift or the time
# between two readings, not a step.
STEP_S = 2.0


class ClockSteps:
    """How far the wall clock went back since the last look, against the monotonic clock."""

    def __init__(
        self,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._wall, self._monotonic = wall, monotonic
        self._offset = wall() - monotonic()

    def stepped_back(self) -> float:
        """Seconds the wall clock was set back since the last call (0.0 for none)."""
        offset = self._wall() - self._monotonic()
        back = self._offset - offset
        self._offset = offset
        return back if back >= STEP_S else 0.0


def move_jobs_back(scheduler: BaseScheduler, seconds: float) -> int:
    """Move every scheduled job's next run back by `seconds`; how many were moved. A job that
    runs at its start plus whole intervals (the prune at 00:00 UTC, the purge's six-hour
    boundaries: the same instants on every daemon) keeps them: it runs at the next one on the
    new clock."""
    now = datetime.now(UTC)
    moved = 0
    for job in scheduler.get_jobs():
        if job.next_run_time is None:
            continue
        trigger = job.trigger
        if isinstance(trigger, IntervalTrigger) and trigger.start_date <= now:
            next_run = trigger.get_next_fire_time(None, now)
        else:  # its first run not reached yet on the new clock, or a one-off run
            next_run = job.next_run_time - timedelta(seconds=seconds)
        job.modify(next_run_time=next_run)
        moved += 1
    return moved
