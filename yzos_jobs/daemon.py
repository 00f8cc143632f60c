"""`yzos-jobs run`: the daemon. APScheduler 3 BackgroundScheduler with the in-memory job store:
entity_promote, entity_purge_v06, import_sources (what [sources] names) and the daily prune.

Correctness across daemons lives in the database, never here: candidates are claimed with leases,
each purge slot is one job_runs row. This process only decides when to try.

SIGTERM/SIGINT, and SIGHUP (the terminal it was started from closed; not under nohup, which
ignores it): stop claiming, finish (or hand back) the batch in hand, exit 0. A second signal
exits at once; the leases of whatever was in hand expire and another daemon takes it over.

The signal handler only notes the signal; the main thread, woken by Python's wakeup pipe, does the
stopping: a handler runs between any two steps of the code it interrupts, and stopping the
scheduler there took the thread pool's lock the interrupted submit of a job held (the daemon hung
on SIGTERM).
"""

from __future__ import annotations

import logging
import os
import select
import signal
import threading
from datetime import timedelta
from types import FrameType
from typing import Any

from apscheduler.events import (
    EVENT_JOB_ERROR,
    EVENT_JOB_EXECUTED,
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
    JobExecutionEvent,
    JobSubmissionEvent,
)
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from yzos_jobs.clock_steps import ClockSteps, move_jobs_back
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.logging import get_logger
from yzos_jobs.maintain import slots
from yzos_jobs.maintain.runner import run_job
from yzos_jobs.operations import Operations

log = get_logger(__name__)

PRUNE_EVERY = timedelta(days=1)
# The signals that ask the daemon to stop. SIGHUP's default ends the process on the spot, with
# its job runs left `running` and its candidates claimed until their leases end.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# How often the main thread looks at whether it was asked to stop, should a wakeup be missed.
WAKE_CHECK_S = 1.0
# Intervals a run may overlap before the daemon says so at warning level (once per long run).
OVERLAPS_TOLD = 10


def overlap_level(skipped: int) -> int:
    """How loud the `skipped`-th interval a run overlaps is said: the first at info (the daemon
    logs info), the OVERLAPS_TOLD-th at warning, the others at debug."""
    if skipped == OVERLAPS_TOLD:
        return logging.WARNING
    return logging.INFO if skipped == 1 else logging.DEBUG


class _Active:
    """Counts job bodies in flight so shutdown can wait for the batch in hand."""

    def __init__(self) -> None:
        self._n = 0
        self._cond = threading.Condition()

    def __enter__(self) -> None:
        with self._cond:
            self._n += 1

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._n -= 1
            self._cond.notify_all()

    def wait_idle(self) -> None:
        with self._cond:
            while self._n:
                self._cond.wait(0.5)


