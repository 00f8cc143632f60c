"""Chat calls to the configured model under this process's bounds: at most `max_concurrency`
requests in flight whoever asks, a reply cut by its token limit counted as invalid output, and a
job run's circuit breaker that stops asking after consecutive failures."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from yzos_jobs.inference.breaker import CircuitBreaker
from yzos_jobs.inference.client import build_client, chat, constraint_params
from yzos_jobs.inference.errors import ClassifierError, LlmFailed, LlmInvalidOutput
from yzos_jobs.inference.profile import InferenceProfile
from yzos_jobs.inference.schema import Field
from yzos_jobs.redact import mask_url_credentials

if TYPE_CHECKING:
    from openai import OpenAI

    from yzos_jobs.inference.client import ChatReply


class BoundedChat:
    """The model's chat endpoint, shared by every caller of one classifier."""

    def __init__(
        self, profile: InferenceProfile, *, api_key: str | None = None, client: OpenAI | None = None
    ) -> None:
        self.profile = profile
        self._api_key = api_key
        self._client = client
        self._slots = threading.BoundedSemaphore(profile.max_concurrency)

    @property
    def client(self) -> OpenAI:
        """The OpenAI client, built (and the SDK imported) on first use."""
        if self._client is None:
            self._client = build_client(self.profile, self._api_key)
        return self._client

    @property
    def client_built(self) -> bool:
        return self._client is not None

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        constraint: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> ChatReply:
        with self._slots:  # requests in flight of this process, whoever asks
            reply = chat(
                self.client, self.profile, messages, constraint=constraint, max_tokens=max_tokens
            )
        if reply.truncated:
            # Asking again would be cut the same way: a bounded reply either fits or it doesn't.
            limit = max_tokens or self.profile.max_tokens
            raise LlmInvalidOutput(f"reply cut at max_tokens = {limit}")
        return reply

    def complete(
        self,
        messages: list[dict[str, str]],
        shape: Field,
        max_tokens: int,
        breaker: CircuitBreaker,
    ) -> str:
        """One chat call constrained to `shape`, under the requests in flight of this process and
        the job run's circuit breaker. Returns the reply's text; a reply cut by `max_tokens` is
        invalid output."""
        if breaker.open:
            raise self.circuit_open(breaker)
        try:
            constraint = constraint_params(self.profile, shape, shape.name)
            reply = self.chat(messages, constraint=constraint, max_tokens=max_tokens)
        except Exception as exc:
            error = exc if isinstance(exc, ClassifierError) else unexpected(exc)
            breaker.record(error)
            raise error from None
        breaker.record(None)
        return reply.content

    def circuit_open(self, breaker: CircuitBreaker) -> LlmFailed:
        return LlmFailed(
            f"circuit open after {breaker.threshold} consecutive failures; not calling "
            f"{mask_url_credentials(self.profile.base_url)} again in this run"
        )


def unexpected(exc: Exception) -> LlmFailed:
    """An error no layer below anticipated, as one call's failure (a batch goes on)."""
    detail = mask_url_credentials(str(exc))[:200]
    return LlmFailed(f"unexpected {exc.__class__.__name__} while asking the model: {detail}")
