"""`yzos-jobs status`: queue depth (candidates, held ones among them, and the session triage
queue), entity counts, the last run of each job, the processes that ran jobs lately."""

from __future__ import annotations

from dataclasses import asdict
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection

from yzos_jobs.config import Settings
from yzos_jobs.db import overview
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.job_pauses import all_pauses
from yzos_jobs.entity.budget_rules import spent_reason, today_usage
from yzos_jobs.kinds import CANDIDATE_STATUSES, ENTITY_KINDS, ENTITY_STATUSES, TRIAGE_STATUSES

RECENT = timedelta(minutes=15)


def _allowed_age(settings: Settings, job: str) -> timedelta:
    """How old a job's last run may be before it counts as overdue."""
    if job == "entity_promote":
        return timedelta(
            seconds=3 * settings.jobs.entity_promote.interval_s + settings.jobs.run_lease_s
        )
    if job == "import_sources":
        return timedelta(seconds=3 * settings.sources.interval_s + settings.jobs.run_lease_s)
    if job == "prune":  # once a UTC day: a day missed is overdue, not a run late in the day
        return timedelta(days=2, seconds=settings.jobs.run_lease_s)
    return timedelta(hours=2 * settings.jobs.entity_purge_v06.interval_h)


def fallback_share(stats: dict[str, Any]) -> float | None:
    """The share of a promote run's decisions made by the structural fallback (the LLM down);
    None when the run decided nothing."""
    decided = sum(int(stats.get(k) or 0) for k in ("promoted", "merged", "rejected"))
    if decided == 0:
        return None
    by_fallback = int(stats.get("fallback") or 0) + int(stats.get("fallback_rejected") or 0)
    return by_fallback / decided


def _fallback_problem(conn: Connection, settings: Settings) -> str | None:
    """The last promote run that decided anything: did the fallback decide too much of it?"""
    for run in overview.recent_runs(conn, "entity_promote", 50):
        share = fallback_share(run.stats or {}) if run.status == "succeeded" else None
        if share is None:
            continue
        limit = settings.jobs.max_fallback_share
        if share > limit:
            return (
                f"entity_promote: {share:.0%} of the last run's decisions came from the "
                f"structural fallback (the LLM failed), more than jobs.max_fallback_share "
                f"{limit:.0%}"
            )
        return None
    return None


def collect_status(conn: Connection, settings: Settings) -> dict[str, Any]:
    now = utcnow()
    # every status and kind, those with none at 0: a monitor reads the same keys every time
    counted = overview.count_by_kind_and_status(conn)
    entities = {
        status: {kind: int((counted.get(status) or {}).get(kind, 0)) for kind in ENTITY_KINDS}
        for status in ENTITY_STATUSES
    }
    jobs: dict[str, Any] = {}
    problems: list[str] = []
    # A paused job is not run on purpose: its last run ageing is what its operator asked for.
    paused = {p.job_name for p in all_pauses(conn)}
    for name, run in sorted(overview.last_runs(conn).items()):
        age = now - run.started_at
        # still "running", but its process stopped renewing the lease: killed, or a `once`
        # stopped by a signal before it could record the end. A lease as long again past its
        # end: a renewal waiting on a busy database, or another host's clock, is no stop.
        lease = run.lease_until
        unfinished = (
            run.status == "running"
            and lease is not None
            and lease < now - timedelta(seconds=settings.jobs.run_lease_s)
        )
        overdue = (
            (run.status != "running" or unfinished)
            and name not in paused
            and age > _allowed_age(settings, name)
        )
        jobs[name] = {
            "slot": run.slot,
            "status": run.status,
            "owner": run.owner,
            "started_at": run.started_at.isoformat(),
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "stats": run.stats or {},
            "error": run.error,
            "overdue": overdue,
            "unfinished": unfinished,
        }
        if unfinished:
            problems.append(
                f"{name}: the run {run.owner} started at {run.started_at:%Y-%m-%d %H:%M:%S} UTC "
                "stopped without finishing (it no longer renews its lease)"
            )
        elif run.status == "failed":
            problems.append(f"{name}: last run failed: {run.error}")
        elif overdue:
            problems.append(f"{name}: overdue (last run {int(age.total_seconds())} s ago)")
    if (fallback := _fallback_problem(conn, settings)) is not None:
        problems.append(fallback)
    return {
        "candidates": _every(overview.count_by_status(conn), CANDIDATE_STATUSES),
        "triage": _every(overview.count_triage_by_status(conn), TRIAGE_STATUSES),
        "entities": entities,
        "jobs": jobs,
        "daemons": [
            {"owner": owner, "last_run": at.isoformat()}
            for owner, at in overview.recent_owners(conn, now - RECENT)
        ],
        "sources": sources_status(conn, settings),
        "problems": problems,
        **operations_status(conn, settings),
    }


def _every(counted: dict[str, int], statuses: tuple[str, ...]) -> dict[str, int]:
    return {status: int(counted.get(status, 0)) for status in statuses}


def operations_status(conn: Connection, settings: Settings) -> dict[str, Any]:
    """Today's LLM usage against the daily budgets, and the jobs an operator paused."""
    today = today_usage(conn)
    llm = settings.llm
    return {
        "llm_today": {
            **asdict(today),
            "tokens": today.tokens,
            "token_budget": llm.daily_token_budget,
            "call_budget": llm.daily_call_budget,
            "budget_spent": spent_reason(llm, today),
        },
        "paused": [
            {"job": p.job_name, "paused_by": p.paused_by, "paused_at": p.paused_at.isoformat()}
            for p in all_pauses(conn)
        ],
    }


