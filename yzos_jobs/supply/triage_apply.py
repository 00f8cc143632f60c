"""Session triage inside `entity_promote` (and right after a JSONL import): the triages waiting
in `session_triage` applied.

Each waiting triage is claimed with a lease. A coding session's digest is read by one chat call
(cached by the digest, the open tasks offered and the prompt version); a JSONL record brings its
proposals itself. Every proposal is judged through classify(), and then everything is written in
one transaction — or nothing is: a failed triage call or a failed judgement leaves the triage
pending for the next run (what was answered is cached, so only what failed is asked again), and
after `triage.max_attempts` a session's held candidates go the line-level way. Proposals get no
structural fallback.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from yzos_jobs.counters import Counters, int_counts
from yzos_jobs.db import triage_queue as triage_db
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import run_in_transaction, transaction
from yzos_jobs.db.entities import project_key
from yzos_jobs.db.lease_claim import Claim
from yzos_jobs.db.leases import LeaseKeeper
from yzos_jobs.entity.llm_budget import DailyBudget
from yzos_jobs.entity.policy import display_name
from yzos_jobs.entity.triage_call import TriageReply, ask_triage
from yzos_jobs.entity.triage_writes import SOURCE_KIND as TRIAGE_SOURCE_KIND
from yzos_jobs.entity.triage_writes import (
    JudgedTriage,
    SessionTriage,
    TriagePerson,
    TriageProject,
    TriageTask,
    judge_triage,
    write_triage,
)
from yzos_jobs.inference.contract import ClassifierUsage
from yzos_jobs.inference.errors import (
    ClassifierError,
    LlmCircuitOpen,
    LlmStopped,
    LlmUnreachable,
)
from yzos_jobs.inference.schema import TRIAGE_MAX_PERSONS
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.logging import get_logger
from yzos_jobs.supply.moved_session import SessionMove, follow_moved_session

log = get_logger(__name__)

# Failures of a call that never reached the model: they say nothing of the session, so they
# cost it no attempt (a model down for a while, or started after the daemon, gives up no
# session's triage).
_NOT_ASKED = (LlmCircuitOpen, LlmUnreachable, LlmStopped)


@dataclass
class TriageRun(Counters):
    triaged: int = 0
    retried: int = 0
    exhausted: int = 0
    lost: int = 0
    created: int = 0
    merged: int = 0
    rejected: int = 0
    evidence: int = 0
    sightings: int = 0
    usage: ClassifierUsage = field(default_factory=ClassifierUsage)

    def counts(self) -> dict[str, int]:
        return int_counts(self, prefix="triage_")


class _Lost(Exception):
    """The triage changed hands (its lease ran out) before it was written: nothing is."""


# A triage record brings its own proposals: tasks and persons at most as many as a reply may
# make (`triage.max_tasks`, TRIAGE_MAX_PERSONS), projects at most as many as persons, and only
# those with a name that shows something; the rest is dropped before anything is judged.
RECORD_MAX_PROJECTS = TRIAGE_MAX_PERSONS


def _proposals_from_record(payload: Mapping[str, Any], max_tasks: int) -> SessionTriage:
    def items(key: str, name: str, limit: int) -> list[Mapping[str, Any]]:
        named = (
            i
            for i in payload.get(key) or []
            if isinstance(i, Mapping)
            and isinstance(i.get(name), str)
            and display_name(i[name]) is not None
        )
        return list(islice(named, limit))

    return SessionTriage(
        [
            TriageProject(p["name"], p.get("path"), p.get("summary"))
            for p in items("projects", "name", RECORD_MAX_PROJECTS)
        ],
        [
            TriageTask(t["title"], t.get("project"), t.get("summary"))
            for t in items("tasks", "title", max_tasks)
        ],
        [TriagePerson(p["name"]) for p in items("persons", "name", TRIAGE_MAX_PERSONS)],
    )


def _proposals_from_reply(reply: TriageReply, payload: Mapping[str, Any]) -> SessionTriage:
    """The reply's proposals, with what the importer knew: the repository, the cited lines."""
    name = reply.project or payload.get("project")
    path = payload.get("project_path")
    texts = {e["line"]: e["text"] for e in payload.get("lines") or [] if isinstance(e, Mapping)}
    projects = [TriageProject(name, path)] if name else []
    tasks = [
        TriageTask(
            t.title,
            name,
            next((texts[n] for n in t.lines if n in texts), None),
            t.existing_task_id,
            t.lines,
        )
        for t in reply.tasks
    ]
    return SessionTriage(projects, tasks, [TriagePerson(p) for p in reply.persons])