class Daemon:
    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self.operations = Operations(ctx)
        self.active = _Active()
        self.signals = 0
        self.overlapped: dict[str, int] = {}  # per scheduled job, intervals its run has taken
        self.stopped_by: str | None = None  # the signal that asked the daemon to stop
        self.scheduler = BackgroundScheduler(
            timezone="UTC",
            job_defaults={"coalesce": True, "max_instances": 1},
            executors={"default": {"type": "threadpool", "max_workers": 4}},
        )

    def promote_tick(self) -> None:
        if self.ctx.stop.is_set():
            return
        with self.active:
            slot = slots.private_slot("run", self.ctx.owner, utcnow())
            self.operations.observe(run_job(self.ctx, "entity_promote", slot))

    def purge_tick(self) -> None:
        if self.ctx.stop.is_set():
            return
        interval = timedelta(hours=self.ctx.settings.jobs.entity_purge_v06.interval_h)
        with self.active:
            result = run_job(self.ctx, "entity_purge_v06", slots.interval_slot(utcnow(), interval))
            self.operations.observe(result)

    def prune_tick(self) -> None:
        """The daily prune: one run per UTC day across every daemon (a shared day slot)."""
        if self.ctx.stop.is_set():
            return
        with self.active:
            result = run_job(self.ctx, "prune", slots.interval_slot(utcnow(), PRUNE_EVERY))
            self.operations.observe(result)

    def _schedule_prune(self) -> None:
        # Fired at each UTC midnight, and once at start: a daemon that starts mid-day prunes
        # today's slot unless another daemon has already.
        self.scheduler.add_job(
            self.prune_tick,
            IntervalTrigger(days=1, start_date=slots.EPOCH, timezone="UTC"),
            id="prune",
            name="prune",
            misfire_grace_time=int(PRUNE_EVERY.total_seconds() / 2),
        )
        self.scheduler.add_job(self.prune_tick, id="prune_start", next_run_time=utcnow())

    def sources_tick(self) -> None:
        if self.ctx.stop.is_set():
            return
        with self.active:
            slot = slots.private_slot("run", self.ctx.owner, utcnow())
            self.operations.observe(run_job(self.ctx, "import_sources", slot))

    def _schedule_sources(self) -> None:
        """import_sources: what [sources] names, imported as it changes; first at start."""
        interval = self.ctx.settings.sources.interval_s
        self.scheduler.add_job(
            self.sources_tick,
            IntervalTrigger(seconds=interval, timezone="UTC"),
            id="import_sources",
            name="import_sources",
            misfire_grace_time=max(1, interval),
            next_run_time=utcnow(),
        )

    def _schedule(self) -> None:
        jobs = self.ctx.settings.jobs
        now = utcnow()
        promote = jobs.entity_promote
        self.scheduler.add_job(
            self.promote_tick,
            IntervalTrigger(seconds=promote.interval_s, timezone="UTC"),
            id="entity_promote",
            name="entity_promote",
            misfire_grace_time=max(1, promote.interval_s),
            # Not None: APScheduler would add the job paused, and the daemon would never promote.
            next_run_time=(
                now if promote.run_at_start else now + timedelta(seconds=promote.interval_s)
            ),
        )
        purge = jobs.entity_purge_v06
        interval = timedelta(hours=purge.interval_h)
        # Fire on slot boundaries (counted from the epoch), the same instants on every daemon.
        self.scheduler.add_job(
            self.purge_tick,
            IntervalTrigger(
                seconds=interval.total_seconds(), start_date=slots.EPOCH, timezone="UTC"
            ),
            id="entity_purge_v06",
            name="entity_purge_v06",
            misfire_grace_time=max(1, int(interval.total_seconds() / 2)),
        )
        if purge.run_at_start:
            self.scheduler.add_job(self.purge_tick, id="entity_purge_v06_start", next_run_time=now)
        self._schedule_sources()

    def _listen(self) -> None:
        self.scheduler.add_listener(
            self.on_scheduler_event,
            EVENT_JOB_ERROR | EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES | EVENT_JOB_EXECUTED,
        )

    def on_scheduler_event(self, event: Any) -> None:
        if event.code in (EVENT_JOB_EXECUTED, EVENT_JOB_ERROR):
            self.overlapped.pop(event.job_id, None)  # the long run is over
        if event.code == EVENT_JOB_ERROR and isinstance(event, JobExecutionEvent):
            log.error("scheduled job raised", job=event.job_id, error=repr(event.exception))
        elif event.code == EVENT_JOB_MISSED:
            log.warning(
                "scheduled run missed", job=event.job_id, scheduled=str(event.scheduled_run_time)
            )
        elif event.code == EVENT_JOB_MAX_INSTANCES and isinstance(event, JobSubmissionEvent):
            # A run longer than its interval is ordinary (the first import of a large history,
            # a slow model): said at the first interval it overlaps (info) and once it has
            # taken OVERLAPS_TOLD (warning), not at each.
            skipped = self.overlapped[event.job_id] = self.overlapped.get(event.job_id, 0) + 1
            level = overlap_level(skipped)
            if level == logging.WARNING:
                log.warning(
                    "a run is taking many intervals; the next starts once it ends",
                    job=event.job_id,
                    intervals=skipped,
                )
            else:
                log.log(level, "run skipped: the previous one is still running", job=event.job_id)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        # Nothing that takes a lock: the main thread may be inside a log call, or submitting a
        # job, holding the very lock (a logger's, the thread pool's) and the handler would wait
        # for it forever. The main thread wakes from the wakeup pipe and does the stopping.
        self.signals += 1
        name = signal.Signals(signum).name
        if self.signals > 1:
            message = f"yzos-jobs: second {name}: exiting now; leases cover the batch in hand\n"
            os.write(2, message.encode())
            os._exit(128 + signum)
        self.stopped_by = name

    def _wait_for_signal(self, wake: int) -> None:
        """Until a signal asks the daemon to stop. Python writes each signal's number to `wake`
        whichever thread the system delivered it to, and runs the handler in this thread once it
        is awake (a thread blocked in a read is not interrupted by a signal sent to another)."""
        clock = ClockSteps()
        while self.stopped_by is None:
            readable, _, _ = select.select([wake], [], [], WAKE_CHECK_S)
            if readable:
                os.read(wake, 64)
            if back := clock.stepped_back():
                moved = move_jobs_back(self.scheduler, back)
                log.warning("wall clock set back: jobs moved back", seconds=round(back), jobs=moved)

    def run(self) -> int:
        self.operations.check()  # a bad [daemon] http is refused before anything starts
        self._schedule()
        self._schedule_prune()
        self.operations.schedule(self.scheduler)
        self._listen()
        wake, woken = os.pipe()
        os.set_blocking(wake, False)
        os.set_blocking(woken, False)
        # A signal ignored from the start stays ignored: `nohup yzos-jobs run &` outlives its
        # terminal, as nohup promises.
        handlers = {s: h for s in STOP_SIGNALS if (h := signal.getsignal(s)) is not signal.SIG_IGN}
        try:
            signal.set_wakeup_fd(woken)
            for signum in handlers:
                signal.signal(signum, self._on_signal)
            return self._run(wake)
        finally:
            signal.set_wakeup_fd(-1)
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
            os.close(wake)
            os.close(woken)

    def _run(self, wake: int) -> int:
        # Before "daemon started": an address already taken is refused before anything runs.
        self.operations.start()
        jobs = self.ctx.settings.jobs
        log.info(
            "daemon started",
            owner=self.ctx.owner,
            promote_every_s=jobs.entity_promote.interval_s,
            purge_every_h=jobs.entity_purge_v06.interval_h,
            import_every_s=self.ctx.settings.sources.interval_s,
            llm_backend=self.ctx.settings.llm.backend,
        )
        try:
            self.scheduler.start()
            self._wait_for_signal(wake)
            self.ctx.stop.set()
            log.info("stopping: finishing the batch in hand", signal=self.stopped_by)
            self.scheduler.shutdown(wait=False)
            self.active.wait_idle()
        finally:
            self.operations.stop()
        log.info("daemon stopped", owner=self.ctx.owner)
        return 0


def run_daemon(ctx: JobContext) -> int:
    return Daemon(ctx).run()
