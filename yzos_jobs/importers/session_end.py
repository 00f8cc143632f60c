"""The session end of an import without a model: the candidates of ended sessions promoted
inline, a thousand sessions at a time (one promote per committed batch of a hundred sessions
would spend more on the rounds than on the candidates). Until then they are pending in the
database: a run that dies before leaves them to `entity_promote`.

On PostgreSQL a promote runs beside the reading and writing of the next sessions (they share no
rows, and the server works while Python parses); on SQLite, whose single writer would make one
wait for the other, in turn."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor

from yzos_jobs.jobcontext import JobContext
from yzos_jobs.supply.pipeline import apply_entities

ENDED_SESSIONS_PER_PROMOTE = 1000


class SessionEnd:
    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self.promoted = 0
        self._ended: list[str] = []  # committed sessions whose promote is still due
        self._beside = ctx.concurrent_writers
        self._worker: ThreadPoolExecutor | None = None
        self._running: Future[int] | None = None

    def ended(self, session_ids: Iterable[str]) -> None:
        self._ended.extend(session_ids)
        if len(self._ended) >= ENDED_SESSIONS_PER_PROMOTE:
            self.promote()

    def promote(self) -> None:
        """Promote what has ended so far (beside the caller where the backend allows)."""
        if not self._ended:
            return
        ended, self._ended = self._ended, []
        if not self._beside:
            self.promoted += self._promote(ended)
            return
        self._collect()  # one promote at a time
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="session-end")
        self._running = self._worker.submit(self._promote, ended)

    def finish(self) -> None:
        """Promote the rest and wait for it; a failed promote raises here."""
        try:
            self.promote()
            self._collect()
        finally:
            self.close()

    def close(self) -> None:
        """Wait for a promote under way, whatever its outcome (an import that failed ends
        here: what was not promoted stays pending)."""
        if self._worker is not None:
            self._worker.shutdown(wait=True)
            self._worker = None

    def _promote(self, ended: list[str]) -> int:
        return apply_entities(self.ctx, ended).promoted

    def _collect(self) -> None:
        if self._running is not None:
            running, self._running = self._running, None
            self.promoted += running.result()
