"""The circuit breaker: after `threshold` consecutive transport failures the endpoint is taken
for dead and the rest of the job run fails fast instead of paying the timeout per request."""

from __future__ import annotations

import threading

from yzos_jobs.inference.errors import ClassifierError, LlmInvalidOutput, LlmStopped


class CircuitBreaker:
    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        self.consecutive = 0
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return self.consecutive >= self.threshold

    def record(self, error: ClassifierError | None) -> None:
        if isinstance(error, LlmStopped):
            return  # not asked: nothing is known of the endpoint
        with self._lock:
            if error is None or isinstance(error, LlmInvalidOutput):
                self.consecutive = 0  # the endpoint answered
            else:
                self.consecutive += 1
