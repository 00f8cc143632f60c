"""Writes what a session's triage proposes, at the call sites
`merge_or_create_project` and `merge_or_create_task`.

A proposal comes from a triage call over a coding session's digest (`supply/triage_apply.py`) or
from a JSONL `triage` record. Every proposal goes through classify() first (`judge_triage`): the
judge still decides real, app or noise. The write (`write_triage`) is one transaction: the project,
the tasks (a task the reply tied to an offered open task gets a sighting there instead of a new
entity), the persons, and the session's held candidates, kept as evidence — a sighting of the task
whose lines they are — or rejected when no proposed work item rests on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session

from yzos_jobs.counters import Counters
from yzos_jobs.db import entities as entity_db
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.decision_rows import DecisionRow, record_decisions
from yzos_jobs.db.sighting_rows import Sighting, add_sightings
from yzos_jobs.db.triage_queue import HeldCandidate, settle_held
from yzos_jobs.entity import noise_filter
from yzos_jobs.entity.policy import (
    SUMMARY_CHARS,
    blocked_by_terminal_state,
    display_name,
    meaningful_summary,
    names_the_same,
    normalize_name,
)
from yzos_jobs.entity.trail import judged_decision, verdict_fields
from yzos_jobs.entity.updater import update_existing
from yzos_jobs.inference.contract import ClassifierUsage, ClassifyInput, ClassifyOutcome
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.kinds import is_entity_kind
from yzos_jobs.text import has_visible_character

SOURCE_KIND = "llm_triage"


@dataclass(frozen=True)
class TriageProject:
    name: str
    path: str | None = None
    summary: str | None = None


@dataclass(frozen=True)
class TriageTask:
    title: str
    project: str | None = None
    summary: str | None = None
    existing_task_id: int | None = None  # an offered open task this is the same work as
    lines: tuple[int, ...] = ()  # the source lines it rests on (its held candidates)


@dataclass(frozen=True)
class TriagePerson:
    name: str


@dataclass(frozen=True)
class SessionTriage:
    projects: Sequence[TriageProject] = ()
    tasks: Sequence[TriageTask] = ()
    persons: Sequence[TriagePerson] = ()


Proposal = TriageProject | TriageTask | TriagePerson


@dataclass
class TriageStats(Counters):
    created: int = 0
    merged: int = 0
    rejected: int = 0
    skipped: int = 0
    sightings: int = 0
    evidence: int = 0
    failures: list[str] = field(default_factory=list)


def _name_and_kind(item: Proposal) -> tuple[str, str]:
    if isinstance(item, TriageProject):
        return item.name, "project"
    if isinstance(item, TriageTask):
        return item.title, "task"
    return item.name, "person"


def _input(item: Proposal, session_id: str) -> ClassifyInput:
    name, kind = _name_and_kind(item)
    parts: list[str | None] = []
    if isinstance(item, TriageProject):
        parts = [item.summary, item.path]
    elif isinstance(item, TriageTask):
        parts = [item.summary, item.project and f"project {item.project}"]
    context = " — ".join(x for x in parts if x)
    return ClassifyInput(
        raw_text=name,
        source_kind=SOURCE_KIND,
        source_id=session_id,
        suggested_kind=kind,
        surrounding_text=context or None,
    )


@dataclass(frozen=True)
class JudgedTriage:
    """A session's proposals with a verdict (or failure) each, ready to write."""

    session_id: str
    items: list[Proposal]
    outcomes: list[ClassifyOutcome]
    seen_at: datetime
    usage: ClassifierUsage
    run_id: int | None = None  # the job run it is written under, for the decision trail

    @property
    def errors(self) -> list[str]:
        return [
            f"{_name_and_kind(i)[1]} {_name_and_kind(i)[0]!r}: {o.error}"
            for i, o in zip(self.items, self.outcomes, strict=True)
            if o.error is not None
        ]


def judge_triage(
    ctx: JobContext, session_id: str, triage: SessionTriage, seen_at: datetime | None = None
) -> JudgedTriage:
    """Classify every proposal of one session in one batch (no database writes)."""
    items: list[Proposal] = [*triage.projects, *triage.tasks, *triage.persons]
    at = seen_at or utcnow()
    if not items:
        return JudgedTriage(session_id, items, [], at, ClassifierUsage(), ctx.run_id)
    result = ctx.classifier.classify_many([_input(i, session_id) for i in items], ctx.breaker)
    return JudgedTriage(session_id, items, result.outcomes, at, result.usage, ctx.run_id)


