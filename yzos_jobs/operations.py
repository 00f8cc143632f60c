"""What the daemon does for its operator beside the jobs: the scheduler's own tick (the
liveness /healthz reads), and, when `[daemon] http` is set, the metrics and the HTTP server
(`metrics.py`, `ops_http.py`). Without `http` it keeps only the tick and costs nothing else."""

from __future__ import annotations

import threading
import time

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import Engine

from yzos_jobs.config import ConfigError
from yzos_jobs.db.connection import create_db_engine
from yzos_jobs.health import (
    PROBE_DEADLINE_S,
    TICK_S,
    Health,
    check_database,
    no_answer,
    stalled,
)
from yzos_jobs.inference import request_events
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.runner import RunResult
from yzos_jobs.metrics import DaemonMetrics
from yzos_jobs.ops_http import OpsServer, parse_bind
from yzos_jobs.probe_deadline import DeadlineRead


class Operations:
    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self._last_tick = time.monotonic()
        self._tick_lock = threading.Lock()
        self._bind: tuple[str, int] | None = None
        self.metrics: DaemonMetrics | None = None
        self.server: OpsServer | None = None
        self._engine: Engine | None = None
        self._probe: DeadlineRead[Health] | None = None

    def check(self) -> None:
        """Refuse a bad `[daemon] http` (ConfigError: one line, exit 2)."""
        daemon = self.ctx.settings.daemon
        if daemon.http:
            self._bind = parse_bind(daemon, self.ctx.settings.source)

    def schedule(self, scheduler: BaseScheduler) -> None:
        # Its own executor: jobs that fill the default pool must not make the loop look stuck.
        scheduler.add_executor(ThreadPoolExecutor(1), "operations")
        scheduler.add_job(
            self.tick,
            IntervalTrigger(seconds=TICK_S, timezone="UTC"),
            id="operations_tick",
            executor="operations",
            misfire_grace_time=TICK_S,
        )

    def tick(self) -> None:
        with self._tick_lock:
            self._last_tick = time.monotonic()

    def tick_age_s(self) -> float:
        with self._tick_lock:
            return time.monotonic() - self._last_tick

    def start(self) -> None:
        if self._bind is None:
            return
        settings = self.ctx.settings
        # The probes and scrapes have connections of their own that only read: a busy job
        # never delays them, nor they it.
        engine = create_db_engine(
            settings.database.sqlalchemy_url, reads_only=True, pool_size=2, max_overflow=2
        )
        self._engine = engine
        self._probe = DeadlineRead(
            lambda: check_database(engine, settings), PROBE_DEADLINE_S, "health-probe"
        )
        self.metrics = DaemonMetrics(settings, engine)
        request_events.subscribe(self.metrics)
        try:
            self.server = OpsServer(self._bind, self.metrics.registry, self.health).start()
        except OSError as exc:
            self.stop()
            raise ConfigError(
                f"{settings.source}: key 'daemon.http': cannot listen on "
                f"{settings.daemon.http}: {exc.strerror or exc}"
            ) from None

    def health(self) -> Health:
        assert self._probe is not None
        try:
            answer = self._probe()
            # Probes that share one read share its answer: each reports on a copy.
            health = Health(list(answer.problems), list(answer.notes))
        except TimeoutError:
            health = no_answer(self._probe.deadline_s)
        if (stall := stalled(self.tick_age_s())) is not None:
            health.problems.insert(0, stall)
        return health

    def observe(self, result: RunResult) -> None:
        if self.metrics is not None:
            self.metrics.observe_run(result)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.metrics is not None:
            request_events.unsubscribe(self.metrics)
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