def _ask(ctx: JobContext, t: triage_db.ClaimedTriage) -> tuple[TriageReply, ClassifierUsage]:
    """The triage reply for a session's digest, offered the project's open tasks."""
    cfg = ctx.settings.triage
    with ctx.sessions() as s:
        offered = triage_db.open_tasks(
            s, project_key(t.payload.get("project_path")), cfg.max_open_tasks
        )
    breaker = ctx.breaker or ctx.classifier.new_breaker()
    return ask_triage(ctx.classifier, cfg, t.payload, offered, breaker)


@dataclass(frozen=True)
class _Failure:
    """Why a triage is left for the next run; `unasked`: no call of it reached the model."""

    error: str
    unasked: bool


def _judge(
    ctx: JobContext, t: triage_db.ClaimedTriage, source_id: str
) -> tuple[JudgedTriage | None, ClassifierUsage, _Failure | None]:
    """The triage's proposals, judged; or the failure that leaves it for the next run."""
    usage = ClassifierUsage()
    if t.kind == "digest":
        try:
            reply, usage = _ask(ctx, t)
        except ClassifierError as exc:
            # What the call cost (a failure, and no call, where none was made: no model)
            usage = exc.usage
            cost = usage if isinstance(usage, ClassifierUsage) else ClassifierUsage(failures=1)
            return None, cost, _Failure(f"triage call: {exc}", isinstance(exc, _NOT_ASKED))
        proposals = _proposals_from_reply(reply, t.payload)
    else:
        proposals = _proposals_from_record(t.payload, ctx.settings.triage.max_tasks)
    judged = judge_triage(ctx, source_id, proposals, _seen_at(t.payload))
    usage += judged.usage
    errors = judged.errors
    if not errors:
        return judged, usage, None
    unasked = all(isinstance(o.error, _NOT_ASKED) for o in judged.outcomes if o.error)
    return None, usage, _Failure(f"judging {errors[0]}", unasked)


def _seen_at(payload: Mapping[str, Any]) -> datetime | None:
    ended = payload.get("ended_at") or payload.get("started_at")
    try:
        at = datetime.fromisoformat(ended) if isinstance(ended, str) else None
    except ValueError:
        return None
    return at.replace(tzinfo=UTC) if at is not None and at.tzinfo is None else at


def apply_session_triage(ctx: JobContext, t: triage_db.ClaimedTriage) -> TriageRun:
    """Triage one claimed session (or JSONL record) and write it all, or leave it waiting."""
    run = TriageRun()
    source_id = str(t.payload.get("source_id") or t.external_id)
    cfg = ctx.settings.triage
    if t.kind == "digest" and ctx.classifier.active_model_id() is None:
        judged = None
        failure = _Failure("no model to triage with: the line-level path takes the session", False)
        attempts_left = False
    else:

        def renew() -> None:
            with transaction(ctx.sessions) as s:
                lease_s = ctx.settings.jobs.entity_promote.lease_s
                triage_db.extend_triage_lease(s, ctx.owner, [t.id], lease_s, utcnow())

        with LeaseKeeper(renew, ctx.settings.jobs.entity_promote.lease_s):
            judged, run.usage, failure = _judge(ctx, t, source_id)
        attempts_left = t.attempts < cfg.max_attempts
    try:
        if judged is not None:
            _write(ctx, t, judged, source_id, run)
        else:
            assert failure is not None
            # A call the stop refused, or cut short, is no failed attempt either: the next run
            # asks again.
            unasked = failure.unasked or ctx.stop.is_set()
            _give_up_or_retry(
                ctx, t, source_id, failure.error, attempts_left or unasked, run, unasked
            )
    except _Lost:
        run.lost += 1
    return run


def _write(
    ctx: JobContext,
    t: triage_db.ClaimedTriage,
    judged: JudgedTriage,
    source_id: str,
    run: TriageRun,
) -> None:
    markers = ctx.settings.noise_filter.work_dir_segments

    def work(s: Any) -> None:
        # First, and locked: a session moved to another repository while this was triaged
        # (its later records showed where it worked) names the new one now
        now_payload = triage_db.current_payload(s, t.id) if t.kind == "digest" else None
        held = triage_db.held_candidates(s, source_id) if t.kind == "digest" else []
        stats = write_triage(s, judged, markers, held)
        if now_payload is not None:
            _follow_move(s, t, source_id, held, now_payload)
        if not triage_db.settle_triage(s, ctx.owner, t.id, "done", utcnow()):
            raise _Lost
        for name in ("created", "merged", "rejected", "evidence", "sightings"):
            setattr(run, name, getattr(stats, name))

    # again where an entity it names was merged away meanwhile by a correction
    run_in_transaction(ctx.sessions, work, refs_may_go=True)
    run.triaged += 1


