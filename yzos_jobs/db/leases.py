"""Keeps the leases of a claimed batch alive while it is being classified."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from types import TracebackType

from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.queue import extend_lease
from yzos_jobs.logging import get_logger

log = get_logger(__name__)


class LeaseKeeper:
    """Renews a lease every third of its length until the block exits, so a slow LLM does not let
    another daemon take the batch back while this one is still working on it."""

    def __init__(self, renew: Callable[[], None], lease_s: float) -> None:
        self._renew = renew
        self._interval = max(lease_s / 3, 0.05)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lease-keeper", daemon=True)

    @classmethod
    def for_candidates(
        cls, sessions: sessionmaker[Session], owner: str, ids: Sequence[int], lease_s: float
    ) -> LeaseKeeper:
        def renew() -> None:
            with transaction(sessions) as s:
                extend_lease(s, owner, ids, lease_s, utcnow())

        return cls(renew, lease_s)

    def _loop(self) -> None:
        while not self._done.wait(self._interval):
            try:
                self._renew()
            except Exception as exc:  # the next renewal or the lease itself covers a blip
                log.warning("lease renewal failed", error=str(exc))

    def start(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def __enter__(self) -> LeaseKeeper:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
