"""Typed classifier failures; each call site decides what a failure means."""


class ClassifierError(Exception):
    """The classifier could not produce a verdict."""


class LlmFailed(ClassifierError):
    """Transport or HTTP failure after the client's retries, or the circuit breaker is open."""


class LlmTimeout(ClassifierError):
    """The request did not finish within llm.timeout_s."""


class LlmInvalidOutput(ClassifierError):
    """The reply was not a valid verdict, even after one re-ask."""


class LlmRefused(LlmInvalidOutput):
    """The model refused to answer."""