@dataclass
class _Writing:
    """One triage's write, as it goes: where things are seen, what was made, what rests where."""

    session: Session
    judged: JudgedTriage
    markers: Sequence[str]
    stats: TriageStats = field(default_factory=TriageStats)
    projects: dict[str, tuple[int, str]] = field(default_factory=dict)  # name -> (id, key)
    by_line: dict[int, tuple[int, ClassifyOutcome]] = field(default_factory=dict)
    # Lines resting on an archived entity: (its id, why the candidate does not join it).
    blocked_lines: dict[int, tuple[int, str]] = field(default_factory=dict)
    project_entity: tuple[int, ClassifyOutcome] | None = None
    decisions: list[DecisionRow] = field(default_factory=list)

    @property
    def at(self) -> datetime:
        return self.judged.seen_at


def _real_kind(w: _Writing, item: Proposal, outcome: ClassifyOutcome) -> str | None:
    """The entity kind a proposal's verdict allows, or None (counted as rejected)."""
    v = outcome.verdict
    assert v is not None, "a triage with a failed proposal is not written"
    if not v.is_real_entity or not is_entity_kind(v.kind):
        w.stats.rejected += 1
        return None
    return v.kind


def _upsert(
    w: _Writing,
    kind: str,
    name: str,
    outcome: ClassifyOutcome,
    summary: str | None,
    key: str = "",
    path: str | None = None,
) -> entity_db.EntityRef:
    """Find or create the entity a real verdict names (counted as created or merged, unless it
    is archived: the caller holds the proposal off it)."""
    v = outcome.verdict
    assert v is not None
    # A proposal's name has a visible character (nameless ones are dropped before the judge);
    # the judge's normalised name may not.
    shown = v.display_name if has_visible_character(v.display_name) else None
    if shown is not None and not names_the_same(shown, name):
        shown = None  # the judge's name for something else: the proposal keeps its own
    shown = shown or display_name(name) or name
    draft = entity_db.EntityDraft(
        kind,
        normalize_name(shown),
        display_name=shown,
        confidence=v.confidence,
        verdict_source=outcome.source or "llm",
        classified_model=outcome.model_id,
        first_seen_at=w.at,
        summary=summary,
        project_key=key,
        project_path=path,
    )
    ref = entity_db.upsert_entities(w.session, [draft], utcnow())[draft.key]
    if ref.created:
        w.stats.created += 1
    elif ref.status == "active":
        w.stats.merged += 1
        if summary:
            update_existing(w.session, {ref.id: summary}, [ref])
    return ref


def _outcome(ref: entity_db.EntityRef, blocked: str | None) -> str:
    if blocked is not None:
        return "rejected"
    return "created" if ref.created else "merged"


def _held_off(w: _Writing, ref: entity_db.EntityRef) -> str | None:
    """Terminal states hold for triage as for promotion: a proposal naming an archived entity
    does not join it (its sighting still counts). Returns the reason, counted as rejected."""
    reason = blocked_by_terminal_state(ref.id, ref.status)
    if reason is not None:
        w.stats.rejected += 1
    return reason


def _sight(w: _Writing, entity_id: int, sightings: list[Sighting]) -> None:
    w.stats.sightings += add_sightings(w.session, sightings)


def _proposal_sighting(w: _Writing, entity_id: int, summary: str | None) -> Sighting:
    return Sighting(entity_id, SOURCE_KIND, w.judged.session_id, summary, w.at)


def merge_or_create_project(w: _Writing, project: TriageProject, outcome: ClassifyOutcome) -> None:
    """A judged project proposal: the project with the same normalised path, else the same name
    (scoped by that path), else a new project with its path."""
    kind = _real_kind(w, project, outcome)
    if kind is None:
        return
    plausible = project.path and noise_filter.is_plausible_project_path(project.path, w.markers)
    path = noise_filter.normalize_project_path(project.path) if project.path else None
    existing = entity_db.project_by_path(w.session, path) if plausible and path else None
    summary = meaningful_summary(project.summary)
    if existing is not None:
        ref = existing
        w.stats.merged += ref.status == "active"
    else:
        key = entity_db.project_key(path) if kind == "project" else ""
        ref = _upsert(
            w, kind, project.name, outcome, summary, key, path if kind == "project" else None
        )
    entity_id = ref.id
    blocked = _held_off(w, ref)
    if kind == "project":
        # Its tasks keep the repository's scope even when the project itself is held off.
        w.projects[normalize_name(project.name)] = (entity_id, entity_db.project_key(path))
        if blocked is None:
            w.project_entity = w.project_entity or (entity_id, outcome)
    _sight(w, entity_id, [_proposal_sighting(w, entity_id, summary)])
    result = _outcome(ref, blocked)
    w.decisions.append(
        judged_decision(
            "merge_or_create_project", outcome, result, entity_id, w.judged.run_id, blocked
        )
    )


def _task_scope(w: _Writing, task: TriageTask) -> str:
    """The project key a task is scoped by: its named project's, or the session's only one."""
    if task.project and normalize_name(task.project) in w.projects:
        return w.projects[normalize_name(task.project)][1]
    keys = {key for _, key in w.projects.values()}
    return keys.pop() if len(keys) == 1 else ""


