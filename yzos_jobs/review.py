"""The review commands' reports and their rendering: `entities`, `show`, `explain`, `export`.

A report is plain data (what `--json` prints); on a terminal it is drawn with `rich` (imported
only then), otherwise as aligned plain-text columns that scripts and pipes can read.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from sqlalchemy.orm import Session

from yzos_jobs.db import catalog
from yzos_jobs.db.aliases import aliases_of
from yzos_jobs.db.decision_rows import DecisionView, decisions_of_candidate, decisions_of_entity
from yzos_jobs.db.entities import EntityRow, entity_rows, projects_named
from yzos_jobs.entity.policy import normalize_name
from yzos_jobs.entity.refs import AmbiguousRef, CandidateTarget, EntityTarget, Target, resolve

SHOW_SIGHTINGS = 10
SHOW_TASKS = 20
SHOW_DECISIONS = 10
EXPLAIN_DECISIONS = 50
CELL_CHARS = 60


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _ref(entity_id: int | None) -> str | None:
    return f"e:{entity_id}" if entity_id is not None else None


# -- reports (plain data) -------------------------------------------------------------------


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
    """The projects a `--project` value names: e:ID, or every project of that name."""
    target = resolve(session, project) if project.startswith("e:") else None
    if isinstance(target, EntityTarget):
        return [target.entity.id]
    return projects_named(session, normalize_name(project))


def entities_report(
    session: Session,
    *,
    kind: str | None,
    status: str | None,
    project: str | None,
    search: str | None,
    limit: int,
) -> list[dict[str, Any]]:
    ids = project_ids(session, project) if project is not None else None
    lines = catalog.list_entities(
        session,
        kind=kind,
        status=status,
        project_ids=ids,
        search=normalize_name(search) if search else None,
        limit=limit,
    )
    return [entity_line(line) for line in lines]


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
        return {
            "candidate": _candidate_dict(c),
            "decisions": [decision_dict(d) for d in decisions_of_candidate(session, c.id)],
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


def export(session: Session, out: TextIO, fmt: str, include_archived: bool) -> int:
    """Stream every entity (active only, unless asked) as JSON lines or CSV; returns the count."""
    lines = catalog.export_entities(session, include_archived=include_archived)
    n = 0
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(EXPORT_FIELDS)
        for line in lines:
            row = entity_line(line)
            writer.writerow(["" if row[k] is None else row[k] for k in EXPORT_FIELDS])
            n += 1
        return n
    for line in lines:
        row = entity_line(line)
        out.write(json.dumps({k: row[k] for k in EXPORT_FIELDS}, ensure_ascii=False) + "\n")
        n += 1
    return n


# -- rendering ------------------------------------------------------------------------------


@dataclass
class Section:
    """A titled table; `headers` empty: a key/value block."""

    title: str | None
    headers: Sequence[str]
    rows: list[Sequence[Any]] = field(default_factory=list)


def _cell(value: Any, cap: bool = True) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    text = " ".join(str(value).split())
    return text if not cap or len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def _width(text: str) -> int:
    """Columns a text takes on a terminal: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _short_time(value: str | None) -> str:
    return value[:16].replace("T", " ") if value else ""


def emit(sections: Iterable[Section], out: TextIO) -> None:
    if getattr(out, "isatty", lambda: False)():
        _emit_rich(sections, out)
    else:
        _emit_plain(sections, out)


def _emit_plain(sections: Iterable[Section], out: TextIO) -> None:
    first = True
    for section in sections:
        if not first:
            out.write("\n")
        first = False
        if section.title:
            out.write(section.title + "\n")
        # Every column but the last is capped; the last (a reason, a summary) is shown whole.
        rows = [[_cell(v, i < len(row) - 1) for i, v in enumerate(row)] for row in section.rows]
        table = [list(section.headers), *rows] if section.headers else rows
        if not table:
            continue
        widths = [max(_width(r[i]) for r in table) for i in range(len(table[0]))]
        for r in table:
            cells = [c + " " * (w - _width(c)) for c, w in zip(r, widths, strict=True)]
            out.write("  ".join(cells).rstrip() + "\n")


