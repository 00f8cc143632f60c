"""What a job needs, handed down once: settings, sessions, classifier, identity, stop flag.

Frozen: a caller that needs a variant (a progress bar, another classifier) builds a changed copy
with `dataclasses.replace`.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.config import Settings
from yzos_jobs.db.connection import has_concurrent_writers
from yzos_jobs.inference.breaker import CircuitBreaker
from yzos_jobs.inference.contract import Judge


def default_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class JobContext:
    settings: Settings
    sessions: sessionmaker[Session]
    classifier: Judge
    owner: str = field(default_factory=default_owner)
    stop: threading.Event = field(default_factory=threading.Event)
    # Called with the number of items just finished (drives a progress bar on a terminal).
    progress: Callable[[int], None] | None = None
    # Called with the total amount of work when a job knows it.
    total: Callable[[int], None] | None = None
    # The job_runs row this work runs under (named in the decision trail); None outside a job.
    run_id: int | None = None
    # The run's circuit breaker: once the endpoint is taken for dead, the rest of the run fails
    # fast (set per run by the runner; None: each batch has one of its own).
    breaker: CircuitBreaker | None = None

    def advance(self, n: int) -> None:
        if self.progress is not None and n:
            self.progress(n)

    @property
    def concurrent_writers(self) -> bool:
        """Whether other processes may write the same rows at the same time (PostgreSQL)."""
        return has_concurrent_writers(self.sessions)
