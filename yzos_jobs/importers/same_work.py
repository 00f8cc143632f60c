"""The same work across sessions is one task: a work item whose name is close to an open task of
the same project is a sighting of that task (its candidate carries the task's name, so promoting
it sights the task instead of making a new one).

Close means the similarity of the two names' shingles (`name_shingles`) is at least
`importers.same_task_similarity`. The open tasks of a project are few (the most recently seen
`OPEN_TASKS`, read once per import), so the similarity is computed exactly against each: no
sketch is needed at that size; the names the import itself proposed come first. On PostgreSQL,
where several daemons share the database, each batch also locks its projects until it is
written and reads again the tasks made since and the task candidates no promote run has decided
yet: another daemon importing the same repository meanwhile so proposes its work first or after,
never unseen. Structure only: with a model, triage's offered open tasks do the semantic merge (a
candidate held for triage is not read).
"""

from __future__ import annotations

from collections import deque
from itertools import chain, islice

from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import is_postgres
from yzos_jobs.db.entities import project_key
from yzos_jobs.db.project_work import lock_projects, project_work
from yzos_jobs.db.triage_queue import open_tasks
from yzos_jobs.importers.name_shingles import shingles, similarity

OPEN_TASKS = 500  # open tasks of a project compared with, most recently seen first
READ_AGAIN = 100  # entities read again before the last read, for ids written out of order
NO_ENTITY_AFTER = 2**62  # an id past every entity: no task made after it is read


class OpenTaskNames:
    """The open tasks' names per project, as one import sees them: the names the import proposed,
    then what the database holds (its open tasks read once, the tasks made and the candidates
    waiting read again for each batch)."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._known: dict[str, deque[tuple[str, frozenset[str]]]] = {}
        self._proposed: dict[str, deque[tuple[str, frozenset[str]]]] = {}
        self._tasks: dict[str, deque[str]] = {}  # the project's open tasks, newest first
        self._read_to = 0  # the newest entity when the open tasks were read
        self._shingles: dict[str, frozenset[str]] = {}  # a name read again is not cut again

    def load(self, db: Session, project_paths: list[str | None]) -> None:
        """Lock the projects of a batch (until the caller's transaction ends) and read what was
        proposed for them so far, newest first: by this import, then the task candidates no
        promote run has decided yet (another importer's too), then the open tasks."""
        paths: dict[str, list[str]] = {}
        for path in project_paths:
            if path is not None and (key := project_key(path)):
                paths.setdefault(key, []).append(path)
        postgres = is_postgres(db)
        if not postgres:
            # one writer at a time, and one daemon: what it read and proposed is all there is
            paths = {key: of_key for key, of_key in paths.items() if key not in self._tasks}
        if not paths:
            return
        lock_projects(db, paths)
        read_to = self._read_to
        for key, of_key in paths.items():
            first = key not in self._tasks
            tasks = self._tasks.setdefault(key, deque(maxlen=OPEN_TASKS))
            if not postgres:  # the open tasks, most recently seen first, once
                tasks.extend(name for _, name in open_tasks(db, key, OPEN_TASKS))
            else:
                # the open tasks the first time; then the tasks made since, a margin back (one
                # made with an earlier id may have been written after the last read: its
                # candidates were waiting then, and were read as such)
                after = NO_ENTITY_AFTER if first else max(0, self._read_to - READ_AGAIN)
                work = project_work(db, key, of_key, after, OPEN_TASKS, open_tasks=first)
                read_to = max(read_to, work.last_entity_id)
                tasks.extend(work.open)
                new = [n for n in dict.fromkeys([*work.waiting, *work.made]) if n not in tasks]
                tasks.extendleft(reversed(new))
            mine = self._proposed.setdefault(key, deque(maxlen=OPEN_TASKS))
            names = islice(dict.fromkeys(chain((n for n, _ in mine), tasks)), OPEN_TASKS)
            self._known[key] = deque(((n, self._shingled(n)) for n in names), maxlen=OPEN_TASKS)
        self._read_to = read_to

    def _shingled(self, name: str) -> frozenset[str]:
        if (found := self._shingles.get(name)) is None:
            found = self._shingles[name] = shingles(name)
        return found

    def same_work(self, project_path: str | None, name: str) -> str | None:
        """The name of the open task `name` continues, or None (then `name` is remembered as a
        task of the project, for the sessions after it)."""
        key = project_key(project_path)
        if not key or self.threshold > 1:
            return None
        known = self._known.setdefault(key, deque(maxlen=OPEN_TASKS))
        mine = self._shingled(name)
        best, score = None, 0.0
        for other, theirs in known:
            s = similarity(mine, theirs)
            if s > score:
                best, score = other, s
        if best is not None and score >= self.threshold:
            return best
        known.appendleft((name, mine))  # the oldest name goes past OPEN_TASKS
        self._proposed.setdefault(key, deque(maxlen=OPEN_TASKS)).appendleft((name, mine))
        return None
