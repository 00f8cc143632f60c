"""Session triage: projects, tasks and persons an upstream summary of a session proposes.

Every proposal goes through the classifier. A classifier failure skips the proposal (counted,
logged, nothing written); a verdict of app or noise writes nothing either."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session

from yzos_jobs.db.decisions import record_decisions
from yzos_jobs.db.engine import run_in_transaction
from yzos_jobs.db.entities import (
    EntityDraft,
    project_by_path,
    project_key,
    set_entity_details,
    upsert_entities,
)
from yzos_jobs.db.sightings import Sighting, add_sightings
from yzos_jobs.db.types import utcnow
from yzos_jobs.entity import noise_filter
from yzos_jobs.entity.decisions import display_name, meaningful_summary, normalize_name
from yzos_jobs.entity.trail import judged_decision
from yzos_jobs.entity.updater import update_existing
from yzos_jobs.inference.types import ClassifierUsage, ClassifyInput, ClassifyOutcome
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.kinds import is_entity_kind
from yzos_jobs.logging import get_logger

log = get_logger(__name__)

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


@dataclass(frozen=True)
class TriagePerson:
    name: str


@dataclass(frozen=True)
class SessionTriage:
    projects: Sequence[TriageProject] = ()
    tasks: Sequence[TriageTask] = ()
    persons: Sequence[TriagePerson] = ()


@dataclass
class TriageStats:
    created: int = 0
    merged: int = 0
    rejected: int = 0
    skipped: int = 0
    sightings: int = 0
    failures: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if isinstance(v, int)}


@dataclass(frozen=True)
class _Proposal:
    kind: str
    name: str
    summary: str | None
    path: str | None
    project: str | None


def _proposal(item: TriageProject | TriageTask | TriagePerson) -> _Proposal:
    if isinstance(item, TriageProject):
        return _Proposal("project", item.name, item.summary, item.path, None)
    if isinstance(item, TriageTask):
        return _Proposal("task", item.title, item.summary, None, item.project)
    return _Proposal("person", item.name, None, None, None)


def _input(p: _Proposal, session_id: str) -> ClassifyInput:
    context = " — ".join(x for x in (p.summary, p.path, p.project and f"project {p.project}") if x)
    return ClassifyInput(
        raw_text=p.name,
        source_kind=SOURCE_KIND,
        source_id=session_id,
        suggested_kind=p.kind,
        surrounding_text=context or None,
    )


def _verdict_entity(p: _Proposal, outcome: ClassifyOutcome, stats: TriageStats) -> str | None:
    """The entity kind a proposal's verdict allows, or None (counted as skipped or rejected)."""
    if outcome.verdict is None:
        stats.skipped += 1
        stats.failures.append(f"{p.kind} {p.name!r}: {outcome.error}")
        return None
    v = outcome.verdict
    if not v.is_real_entity or not is_entity_kind(v.kind):
        stats.rejected += 1
        return None
    return v.kind


def _merge_or_create_entity(
    session: Session,
    kind: str,
    p: _Proposal,
    outcome: ClassifyOutcome,
    at: tuple[str, datetime],
    stats: TriageStats,
    project_path: str | None = None,
) -> tuple[int, bool]:
    """Find or create the entity a real verdict names (a project scoped by its repository path).
    Returns (entity id, created)."""
    v = outcome.verdict
    assert v is not None
    name = v.display_name or display_name(p.name) or p.name
    draft = EntityDraft(
        kind,
        normalize_name(name),
        display_name=name,
        confidence=v.confidence,
        verdict_source=outcome.source or "llm",
        classified_model=outcome.model_id,
        first_seen_at=at[1],
        summary=meaningful_summary(p.summary),
        project_key=project_key(project_path) if kind == "project" else "",
        project_path=project_path if kind == "project" else None,
    )
    ref = upsert_entities(session, [draft], utcnow())[draft.key]
    if ref.created:
        stats.created += 1
    else:
        stats.merged += 1
        if draft.summary:
            update_existing(session, {ref.id: draft.summary}, [ref])
    return ref.id, ref.created


def _add_sighting(
    session: Session, entity_id: int, p: _Proposal, at: tuple[str, datetime], stats: TriageStats
) -> None:
    summary = meaningful_summary(p.summary)
    stats.sightings += add_sightings(
        session, [Sighting(entity_id, SOURCE_KIND, at[0], summary, at[1])]
    )


def _record(
    session: Session,
    call_site: str,
    entity_id: int,
    created: bool,
    outcome: ClassifyOutcome,
    run_id: int | None,
) -> None:
    """The proposal's row in the decision trail, in the transaction that wrote it."""
    row = judged_decision(call_site, outcome, "created" if created else "merged", entity_id, run_id)
    record_decisions(session, [row], utcnow())