def render_operations(report: dict[str, Any]) -> list[str]:
    today = report["llm_today"]
    caps = [
        f"{label} budget {cap}"
        for label, cap in (("token", today["token_budget"]), ("call", today["call_budget"]))
        if cap
    ]
    lines = [
        f"llm today   calls {today['calls']}  prompt tokens {today['prompt_tokens']}  "
        f"completion tokens {today['completion_tokens']}  unknown usage "
        f"{today['unknown_usage_calls']}" + (f"  ({', '.join(caps)})" if caps else "")
    ]
    if today["budget_spent"]:
        lines.append(f"{'':<11} {today['budget_spent']}")
    for pause in report["paused"]:
        lines.append(
            f"paused      {pause['job']} by {pause['paused_by']} "
            f"since {shown_time(pause['paused_at'])}"
        )
    return lines


# The sources of [sources], each the importer_files name of its importer.
SOURCE_NAMES = ("claude_code", "aider", "jsonl", "apps")


def sources_status(conn: Connection, settings: Settings) -> dict[str, Any]:
    """Per source: whether [sources] names it, the files seen (on every host sharing the
    database), when something was last imported from it, and the sessions the last
    import_sources run found still open, and the subagents' transcripts it found waiting for
    their session's (the last run that ended: a run going on has counted nothing yet)."""
    files = overview.files_by_importer(conn)
    last = next(iter(overview.recent_runs(conn, "import_sources", 1, finished=True)), None)
    per_source = ((last.stats or {}).get("sources") or {}) if last is not None else {}
    configured = settings.sources
    report: dict[str, Any] = {}
    for name in SOURCE_NAMES:
        seen, at = files.get(name, (0, None))
        paths = configured.apps if name == "apps" else list(getattr(configured, name))
        report[name] = {
            "configured": paths,
            "files_seen": seen,
            "last_import": at.isoformat() if at else None,
            "sessions_open": int((per_source.get(name) or {}).get("sessions_open", 0)),
            "files_waiting": int((per_source.get(name) or {}).get("files_waiting", 0)),
        }
    return report


def shown_time(iso: str) -> str:
    """A stored UTC time as a person reads it: `2026-12-06 22:53:48 UTC` (JSON keeps ISO 8601)."""
    return f"{iso[:19].replace('T', ' ')} UTC"


def render_sources(sources: dict[str, Any]) -> list[str]:
    lines = []
    for name, source in sources.items():
        configured = source["configured"]
        if not configured and not source["files_seen"]:
            continue
        at = source["last_import"]
        when = shown_time(at) if at else "never"
        waiting = source.get("files_waiting", 0)
        lines.append(
            f"source {name:<12} files {source['files_seen']}  last import {when}  "
            f"sessions open {source['sessions_open']}"
            + (f"  files waiting for their session {waiting}" if waiting else "")
        )
    return lines


def render_status(report: dict[str, Any]) -> str:
    lines = []
    cands = report["candidates"]
    lines.append("candidates  " + "  ".join(f"{s} {cands.get(s, 0)}" for s in CANDIDATE_STATUSES))
    triage = report["triage"]
    lines.append("triage      " + "  ".join(f"{s} {triage.get(s, 0)}" for s in TRIAGE_STATUSES))
    for status in ENTITY_STATUSES:
        kinds = report["entities"].get(status, {})
        lines.append(f"{status:<10}  " + "  ".join(f"{k} {kinds.get(k, 0)}" for k in ENTITY_KINDS))
    if not report["jobs"]:
        lines.append("jobs        no runs yet")
    for name, job in report["jobs"].items():
        stats = job["stats"]
        shown = "  ".join(
            f"{k} {stats[k]}"
            for k in (
                "promoted",
                "merged",
                "rejected",
                "archived",
                "llm_calls",
                "prompt_tokens",
                "completion_tokens",
                "seconds",
            )
            if stats.get(k)
        )
        flag = " OVERDUE" if job["overdue"] else ""
        state = "stopped unfinished" if job.get("unfinished") else job["status"]
        lines.append(
            f"{name:<18} {state}{flag} at {shown_time(job['started_at'])} "
            f"by {job['owner']}  {shown}"
        )
        if job["error"]:
            lines.append(f"{'':<18} error: {job['error']}")
        if stats.get("skipped_reason"):  # it ran and had nothing it could do (no model)
            lines.append(f"{'':<18} did nothing: {stats['skipped_reason']}")
        if stats.get("budget_spent"):
            lines.append(f"{'':<18} stopped: {stats['budget_spent']}")
        elif stats.get("paused"):  # a pause stopped it at its next batch
            lines.append(f"{'':<18} stopped early by a pause; it runs again after `resume`")
        elif stats.get("stopped"):  # a signal stopped it: the next run goes on from there
            lines.append(f"{'':<18} stopped early by a signal; the next run goes on")
    lines.extend(render_sources(report.get("sources", {})))
    owners = ", ".join(d["owner"] for d in report["daemons"]) or "none in the last 15 minutes"
    lines.append(f"ran jobs    {owners}")
    lines.extend(render_operations(report))
    return "\n".join(lines)