def merge_or_create_task(
    w: _Writing, task: TriageTask, outcome: ClassifyOutcome, held: Sequence[HeldCandidate]
) -> None:
    """A judged task proposal: a sighting on the offered open task it names, else the task of
    that name in its project, else a new task. Its held candidates become its sightings."""
    kind = _real_kind(w, task, outcome)
    if kind is None:
        return
    summary = meaningful_summary(task.summary)
    existing = None
    if kind == "task" and task.existing_task_id is not None:
        existing = entity_db.active_entity_of_kind(w.session, task.existing_task_id, "task")
    if existing is not None:
        ref = entity_db.EntityRef(existing, "active", overridden=False, created=False)
        w.stats.merged += 1
    else:
        key = _task_scope(w, task) if kind == "task" else ""
        ref = _upsert(w, kind, task.title, outcome, summary, key)
        if ref.created and kind == "task" and task.project:
            entity_db.set_entity_details(w.session, ref.id, okf={"project": task.project})
    entity_id, blocked = ref.id, _held_off(w, ref)
    evidence = [c for c in held if c.source_line in set(task.lines)]
    for c in evidence:
        if blocked is None:
            w.by_line.setdefault(c.source_line or 0, (entity_id, outcome))
        else:
            w.blocked_lines.setdefault(c.source_line or 0, (entity_id, blocked))
    sightings = [
        Sighting(entity_id, c.source_kind, c.source_id, c.raw_text[:SUMMARY_CHARS], c.created_at)
        for c in evidence
    ] or [_proposal_sighting(w, entity_id, summary)]
    _sight(w, entity_id, sightings)
    result = _outcome(ref, blocked)
    w.decisions.append(
        judged_decision(
            "merge_or_create_task", outcome, result, entity_id, w.judged.run_id, blocked
        )
    )


def _merge_or_create_person(w: _Writing, person: TriagePerson, outcome: ClassifyOutcome) -> None:
    kind = _real_kind(w, person, outcome)
    if kind is None:
        return
    ref = _upsert(w, kind, person.name, outcome, None)
    _held_off(w, ref)
    _sight(w, ref.id, [_proposal_sighting(w, ref.id, None)])


def _settle_evidence(w: _Writing, held: Sequence[HeldCandidate]) -> None:
    """Held candidates after their session's triage: evidence of the task (or project) they were
    merged into, or rejected — the triage named no work item resting on them, or the one it
    named is archived (then the candidate names it, as a promotion held off it does)."""
    promoted: dict[int, tuple[int, dict[str, object] | None]] = {}
    rejected: dict[int, tuple[str, int | None]] = {}
    for c in held:
        line = c.source_line
        target = w.by_line.get(line) if line is not None else None
        if target is None and c.suggested_kind == "project" and w.project_entity:
            target = w.project_entity
        if target is None:
            off = w.blocked_lines.get(line) if line is not None else None
            entity_id, reason = off or (None, "triage: no work item of the session rests on it")
            rejected[c.id] = (reason, entity_id)
            w.decisions.append(
                DecisionRow(
                    "merge_or_create_task",
                    "llm",
                    "rejected",
                    c.id,
                    entity_id,
                    verdict_fields(False, None, None, reason),
                    job_run_id=w.judged.run_id,
                )
            )
            continue
        entity_id, outcome = target
        verdict = outcome.verdict.model_dump() if outcome.verdict else None
        promoted[c.id] = (entity_id, verdict)
        row = judged_decision(
            "merge_or_create_task", outcome, "evidence", entity_id, w.judged.run_id
        )
        w.decisions.append(DecisionRow(**{**row.__dict__, "candidate_id": c.id}))
    w.stats.evidence += len(promoted)
    settle_held(w.session, promoted, rejected, w.at)


def write_triage(
    session: Session,
    judged: JudgedTriage,
    markers: Sequence[str],
    held: Sequence[HeldCandidate] = (),
) -> TriageStats:
    """Merge or create what is real and settle the held candidates, in the caller's transaction.
    The caller writes only a triage whose every proposal was judged (`judged.errors` empty)."""
    w = _Writing(session, judged, markers)
    pairs = list(zip(judged.items, judged.outcomes, strict=True))
    for item, outcome in pairs:
        if isinstance(item, TriageProject):
            merge_or_create_project(w, item, outcome)
    for item, outcome in pairs:
        if isinstance(item, TriageTask):
            merge_or_create_task(w, item, outcome, held)
        elif isinstance(item, TriagePerson):
            _merge_or_create_person(w, item, outcome)
    if held:
        _settle_evidence(w, held)
    entity_db.link_tasks_to_projects(session, {key for _, key in w.projects.values()})
    record_decisions(session, w.decisions, utcnow())
    return w.stats
