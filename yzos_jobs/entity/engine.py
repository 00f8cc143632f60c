"""Session triage: projects, tasks and persons an upstream summary of a session proposes.

Every proposal goes through the classifier. A classifier failure skips the proposal (counted,
logged, nothing written); a verdict of app or noise writes nothing either."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from yzos_jobs.db.engine import run_in_transaction
from yzos_jobs.db.models import Entity
from yzos_jobs.db.types import utcnow
from yzos_jobs.entity import noise_filter
from yzos_jobs.entity.classifier import (
    ClassifierUsage,
    ClassifyInput,
    ClassifyOutcome,
    normalize_display_name,
)
from yzos_jobs.entity.sightings import Sighting, add_sightings
from yzos_jobs.entity.updater import (
    EntityRef,
    NewEntity,
    Promote,
    meaningful_summary,
    normalize_name,
    update_existing,
    upsert_entities,
)
from yzos_jobs.jobcontext import JobContext
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


def _project_by_path(session: Session, path: str | None, markers: Sequence[str]) -> int | None:
    if not path or not noise_filter.is_plausible_project_path(path, markers):
        return None
    normalized = noise_filter.normalize_project_path(path)
    return session.scalar(
        select(Entity.id)
        .where(Entity.kind == "project", Entity.project_path == normalized)
        .order_by(Entity.id)
        .limit(1)
    )


def _merge_or_create(
    session: Session,
    p: _Proposal,
    outcome: ClassifyOutcome,
    session_id: str,
    seen_at: datetime,
    markers: Sequence[str],
    stats: TriageStats,
) -> None:
    if outcome.verdict is None:
        stats.skipped += 1
        stats.failures.append(f"{p.kind} {p.name!r}: {outcome.error}")
        return
    v = outcome.verdict
    if not v.is_real_entity or v.kind not in ("person", "project", "task"):
        stats.rejected += 1
        return
    now = utcnow()
    summary = meaningful_summary(p.summary)
    entity_id = _project_by_path(session, p.path, markers) if v.kind == "project" else None
    ref: EntityRef | None = None
    if entity_id is None:
        name = v.display_name or normalize_display_name(p.name) or p.name
        promote = Promote(
            v.kind, name, outcome.source or "llm", outcome.model_id, v.confidence, v.model_dump()
        )
        key = (v.kind, normalize_name(name))
        ref = upsert_entities(session, {key: NewEntity(promote, seen_at, summary)}, now)[key]
        entity_id = ref.id
        if ref.created:
            stats.created += 1
            extra: dict[str, object] = {}
            if v.kind == "project" and p.path:
                extra["project_path"] = noise_filter.normalize_project_path(p.path)
            if v.kind == "task" and p.project:
                extra["okf"] = {"project": p.project}
            if extra:
                session.execute(update(Entity).where(Entity.id == entity_id).values(extra))
        else:
            stats.merged += 1
    else:
        stats.merged += 1
    stats.sightings += add_sightings(
        session, [Sighting(entity_id, SOURCE_KIND, session_id, summary, seen_at)]
    )
    if summary and ref is not None and not ref.created:
        update_existing(session, {entity_id: summary}, [ref])


def merge_or_create_project(
    session: Session,
    project: TriageProject,
    outcome: ClassifyOutcome,
    session_id: str,
    seen_at: datetime,
    markers: Sequence[str],
    stats: TriageStats,
) -> None:
    """Match an existing project by normalized project path, else by normalized name; create it
    when neither exists."""
    _merge_or_create(session, _proposal(project), outcome, session_id, seen_at, markers, stats)


def merge_or_create_task(
    session: Session,
    task: TriageTask,
    outcome: ClassifyOutcome,
    session_id: str,
    seen_at: datetime,
    stats: TriageStats,
) -> None:
    _merge_or_create(session, _proposal(task), outcome, session_id, seen_at, (), stats)


@dataclass(frozen=True)
class JudgedTriage:
    """A session's triage with a verdict (or failure) for every proposal, ready to write."""

    session_id: str
    items: list[TriageProject | TriageTask | TriagePerson]
    outcomes: list[ClassifyOutcome]
    seen_at: datetime
    usage: ClassifierUsage


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
    result = ctx.classifier.classify_many([_input(_proposal(i), session_id) for i in items])
    return JudgedTriage(session_id, items, result.outcomes, seen_at or utcnow(), result.usage)


def write_triage(session: Session, judged: JudgedTriage, markers: Sequence[str]) -> TriageStats:
    """Merge or create what is real, in the caller's transaction."""
    stats = TriageStats()
    sid, at = judged.session_id, judged.seen_at
    for item, outcome in zip(judged.items, judged.outcomes, strict=True):
        if isinstance(item, TriageProject):
            merge_or_create_project(session, item, outcome, sid, at, markers, stats)
        elif isinstance(item, TriageTask):
            merge_or_create_task(session, item, outcome, sid, at, stats)
        else:
            _merge_or_create(session, _proposal(item), outcome, sid, at, markers, stats)
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
