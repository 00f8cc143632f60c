"""The review commands' reports: what `entities`, `show`, `explain` and `export` print.

A report is plain data, read from the database (what `--json` prints); `review_render` draws it
for a terminal, a pipe or a CSV file.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from yzos_jobs.db import catalog
from yzos_jobs.db.aliases import aliases_of
from yzos_jobs.db.decision_rows import DecisionView, decisions_of_candidate, decisions_of_entity
from yzos_jobs.db.entities import EntityRow, entity_rows
from yzos_jobs.entity.policy import normalize_name
from yzos_jobs.entity.refs import (
    AmbiguousRef,
    CandidateTarget,
    EntityTarget,
    RefNotFound,
    Target,
    resolve,
)

SHOW_SIGHTINGS = 10
SHOW_TASKS = 20
SHOW_DECISIONS = 10
EXPLAIN_DECISIONS = 50


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _ref(entity_id: int | None) -> str | None:
    return f"e:{entity_id}" if entity_id is not None else None


def entity_line(line: catalog.EntityLine) -> dict[str, Any]:
    return {
        "ref": f"e:{line.id}",
        "id": line.id,
        "name": line.display_name,
        "kind": line.kind,
        "status": line.status,
        "project": line.project,
        "project_id": line.project_id,
        "project_path": line.project_path,
        "sightings": line.sighting_count,
        "first_seen": _time(line.first_seen_at),
        "last_seen": _time(line.last_seen_at),
        "verdict_source": line.verdict_source,
    }


def project_ids(session: Session, project: str) -> list[int]:
    """The projects a `--project` value names: e:ID, or every project of that name, or that the
    name was before a rename or a merge (an alias)."""
    target = resolve(session, project) if project.strip().startswith("e:") else None
    if isinstance(target, EntityTarget):
        entity = target.entity
        if entity.kind != "project":
            # a person or a task holds no tasks: an empty list would pass for a project with none
            raise RefNotFound(
                f"{project.strip()} is a {entity.kind} ({entity.display_name!r}), not a project"
            )
        return [entity.id]
    named = catalog.entities_named(session, normalize_name(project))
    ids = [e.id for e in named if e.kind == "project"]
    if not ids:
        raise RefNotFound(f"no project named {project.strip()!r}")
    return ids


def entities_report(
    session: Session,
    *,
    kind: str | None,
    status: str | None,
    project: str | None,
    search: str | None,
    limit: int,
) -> list[dict[str, Any]]:
    ids, key = _filters(session, project, search)
    lines = catalog.list_entities(
        session, kind=kind, status=status, project_ids=ids, search=key, limit=limit
    )
    return [entity_line(line) for line in lines]


def entities_matching(
    session: Session,
    *,
    kind: str | None,
    status: str | None,
    project: str | None,
    search: str | None,
) -> int:
    """How many entities `entities_report` would list with no limit."""
    ids, key = _filters(session, project, search)
    return catalog.count_entities(session, kind=kind, status=status, project_ids=ids, search=key)


def _filters(
    session: Session, project: str | None, search: str | None
) -> tuple[list[int] | None, str | None]:
    """(the project entities `project` names, the key form `search` is looked for in)."""
    ids = project_ids(session, project) if project is not None else None
    # A text that is all quotes or spaces has an empty key form, which every name contains: it
    # is looked for as typed (case folded), as a quote inside a name ("O'Brien") is kept.
    key = (normalize_name(search) or search.casefold()) if search else None
    return ids, key


def decision_dict(d: DecisionView) -> dict[str, Any]:
    verdict = d.verdict or {}
    return {
        "id": d.id,
        "at": _time(d.created_at),
        "call_site": d.call_site,
        "outcome": d.outcome,
        "kind": verdict.get("kind"),
        "is_real_entity": verdict.get("is_real_entity"),
        "reason": verdict.get("reason"),
        "detail": verdict.get("detail"),
        "source": d.source,
        "model": d.model,
        "prompt_version": d.prompt_version,
        "latency_ms": d.latency_ms,
        "job_run_id": d.job_run_id,
        "candidate": f"c:{d.candidate_id}" if d.candidate_id is not None else None,
        "entity": _ref(d.entity_id),
        "verdict": d.verdict,
    }


def _entity_dict(session: Session, e: EntityRow) -> dict[str, Any]:
    override = catalog.override_of(session, e.id)
    project = entity_rows(session, [e.project_id]) if e.project_id is not None else []
    return {
        "ref": f"e:{e.id}",
        "id": e.id,
        "name": e.display_name,
        "kind": e.kind,
        "status": e.status,
        "summary": e.summary,
        "project": project[0].display_name if project else None,
        "project_id": e.project_id,
        "project_path": e.project_path,
        "sightings": e.sighting_count,
        "first_seen": _time(e.first_seen_at),
        "last_seen": _time(e.last_seen_at),
        "verdict_source": e.verdict_source,
        "model": e.classified_model,
        "confidence": e.confidence,
        "classified_at": _time(e.classified_at),
        "override": None
        if override is None
        else {
            "status": override.status,
            "reason": override.reason,
            "set_by": override.set_by,
            "at": _time(override.created_at),
        },
        "aliases": [
            {"kind": k, "name": n} for k, n, _ in aliases_of(session, e.id, limit=SHOW_TASKS)
        ],
    }


def _candidate_dict(c: catalog.CandidateRow) -> dict[str, Any]:
    return {
        "ref": f"c:{c.id}",
        "id": c.id,
        "raw_text": c.raw_text,
        "suggested_kind": c.suggested_kind,
        "source_kind": c.source_kind,
        "source_id": c.source_id,
        "app_bundle_id": c.app_bundle_id,
        "surrounding_text": c.surrounding_text,
        "status": c.status,
        "attempts": c.attempts,
        "entity": _ref(c.entity_id),
        "reject_reason": c.reject_reason,
        "verdict": c.verdict,
        "created_at": _time(c.created_at),
        "decided_at": _time(c.decided_at),
        "project_path": c.project_path,
    }


def show_report(session: Session, target: Target) -> dict[str, Any]:
    if isinstance(target, CandidateTarget):
        c = target.candidate
        decisions = decisions_of_candidate(session, c.id)
        return {
            "candidate": _candidate_dict(c),
            "decisions": [decision_dict(d) for d in decisions],
            "decisions_total": len(decisions),
        }
    e = target.entity
    sightings = catalog.newest_sightings(session, e.id, SHOW_SIGHTINGS)
    decisions, total = decisions_of_entity(session, e.id, SHOW_DECISIONS)
    report: dict[str, Any] = {
        "entity": _entity_dict(session, e),
        "sightings": [
            {
                "seen_at": _time(s.seen_at),
                "source_kind": s.source_kind,
                "source_id": s.source_id,
                "summary": s.summary,
            }
            for s in sightings
        ],
        "decisions": [decision_dict(d) for d in decisions],
        "decisions_total": total,
    }
    if e.kind == "project":
        tasks, n_tasks = catalog.tasks_of_project(session, e.id, SHOW_TASKS)
        report["tasks"] = [entity_line(t) for t in tasks]
        report["tasks_total"] = n_tasks
    return report


def explain_report(session: Session, target: Target) -> dict[str, Any]:
    """The chain of decisions that led to the state of an entity or a candidate."""
    if isinstance(target, CandidateTarget):
        c = target.candidate
        chain = decisions_of_candidate(session, c.id)
        return {
            "candidate": _candidate_dict(c),
            "state": c.status,
            "decisions": [decision_dict(d) for d in chain],
            "decisions_total": len(chain),
        }
    e = target.entity
    chain, total = decisions_of_entity(session, e.id, EXPLAIN_DECISIONS)
    return {
        "entity": _entity_dict(session, e),
        "state": e.status,
        "decisions": [decision_dict(d) for d in chain],
        "decisions_total": total,
    }


def ambiguity_report(exc: AmbiguousRef) -> dict[str, Any]:
    return {
        "error": str(exc),
        "matches": [
            {
                "ref": f"e:{e.id}",
                "name": e.display_name,
                "kind": e.kind,
                "status": e.status,
                "project_path": e.project_path,
                "sightings": e.sighting_count,
            }
            for e in exc.entities
        ]
        + [
            {
                "ref": f"c:{c.id}",
                "name": c.raw_text,
                "kind": c.suggested_kind,
                "status": c.status,
                "reason": c.reject_reason,
            }
            for c in exc.candidates
        ],
    }


# -- export ---------------------------------------------------------------------------------

EXPORT_FIELDS = (
    "id",
    "name",
    "kind",
    "status",
    "project",
    "project_path",
    "sightings",
    "first_seen",
    "last_seen",
    "verdict_source",
)


def export_rows(session: Session, include_archived: bool) -> Iterator[dict[str, Any]]:
    """Every entity (active only, unless asked), streamed, with the fields `export` writes."""
    for line in catalog.export_entities(session, include_archived=include_archived):
        row = entity_line(line)
        yield {k: row[k] for k in EXPORT_FIELDS}
