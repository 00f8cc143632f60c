"""Work a later segment of a coding session shows to be one piece, that the segments before had
proposed as several tasks: requests proposed as tasks of their own before the session was closed
as idle, and a commit after it that holds them all (`ClosedSession.gathered_before`). One reading
of the whole session makes them one task; so does this, by merging the others into the task whose
name the later segment keeps.

Only tasks that session alone proposed and no user corrected are merged (`proposed_alone`), only
active ones, and only within one repository: a task seen elsewhere is work of its own. The other
names stay aliases of the task, as after any merge; each merge is a row of the decision trail.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.orm import Session

from yzos_jobs.db import entities as entity_db
from yzos_jobs.db.decision_rows import DecisionRow, record_decisions
from yzos_jobs.db.entities import EntityRow
from yzos_jobs.db.queue import task_entities_on_lines
from yzos_jobs.entity.merge import merge_entities
from yzos_jobs.supply.moved_session import proposed_alone, structural_decision


def join_gathered_work(
    session: Session,
    source_kind: str,
    source_ids: Sequence[str],
    gathered: list[list[int]],
    set_by: str,
    now: datetime,
) -> None:
    """Merge, for each group of lines (the first the line of the name kept), the tasks the other
    lines of the earlier segments `source_ids` were proposed as into the first line's task, in
    the caller's transaction."""
    if not gathered:
        return
    by_line = task_entities_on_lines(
        session, source_kind, source_ids, [n for lines in gathered for n in lines]
    )
    for first, *rest in gathered:
        kept = by_line.get(first)
        others = {by_line[n] for n in rest if n in by_line} - {kept}
        if kept is None or not others:
            continue
        others = proposed_alone(session, others, source_kind, source_ids)
        rows = {r.id: r for r in entity_db.entity_rows(session, sorted({kept, *others}), lock=True)}
        target = rows.get(kept)
        if target is None or target.status != "active" or target.kind != "task":
            continue
        merged = [
            row
            for row in (rows.get(other) for other in sorted(others))
            if row is not None
            and row.status == "active"
            and row.kind == "task"
            and row.project_key == target.project_key
        ]
        for row in merged:
            merge_entities(session, row, target, set_by, now)
        record_decisions(session, [_decision(row, target) for row in merged], now)


def _decision(row: EntityRow, target: EntityRow) -> DecisionRow:
    """The trail's row of a merge of gathered work."""
    reason = "A commit the session made later holds this work and that task's as one"
    detail = f"task {row.display_name!r} (e:{row.id}) merged into e:{target.id}"
    return structural_decision(
        target.id, "task", target.display_name, "merged", reason, detail, row.id
    )
