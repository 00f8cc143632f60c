"""A wall clock set back under the daemon: the step is seen against the monotonic clock, and
the jobs' next runs move back with it, so they run on the new clock's time instead of idling
for the length of the step."""

from __future__ import annotations

import threading
from datetime import timedelta

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from yzos_jobs.clock_steps import ClockSteps, move_jobs_back
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.maintain.slots import EPOCH


class _Clocks:
    def __init__(self) -> None:
        self.wall, self.monotonic = 1_800_000_000.0, 100.0

    def tick(self, seconds: float, wall_step: float = 0.0) -> None:
        self.monotonic += seconds
        self.wall += seconds + wall_step


def test_only_a_step_back_is_a_step() -> None:
    clocks = _Clocks()
    steps = ClockSteps(lambda: clocks.wall, lambda: clocks.monotonic)
    clocks.tick(1.0)
    assert steps.stepped_back() == 0.0
    clocks.tick(1.0, wall_step=0.3)  # drift, NTP slewing
    assert steps.stepped_back() == 0.0
    clocks.tick(1.0, wall_step=7 * 3600)  # forward: the jobs are due at once anyway
    assert steps.stepped_back() == 0.0
    clocks.tick(1.0, wall_step=-3600)
    assert steps.stepped_back() == 3600.0
    clocks.tick(1.0)
    assert steps.stepped_back() == 0.0  # seen once


def test_a_job_an_hour_away_after_a_step_back_runs_on_the_new_clock() -> None:
    ran = threading.Event()
    scheduler = BackgroundScheduler(timezone="UTC")
    # as the job stands after the clock went back an hour: its next run an hour away
    scheduler.add_job(ran.set, "interval", seconds=3, next_run_time=utcnow() + timedelta(hours=1))
    scheduler.start()
    try:
        assert not ran.wait(0.5)
        assert move_jobs_back(scheduler, 3600) == 1
        assert ran.wait(10)
        [job] = scheduler.get_jobs()
        assert job.next_run_time < utcnow() + timedelta(seconds=10)  # keeps its pace
    finally:
        scheduler.shutdown(wait=False)


def test_a_job_on_fixed_boundaries_keeps_them() -> None:
    # the daily prune runs at 00:00 UTC on every daemon: after a step back it runs at the next
    # midnight on the new clock, not an hour before it, then every midnight after
    scheduler = BackgroundScheduler(timezone="UTC")
    daily = IntervalTrigger(days=1, start_date=EPOCH, timezone="UTC")
    scheduler.add_job(lambda: None, daily)
    scheduler.start(paused=True)
    try:
        [job] = scheduler.get_jobs()
        midnight = job.next_run_time
        assert (midnight.hour, midnight.minute) == (0, 0)
        assert move_jobs_back(scheduler, 3600) == 1
        [job] = scheduler.get_jobs()
        assert job.next_run_time == midnight
    finally:
        scheduler.shutdown(wait=False)
