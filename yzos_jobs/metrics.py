"""The daemon's Prometheus metrics, in a registry of its own (one per process).

Two kinds: this process's counters (job runs, LLM requests, tokens, cache hits, the breaker),
moved as things happen; and the database's gauges (candidates, entities, the last day's
decisions and the store's health, what was imported, today's LLM usage, paused jobs), read by a
collector when /metrics is scraped. Several daemons on one database each serve their own
counters and the same gauges. The gauges' reads are bounded (a statement timeout on
PostgreSQL) and reused for `GAUGE_TTL_S`, so a scrape every second costs the database little.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import Connection, Engine

from yzos_jobs.config import Settings
from yzos_jobs.db import overview, store_health
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import bounded_read
from yzos_jobs.db.job_pauses import all_pauses
from yzos_jobs.entity.budget_rules import spent_reason, today_usage
from yzos_jobs.inference.contract import TokenCount
from yzos_jobs.inference.request_events import OUTCOMES, Outcome
from yzos_jobs.logging import get_logger
from yzos_jobs.maintain.runner import RunResult
from yzos_jobs.probe_deadline import DeadlineRead
from yzos_jobs.status import fallback_share

log = get_logger(__name__)

GAUGE_TTL_S = 2.0
# The longest a gauge read may take on PostgreSQL before the scrape goes without it; and the
# longest a scrape waits for the read at all (a database that hangs answers nothing).
GAUGE_TIMEOUT_MS = 2000
GAUGE_DEADLINE_S = 4.0
DAY = timedelta(days=1)
RUN_BUCKETS = (0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, float("inf"))
LLM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, float("inf"))


CANDIDATE_SITES = ("promote_candidate", "apply_entities")


def decision_source(call_site: str, source: str) -> str:
    """A decision's source as the metric names it: a person's correction, a session triage's
    proposal, or the verdict's own source (llm, cache, fallback, dry_run)."""
    if call_site == "user":
        return "correction"
    if call_site in ("merge_or_create_project", "merge_or_create_task"):
        return "triage"
    return source


class DaemonMetrics:
    """This process's counters, and the collector of the database's gauges."""

    def __init__(self, settings: Settings, engine: Engine) -> None:
        # The *_created series say when this process started counting: noise beside the daemon's
        # own start time, and one more series per label set.
        disable_created_metrics()
        self.registry = CollectorRegistry()
        r = self.registry
        self.job_runs = Counter(
            "yzos_job_runs", "Job runs by job and outcome.", ["job", "outcome"], registry=r
        )
        self.run_seconds = Histogram(
            "yzos_job_run_seconds", "Job run duration.", ["job"], buckets=RUN_BUCKETS, registry=r
        )
        self.llm_requests = Counter(
            "yzos_llm_requests", "LLM requests by outcome.", ["outcome"], registry=r
        )
        for outcome in OUTCOMES:
            self.llm_requests.labels(outcome)  # every outcome shows, at 0 until it happens
        self.llm_seconds = Histogram(
            "yzos_llm_request_seconds", "LLM request latency.", buckets=LLM_BUCKETS, registry=r
        )
        self.llm_tokens = Counter(
            "yzos_llm_tokens", "LLM tokens as the server reported them.", ["type"], registry=r
        )
        self.llm_tokens.labels("prompt")
        self.llm_tokens.labels("completion")
        self.unknown_usage = Counter(
            "yzos_llm_unknown_usage_replies", "LLM replies that reported no usage.", registry=r
        )
        self.cache_hit_count = Counter(
            "yzos_llm_cache_hits", "Verdicts and triage replies served from the cache.", registry=r
        )
        self.breaker_open = Gauge(
            "yzos_llm_breaker_open",
            "1 while the current run's circuit breaker refuses requests.",
            registry=r,
        )
        r.register(StoreCollector(settings, engine))

    # -- inference.request_events.RequestListener ------------------------------------------

    def request_done(self, outcome: Outcome, seconds: float) -> None:
        self.llm_requests.labels(outcome).inc()
        if outcome == "breaker_open":
            self.breaker_open.set(1)
            return
        self.llm_seconds.observe(seconds)
        if outcome in ("ok", "invalid"):
            self.breaker_open.set(0)  # the endpoint answered

    def tokens_reported(self, tokens: TokenCount | None) -> None:
        if tokens is None:
            self.unknown_usage.inc()
            return
        self.llm_tokens.labels("prompt").inc(tokens.prompt)
        self.llm_tokens.labels("completion").inc(tokens.completion)

    def cache_hits(self, n: int) -> None:
        self.cache_hit_count.inc(n)

    # --------------------------------------------------------------------------------------

    def observe_run(self, result: RunResult) -> None:
        self.job_runs.labels(result.job, result.status).inc()
        seconds = result.stats.get("seconds")
        if result.status in ("succeeded", "failed") and isinstance(seconds, int | float):
            self.run_seconds.labels(result.job).observe(seconds)


@dataclass
class _Gauge:
    name: str
    doc: str
    labels: tuple[str, ...] = ()
    values: list[tuple[tuple[str, ...], float]] = field(default_factory=list)

    def add(self, value: float, *labels: str) -> None:
        self.values.append((labels, value))

    def family(self) -> GaugeMetricFamily:
        family = GaugeMetricFamily(self.name, self.doc, labels=list(self.labels))
        for labels, value in self.values:
            family.add_metric(list(labels), value)
        return family