def _emit_rich(sections: Iterable[Section], out: TextIO) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out)
    for section in sections:
        keyed = not section.headers  # a key/value block: no header, keys in bold
        if not keyed:
            kept = _columns_that_fit(section, console.width)
            section = Section(
                section.title,
                [section.headers[i] for i in kept],
                [[row[i] for i in kept] for row in section.rows],
            )
        table = Table(
            title=section.title,
            title_justify="left",
            show_header=not keyed,
            box=None if keyed else box.SIMPLE_HEAD,
            header_style="bold",
        )
        width = len(section.headers) or (len(section.rows[0]) if section.rows else 0)
        for i in range(width):
            name = "" if keyed else section.headers[i]
            table.add_column(
                name, style="bold" if keyed and i == 0 else None, **_fit(name, i, keyed)
            )
        for row in section.rows:
            table.add_row(*(_cell(v, cap=False) for v in row))
        console.print(table)


# Columns of free text wrap at spaces; the others hold one token (a ref, a kind, a time) and are
# never broken. No column folds inside a word: on a terminal too narrow for every column, the
# least needed columns are left out (the plain and JSON forms always carry them all), and what
# still cannot fit is cut with an ellipsis.
WRAPPED_COLUMNS = frozenset({"name", "project", "summary", "reason", "detail", "id"})
WRAPPED_MIN = 12
LEFT_OUT_FIRST = ("first seen", "model", "id", "source", "sightings", "call site", "status")


def _fit(header: str, index: int, keyed: bool) -> dict[str, Any]:
    """How a rich column fits its terminal."""
    if keyed:  # a key/value block: the key whole, the value wrapped
        return {"no_wrap": index == 0, "overflow": "ellipsis"}
    if header in WRAPPED_COLUMNS:
        return {"overflow": "ellipsis", "min_width": min(WRAPPED_MIN, len(header))}
    return {"no_wrap": True, "overflow": "ellipsis"}


def _needed(section: Section, kept: Sequence[int]) -> int:
    """Columns a table of the `kept` columns needs: whole tokens, wrapped text at its minimum,
    one column of padding either side of each cell, and the separators."""
    total = len(kept) + 1
    for i in kept:
        header = section.headers[i]
        cells = [_width(_cell(row[i], cap=False)) for row in section.rows]
        widest = max([_width(header), *cells])
        total += 2 + (min(widest, WRAPPED_MIN) if header in WRAPPED_COLUMNS else widest)
    return total


def _columns_that_fit(section: Section, width: int) -> list[int]:
    kept = list(range(len(section.headers)))
    for name in LEFT_OUT_FIRST:
        if _needed(section, kept) <= width:
            break
        kept = [i for i in kept if section.headers[i] != name]
    return kept


ENTITY_HEADERS = (
    "ref",
    "name",
    "kind",
    "status",
    "project",
    "sightings",
    "first seen",
    "last seen",
    "source",
)


def _entity_rows(lines: Sequence[dict[str, Any]]) -> list[Sequence[Any]]:
    return [
        (
            e["ref"],
            e["name"],
            e["kind"],
            e["status"],
            e["project"],
            e["sightings"],
            _short_time(e["first_seen"]),
            _short_time(e["last_seen"]),
            e["verdict_source"],
        )
        for e in lines
    ]


def render_entities(lines: Sequence[dict[str, Any]], out: TextIO) -> None:
    if not lines:
        out.write("no entities match\n")
        return
    emit([Section(None, ENTITY_HEADERS, _entity_rows(lines))], out)


DECISION_HEADERS = ("at", "call site", "outcome", "verdict", "source", "model", "reason")


def _verdict_word(d: dict[str, Any]) -> str:
    if d["is_real_entity"] is None and d["kind"] is None:
        return ""
    return d["kind"] or ("real" if d["is_real_entity"] else "not an entity")


def _decision_rows(decisions: Sequence[dict[str, Any]]) -> list[Sequence[Any]]:
    return [
        (
            _short_time(d["at"]),
            d["call_site"],
            d["outcome"],
            _verdict_word(d),
            d["source"],
            d["model"],
            "; ".join(x for x in (d["reason"], d["detail"]) if x),
        )
        for d in decisions
    ]


