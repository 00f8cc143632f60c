"""What happens when an observed session ends: its pending candidates are promoted inline. If the
classifier fails here nothing is forced: the candidates stay pending and the `entity_promote` job
decides them later (with its own fallback).

An import without a model ends sessions in bulk (`SessionEnd`): their candidates are promoted a
thousand sessions at a time (one promote per committed batch of a hundred sessions would spend
more on the rounds than on the candidates). Until then they are pending in the database: a run
that dies before leaves them to `entity_promote`. On PostgreSQL a promote runs beside the reading
and writing of the next sessions (they share no rows, and the server works while Python parses);
on SQLite, whose single writer would make one wait for the other, in turn."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime

from yzos_jobs.db.activity_sessions import upsert_activity_session
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.entity.promote_loop import promote_pending
from yzos_jobs.entity.updater import PromoteStats
from yzos_jobs.jobcontext import JobContext

ENDED_SESSIONS_PER_PROMOTE = 1000


def apply_entities(ctx: JobContext, session_ids: str | Sequence[str]) -> PromoteStats:
    """Inline promote of the pending candidates of one session (or of several that ended
    together); a classifier failure leaves them pending."""
    ids = [session_ids] if isinstance(session_ids, str) else list(session_ids)
    return promote_pending(ctx, "release", source_ids=ids, call_site="apply_entities").stats


def process_session_end(
    ctx: JobContext, source_kind: str, session_id: str, ended_at: datetime | None = None
) -> PromoteStats:
    with transaction(ctx.sessions) as s:
        upsert_activity_session(s, source_kind, session_id, ended_at=ended_at or utcnow())
    return apply_entities(ctx, session_id)


class SessionEnd:
    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self.promoted = 0
        self.merged = 0
        self.failure: str | None = None  # a promote beside that failed after the import did
        self._ended: list[str] = []  # committed sessions whose promote is still due
        self._beside = ctx.concurrent_writers
        # The promote beside has a stop of its own: an import that fails stops it after the
        # batch in hand instead of waiting for all it took on.
        self._beside_ctx = replace(ctx, stop=threading.Event())
        self._worker: ThreadPoolExecutor | None = None
        self._running: Future[PromoteStats] | None = None

    def ended(self, session_ids: Iterable[str]) -> None:
        self._ended.extend(session_ids)
        if self._running is not None and self._running.done():
            self._collect()  # a promote beside that failed stops the import now
        if len(self._ended) >= ENDED_SESSIONS_PER_PROMOTE:
            self.promote()

    def promote(self) -> None:
        """Promote what has ended so far (beside the caller where the backend allows)."""
        if not self._ended:
            return
        self._collect()  # one promote at a time; a failed one raises before more are taken
        ended, self._ended = self._ended, []
        if not self._beside:
            self._count(apply_entities(self.ctx, ended))
            return
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="session-end")
        self._running = self._worker.submit(self._promote_beside, ended)

    def finish(self) -> None:
        """Promote the rest and wait for it; a failed promote raises here."""
        self.promote()
        self._collect()

    def close(self) -> None:
        """End a promote still under way after its batch (an import that failed ends here: what
        was not promoted stays pending), counting what it did."""
        if self._worker is None:
            return
        self._beside_ctx.stop.set()
        self._worker.shutdown(wait=True)
        self._worker = None
        try:
            self._collect()
        except Exception as exc:
            self.failure = str(exc).splitlines()[0] if str(exc) else type(exc).__name__

    def _promote_beside(self, ended: list[str]) -> PromoteStats:
        if self.ctx.stop.is_set():
            self._beside_ctx.stop.set()
        return apply_entities(self._beside_ctx, ended)

    def _collect(self) -> None:
        if self._running is not None:
            running, self._running = self._running, None
            self._count(running.result())

    def _count(self, done: PromoteStats) -> None:
        self.promoted += done.promoted
        self.merged += done.merged
