"""What a job needs, handed down once: settings, sessions, classifier, identity, stop flag."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.config import Settings
from yzos_jobs.entity.classifier import Classifier


def default_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class JobContext:
    settings: Settings
    sessions: sessionmaker[Session]
    classifier: Classifier
    owner: str = field(default_factory=default_owner)
    stop: threading.Event = field(default_factory=threading.Event)
    # Called with the number of items just finished (drives a progress bar on a terminal).
    progress: Callable[[int], None] | None = None
    # Called with the total amount of work when a job knows it.
    total: Callable[[int], None] | None = None

    def advance(self, n: int) -> None:
        if self.progress is not None and n:
            self.progress(n)