def _entity_block(e: dict[str, Any]) -> Section:
    rows: list[Sequence[Any]] = [
        ("entity", f"{e['ref']} {e['name']}"),
        ("kind", e["kind"]),
        ("status", e["status"]),
    ]
    if e["project"]:
        rows.append(("project", f"{e['project']} (e:{e['project_id']})"))
    if e["project_path"]:
        rows.append(("path", e["project_path"]))
    if e["summary"]:
        rows.append(("summary", e["summary"]))
    rows.append(
        (
            "sightings",
            f"{e['sightings']} (first {_short_time(e['first_seen'])}, "
            f"last {_short_time(e['last_seen'])})",
        )
    )
    verdict = e["verdict_source"] or ""
    if e["model"]:
        verdict += f" {e['model']}"
    if e["confidence"] is not None:
        verdict += f", confidence {e['confidence']:.2f}"
    rows.append(("verdict", verdict))
    if e["override"]:
        o = e["override"]
        rows.append(
            ("override", f"{o['status']} by {o['set_by']}: {o['reason'] or ''}".rstrip(": "))
        )
    if e["aliases"]:
        rows.append(("aliases", ", ".join(f"{a['kind']} {a['name']!r}" for a in e["aliases"])))
    return Section(None, (), rows)


def _candidate_block(c: dict[str, Any]) -> Section:
    rows: list[Sequence[Any]] = [
        ("candidate", f"{c['ref']} {c['raw_text']}"),
        ("suggested", c["suggested_kind"] or ""),
        ("source", f"{c['source_kind']} {c['source_id']}"),
        ("status", c["status"]),
    ]
    if c["entity"]:
        rows.append(("entity", c["entity"]))
    if c["reject_reason"]:
        rows.append(("reason", c["reject_reason"]))
    if c["surrounding_text"]:
        rows.append(("context", c["surrounding_text"]))
    return Section(None, (), rows)


def _head(report: dict[str, Any]) -> Section:
    if "entity" in report:
        return _entity_block(report["entity"])
    return _candidate_block(report["candidate"])


def _decisions_title(report: dict[str, Any], word: str) -> str:
    shown, total = len(report["decisions"]), report["decisions_total"]
    return f"{word} ({shown} of {total})" if total > shown else f"{word} ({total})"


def render_show(report: dict[str, Any], out: TextIO) -> None:
    sections = [_head(report)]
    if report.get("sightings"):
        sections.append(
            Section(
                f"Newest sightings ({len(report['sightings'])} of {report['entity']['sightings']})",
                ("seen", "source", "id", "summary"),
                [
                    (_short_time(s["seen_at"]), s["source_kind"], s["source_id"], s["summary"])
                    for s in report["sightings"]
                ],
            )
        )
    if report.get("tasks"):
        sections.append(
            Section(
                f"Tasks ({len(report['tasks'])} of {report['tasks_total']})",
                ENTITY_HEADERS,
                _entity_rows(report["tasks"]),
            )
        )
    if report["decisions"]:
        sections.append(
            Section(
                _decisions_title(report, "Decisions"),
                DECISION_HEADERS,
                _decision_rows(report["decisions"]),
            )
        )
    emit(sections, out)


def render_explain(report: dict[str, Any], out: TextIO) -> None:
    sections = [_head(report)]
    if report["decisions"]:
        sections.append(
            Section(
                _decisions_title(report, "Why: the decisions, oldest first"),
                DECISION_HEADERS,
                _decision_rows(report["decisions"]),
            )
        )
    else:
        sections.append(Section("No decision recorded (made before the decision trail).", ()))
    emit(sections, out)


def render_matches(report: dict[str, Any], out: TextIO) -> None:
    emit(
        [
            Section(
                None,
                ("ref", "name", "kind", "status", "detail"),
                [
                    (
                        m["ref"],
                        m["name"],
                        m["kind"],
                        m["status"],
                        m.get("project_path") or m.get("reason"),
                    )
                    for m in report["matches"]
                ],
            )
        ],
        out,
    )
