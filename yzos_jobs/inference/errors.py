"""Typed classifier failures; each call site decides what a failure means."""

from __future__ import annotations

from yzos_jobs.counters import Counters


class ClassifierError(Exception):
    """The classifier could not produce a verdict. `usage` is what the failed call cost where
    one was made: a reply cut short or not understood spent its tokens all the same, and they
    count toward the day's budget (a `ClassifierUsage`, which this module cannot name: the
    contract names these errors)."""

    usage: Counters | None = None


class LlmFailed(ClassifierError):
    """Transport or HTTP failure after the client's retries, or the circuit breaker is open."""


class LlmCircuitOpen(LlmFailed):
    """Not asked: the job run's circuit breaker opened (perhaps while the request waited for a
    free slot)."""


class LlmUnreachable(LlmFailed):
    """Not asked: no connection to the endpoint could be made (refused, no such host, no answer
    to the connect). Nothing was sent; the endpoint is down or not started yet."""


class LlmStopped(LlmFailed):
    """Not asked: the process is stopping. No verdict on anything, nor on the endpoint: what it
    was for waits for the next run."""


class LlmTimeout(ClassifierError):
    """The request did not finish within llm.timeout_s."""


class LlmInvalidOutput(ClassifierError):
    """The reply was not a valid verdict, even after one re-ask."""


class LlmRefused(LlmInvalidOutput):
    """The model refused to answer."""


def error_type(exc: ClassifierError) -> str:
    """The type a failure is told as outside (`classify`'s JSON): one of the three the design
    names, whichever finer type stands behind it (refused, unreachable, breaker open)."""
    for told in (LlmFailed, LlmTimeout, LlmInvalidOutput):
        if isinstance(exc, told):
            return told.__name__
    return exc.__class__.__name__