def merge_or_create_project(
    session: Session,
    project: TriageProject,
    outcome: ClassifyOutcome,
    at: tuple[str, datetime],
    markers: Sequence[str],
    stats: TriageStats,
    run_id: int | None = None,
) -> None:
    """A judged project proposal: an existing project with the same normalised path, else the
    same name, else a new project (with its path)."""
    p = _proposal(project)
    if _verdict_entity(p, outcome, stats) is None:
        return
    plausible = p.path and noise_filter.is_plausible_project_path(p.path, markers)
    normalized = noise_filter.normalize_project_path(p.path) if p.path else None
    entity_id = project_by_path(session, normalized) if plausible and normalized else None
    created = False
    if entity_id is not None:
        stats.merged += 1
    else:
        verdict_kind = outcome.verdict.kind if outcome.verdict else None
        entity_id, created = _merge_or_create_entity(
            session, verdict_kind or "project", p, outcome, at, stats, normalized
        )
    _add_sighting(session, entity_id, p, at, stats)
    _record(session, "merge_or_create_project", entity_id, created, outcome, run_id)


def merge_or_create_task(
    session: Session,
    task: TriageTask,
    outcome: ClassifyOutcome,
    at: tuple[str, datetime],
    stats: TriageStats,
    run_id: int | None = None,
) -> None:
    """A judged task proposal: merged into the task of that name, or created (with its
    project's name)."""
    p = _proposal(task)
    kind = _verdict_entity(p, outcome, stats)
    if kind is None:
        return
    entity_id, created = _merge_or_create_entity(session, kind, p, outcome, at, stats)
    if created and kind == "task" and p.project:
        set_entity_details(session, entity_id, okf={"project": p.project})
    _add_sighting(session, entity_id, p, at, stats)
    _record(session, "merge_or_create_task", entity_id, created, outcome, run_id)


def _merge_or_create_person(
    session: Session,
    person: TriagePerson,
    outcome: ClassifyOutcome,
    at: tuple[str, datetime],
    stats: TriageStats,
) -> None:
    p = _proposal(person)
    kind = _verdict_entity(p, outcome, stats)
    if kind is None:
        return
    entity_id, _ = _merge_or_create_entity(session, kind, p, outcome, at, stats)
    _add_sighting(session, entity_id, p, at, stats)


@dataclass(frozen=True)
class JudgedTriage:
    """A session's triage with a verdict (or failure) for every proposal, ready to write."""

    session_id: str
    items: list[TriageProject | TriageTask | TriagePerson]
    outcomes: list[ClassifyOutcome]
    seen_at: datetime
    usage: ClassifierUsage
    run_id: int | None = None  # the job run it is written under, for the decision trail


def judge_triage(
    ctx: JobContext, session_id: str, triage: SessionTriage, seen_at: datetime | None = None
) -> JudgedTriage:
    """Classify every proposal of one session in one batch (no database writes)."""
    items: list[TriageProject | TriageTask | TriagePerson] = [
        *triage.projects,
        *triage.tasks,
        *triage.persons,
    ]
    if not items:
        return JudgedTriage(session_id, items, [], seen_at or utcnow(), ClassifierUsage())
    result = ctx.classifier.classify_many(
        [_input(_proposal(i), session_id) for i in items], ctx.breaker
    )
    return JudgedTriage(
        session_id, items, result.outcomes, seen_at or utcnow(), result.usage, ctx.run_id
    )


def write_triage(session: Session, judged: JudgedTriage, markers: Sequence[str]) -> TriageStats:
    """Merge or create what is real, in the caller's transaction."""
    stats = TriageStats()
    sid, at = judged.session_id, (judged.session_id, judged.seen_at)
    for item, outcome in zip(judged.items, judged.outcomes, strict=True):
        if isinstance(item, TriageProject):
            merge_or_create_project(session, item, outcome, at, markers, stats, judged.run_id)
        elif isinstance(item, TriageTask):
            merge_or_create_task(session, item, outcome, at, stats, judged.run_id)
        else:
            _merge_or_create_person(session, item, outcome, at, stats)
    if stats.skipped:
        log.warning(
            "triage proposals skipped: classifier failed",
            session_id=sid,
            skipped=stats.skipped,
            first_error=stats.failures[0],
        )
    return stats


def apply_session_triage(
    ctx: JobContext, session_id: str, triage: SessionTriage, seen_at: datetime | None = None
) -> TriageStats:
    """Classify every proposal of one session in a batch, then merge or create what is real."""
    judged = judge_triage(ctx, session_id, triage, seen_at)
    if not judged.items:
        return TriageStats()
    markers = ctx.settings.noise_filter.work_dir_segments
    return run_in_transaction(ctx.sessions, lambda s: write_triage(s, judged, markers))
