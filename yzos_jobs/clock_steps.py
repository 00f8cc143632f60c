"""Steps of the wall clock under a running daemon (NTP correcting a drifted clock, a person
setting the time, a virtual machine restored from a snapshot).

APScheduler 3 keeps each job's next run as a wall-clock time and sleeps until it: a clock set
back an hour leaves every job an hour away, and the daemon idle for that hour. A step forward
needs nothing (the jobs are due at once, and run once: they coalesce). The daemon looks at the
clock every second; where it went back, every job's next run is moved back by the same step,
so the jobs keep their pace on the new clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

from apscheduler.schedulers.base import BaseScheduler

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
    """Move every scheduled job's next run back by `seconds`; how many were moved."""
    moved = 0
    for job in scheduler.get_jobs():
        if job.next_run_time is not None:
            job.modify(next_run_time=job.next_run_time - timedelta(seconds=seconds))
            moved += 1
    return moved