def _follow_move(
    s: Any,
    t: triage_db.ClaimedTriage,
    source_id: str,
    held: Sequence[triage_db.HeldCandidate],
    now_payload: Mapping[str, Any],
) -> None:
    """What the triage just wrote as asked (in the repository its digest named when it was
    claimed) goes where the session was moved meanwhile, as what was written before the move
    went with it."""
    old_path, new_path = t.payload.get("project_path"), now_payload.get("project_path")
    if not isinstance(new_path, str) or new_path == old_path:
        return
    project = now_payload.get("project")
    move = SessionMove(old_path, new_path, project if isinstance(project, str) else None)
    kind = held[0].source_kind if held else TRIAGE_SOURCE_KIND
    activity = (t.source_kind, t.external_id)
    follow_moved_session(s, activity, kind, [source_id], move, utcnow(), digests=False)


def _give_up_or_retry(
    ctx: JobContext,
    t: triage_db.ClaimedTriage,
    source_id: str,
    error: str,
    attempts_left: bool,
    run: TriageRun,
    unasked: bool = False,
) -> None:
    def work(s: Any) -> None:
        now = utcnow()
        status = "pending" if attempts_left else "exhausted"
        if not triage_db.settle_triage(s, ctx.owner, t.id, status, now, error, unasked=unasked):
            raise _Lost
        if not attempts_left:
            triage_db.release_held(s, source_id, now)

    run_in_transaction(ctx.sessions, work)
    if unasked:
        # one line for the run says the model could not be asked (run_triage)
        run.retried += 1
        log.debug("session triage not asked: left for the next run", triage=t.id, error=error)
    elif attempts_left:
        run.retried += 1
        log.warning("session triage left for the next run", triage=t.id, error=error)
    else:
        run.exhausted += 1
        log.warning("session triage given up: line-level candidates", triage=t.id, error=error)


@contextmanager
def _hand_back_on_error(ctx: JobContext) -> Iterator[None]:
    """A run that fails hands its claimed triages back at once (best effort: the lease covers
    them otherwise)."""
    try:
        yield
    except BaseException:
        with suppress(Exception), transaction(ctx.sessions) as s:
            triage_db.release_owned_triage(s, ctx.owner, utcnow())
        raise


def run_triage(ctx: JobContext, only: Sequence[int] | None = None) -> TriageRun:
    """Triage what waits (or only the triages named), a few at a time, until none is left."""
    total = TriageRun()
    lease_s = ctx.settings.jobs.entity_promote.lease_s
    width = max(1, min(ctx.settings.llm.max_concurrency, 8))
    budget = DailyBudget(ctx)
    if only is None:
        with transaction(ctx.sessions) as s:
            triage_db.reclaim_expired_triage(s, utcnow())
    with (
        _hand_back_on_error(ctx),
        ThreadPoolExecutor(max_workers=width, thread_name_prefix="triage") as pool,
    ):
        cursor = 0  # a triage that failed waits for the next run, not for this one's next batch
        while not ctx.stop.is_set():
            if budget.spent() is not None:
                break  # the sessions wait, triage-pending, for the next day
            limit = len(only) if only is not None else width
            if only is None:
                # One triage call per session set aside; the judgements it leads to are
                # counted when the batch is charged.
                limit = budget.reserve_calls(limit)
                if limit == 0:
                    break
            with transaction(ctx.sessions) as s:
                request = Claim(ctx.owner, limit, lease_s, utcnow(), after_id=cursor)
                batch = triage_db.claim_triage(s, request, only=only)
            if not batch:
                budget.charge(ClassifierUsage())  # the calls set aside go back
                break
            cursor = batch[-1].id
            spent = ClassifierUsage()
            for done in pool.map(lambda t: apply_session_triage(ctx, t), batch):
                total.add(done)
                spent += done.usage
            budget.charge(spent)
            if only is not None:
                break
            if ctx.breaker is not None and ctx.breaker.open:
                # the model is taken for down in this run: the sessions wait, triage-pending
                log.warning(
                    "session triage waits for the model: the next run asks again",
                    consecutive_failures=ctx.breaker.consecutive,
                )
                break
    return total
