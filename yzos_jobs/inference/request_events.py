"""What the LLM requests of this process did, told to whoever listens (the daemon's metrics).

Process-wide on purpose: metrics are per process, and the classifier should not need to know
who counts. With no listener (every one-shot command) an event costs one empty loop.
"""

from __future__ import annotations

import threading
from typing import Literal, Protocol

from yzos_jobs.inference.contract import TokenCount
from yzos_jobs.inference.errors import ClassifierError, LlmInvalidOutput, LlmTimeout

# ok: answered with a verdict or a reply; invalid: answered, but nothing usable (a refusal
# included); timeout, failed: no answer; breaker_open: not asked, the endpoint taken for dead.
Outcome = Literal["ok", "invalid", "timeout", "failed", "breaker_open"]
OUTCOMES: tuple[Outcome, ...] = ("ok", "invalid", "timeout", "failed", "breaker_open")


class RequestListener(Protocol):
    def request_done(self, outcome: Outcome, seconds: float) -> None: ...

    def tokens_reported(self, tokens: TokenCount | None) -> None: ...

    def cache_hits(self, n: int) -> None: ...


_listeners: list[RequestListener] = []
_lock = threading.Lock()


def subscribe(listener: RequestListener) -> None:
    with _lock:
        _listeners.append(listener)


def unsubscribe(listener: RequestListener) -> None:
    with _lock:
        if listener in _listeners:
            _listeners.remove(listener)


def outcome_of(error: ClassifierError | None) -> Outcome:
    if error is None:
        return "ok"
    if isinstance(error, LlmInvalidOutput):
        return "invalid"
    if isinstance(error, LlmTimeout):
        return "timeout"
    return "failed"


def request_done(outcome: Outcome, seconds: float) -> None:
    for listener in tuple(_listeners):
        listener.request_done(outcome, seconds)


def tokens_reported(tokens: TokenCount | None) -> None:
    for listener in tuple(_listeners):
        listener.tokens_reported(tokens)


def cache_hits(n: int) -> None:
    if n:
        for listener in tuple(_listeners):
            listener.cache_hits(n)