class StoreCollector(Collector):
    """The database's gauges, read when /metrics is scraped (at most once per GAUGE_TTL_S)."""

    def __init__(self, settings: Settings, engine: Engine) -> None:
        self.settings = settings
        self.engine = engine
        self._lock = threading.Lock()
        self._read_at = float("-inf")
        self._gauges: list[_Gauge] = []
        self._failed = 0.0
        self._read = DeadlineRead(self._read_gauges, GAUGE_DEADLINE_S, "gauge-read")

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self._lock:
            if time.monotonic() - self._read_at >= GAUGE_TTL_S:
                self._refresh()
            gauges, failed = list(self._gauges), self._failed
        yield GaugeMetricFamily(
            "yzos_store_read_failed",
            "1 when the last read of the database gauges failed (they are left out).",
            value=failed,
        )
        for gauge in gauges:
            yield gauge.family()

    def _refresh(self) -> None:
        try:
            self._gauges = self._read()
            self._failed = 0.0
        except TimeoutError:
            log.warning("database gauges not read", error=f"no reply within {GAUGE_DEADLINE_S} s")
            self._gauges, self._failed = [], 1.0
        except Exception as exc:  # a scrape reports the failure; it never raises
            log.warning("database gauges not read", error=str(exc).splitlines()[0][:300])
            self._gauges, self._failed = [], 1.0
        self._read_at = time.monotonic()

    def _read_gauges(self) -> list[_Gauge]:
        with bounded_read(self.engine, GAUGE_TIMEOUT_MS) as conn:
            return read_gauges(conn, self.settings)


def read_gauges(conn: Connection, settings: Settings) -> list[_Gauge]:
    return [
        *_queue_gauges(conn),
        *_decision_gauges(conn),
        *_import_gauges(conn),
        *_llm_gauges(conn, settings),
    ]


def _queue_gauges(conn: Connection) -> list[_Gauge]:
    candidates = _Gauge("yzos_candidates", "Candidates by status.", ("status",))
    for status, n in sorted(overview.count_by_status(conn).items()):
        candidates.add(n, status)
    entities = _Gauge("yzos_entities", "Entities by kind and status.", ("kind", "status"))
    for status, kinds in sorted(overview.count_by_kind_and_status(conn).items()):
        for kind, n in sorted(kinds.items()):
            entities.add(n, kind, status)
    share = _Gauge(
        "yzos_promote_fallback_share",
        "Share of the last deciding promote run's decisions made by the structural fallback.",
    )
    for run in overview.recent_runs(conn, "entity_promote", 50):
        value = fallback_share(run.stats or {}) if run.status == "succeeded" else None
        if value is not None:
            share.add(value)
            break
    return [candidates, entities, share]


def _decision_gauges(conn: Connection) -> list[_Gauge]:
    """The last day's decisions by source, and the store's health: what share of the day's
    candidates was rejected, of its re-judgements archived, of its decisions a correction."""
    rows = store_health.decisions_since(conn, utcnow() - DAY)
    by_source = _Gauge(
        "yzos_decisions_last_day", "Decisions of the last 24 hours by source.", ("source",)
    )
    sources: dict[str, int] = {}
    for row in rows:
        label = decision_source(row.call_site, row.source)
        sources[label] = sources.get(label, 0) + row.n
    for label, n in sorted(sources.items()):
        by_source.add(n, label)

    def share(name: str, doc: str, part: int, whole: int) -> _Gauge:
        gauge = _Gauge(name, doc)
        if whole:
            gauge.add(part / whole)
        return gauge

    # A candidate is decided by `entity_promote` or, as its session ends, by `import_sources`
    # (whose moves of what a session proposed are no decision on a candidate)
    candidates = [
        r for r in rows if r.call_site in CANDIDATE_SITES and r.outcome in ("promoted", "rejected")
    ]
    purge = [r for r in rows if r.call_site == "entity_purge_v06"]
    return [
        by_source,
        share(
            "yzos_store_rejected_share",
            "Share of the last day's candidate decisions that rejected the candidate.",
            sum(r.n for r in candidates if r.outcome == "rejected"),
            sum(r.n for r in candidates),
        ),
        share(
            "yzos_store_archived_share",
            "Share of the last day's purge re-judgements that archived the entity.",
            sum(r.n for r in purge if r.outcome == "archived"),
            sum(r.n for r in purge),
        ),
        share(
            "yzos_store_corrected_share",
            "Share of the last day's decisions that were a person's correction.",
            sum(r.n for r in rows if r.call_site == "user"),
            sum(r.n for r in rows),
        ),
    ]


def _import_gauges(conn: Connection) -> list[_Gauge]:
    read = _Gauge(
        "yzos_imported_bytes",
        "Bytes of the followed files imported so far (where each importer reads on from; a "
        "last session still going on is read again once it ends), by importer.",
        ("source",),
    )
    for name, n in sorted(store_health.bytes_read_by_importer(conn).items()):
        read.add(n, name)
    sessions = _Gauge("yzos_imported_sessions", "Activity sessions by source.", ("source",))
    for kind, n in sorted(store_health.sessions_by_source(conn).items()):
        sessions.add(n, kind)
    return [read, sessions]


def _llm_gauges(conn: Connection, settings: Settings) -> list[_Gauge]:
    today = today_usage(conn)
    tokens = _Gauge("yzos_llm_tokens_today", "LLM tokens today (UTC), all daemons.", ("type",))
    tokens.add(today.prompt_tokens, "prompt")
    tokens.add(today.completion_tokens, "completion")
    calls = _Gauge("yzos_llm_calls_today", "LLM requests today (UTC), all daemons.")
    calls.add(today.calls)
    spent = _Gauge("yzos_llm_budget_spent", "1 when today's token or call budget is spent.")
    spent.add(1.0 if spent_reason(settings.llm, today) else 0.0)
    paused = _Gauge("yzos_job_paused", "1 for each paused job.", ("job",))
    for pause in all_pauses(conn):
        paused.add(1.0, pause.job_name)
    return [tokens, calls, spent, paused]
