"""The same work across sessions is one task: a work item whose name is close to an open task of
the same project is a sighting of that task (its candidate carries the task's name, so promoting
it sights the task instead of making a new one).

Close means the similarity of the two names' shingles (`name_shingles`) is at least
`importers.same_task_similarity`. The open tasks of a project are few (the most recently seen
`OPEN_TASKS`, read once per import, and the names this import proposed since), so the similarity
is computed exactly against each: no sketch is needed at that size. Structure only: with a
model, triage's offered open tasks do the semantic merge.
"""

from __future__ import annotations

from collections import deque

from sqlalchemy.orm import Session

from yzos_jobs.db.entities import project_key
from yzos_jobs.db.triage_queue import open_tasks
from yzos_jobs.importers.name_shingles import shingles, similarity

OPEN_TASKS = 500  # open tasks of a project compared with, most recently seen first


class OpenTaskNames:
    """The open tasks' names per project, as one import sees them: read from the database the
    first time a project comes up, then grown by the names the import proposes."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._known: dict[str, deque[tuple[str, frozenset[str]]]] = {}

    def load(self, db: Session, project_paths: list[str | None]) -> None:
        """Read the open tasks of the projects not seen yet."""
        for path in project_paths:
            key = project_key(path)
            if key and key not in self._known:
                names = [name for _, name in open_tasks(db, key, OPEN_TASKS)]
                self._known[key] = deque(((n, shingles(n)) for n in names), maxlen=OPEN_TASKS)

    def same_work(self, project_path: str | None, name: str) -> str | None:
        """The name of the open task `name` continues, or None (then `name` is remembered as a
        task of the project, for the sessions after it)."""
        key = project_key(project_path)
        if not key or self.threshold > 1:
            return None
        known = self._known.setdefault(key, deque(maxlen=OPEN_TASKS))
        mine = shingles(name)
        best, score = None, 0.0
        for other, theirs in known:
            s = similarity(mine, theirs)
            if s > score:
                best, score = other, s
        if best is not None and score >= self.threshold:
            return best
        known.appendleft((name, mine))  # the oldest name goes past OPEN_TASKS
        return None
