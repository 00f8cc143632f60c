"""Chat calls to the configured model under this process's bounds: at most `max_concurrency`
requests in flight whoever asks (fewer where the server says it works on fewer at once:
`server_slots`), a reply cut by its token limit counted as invalid output, and a job run's
circuit breaker that stops asking after consecutive failures."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from yzos_jobs.inference import request_events
from yzos_jobs.inference.breaker import CircuitBreaker
from yzos_jobs.inference.client import build_client, chat, constraint_params
from yzos_jobs.inference.contract import ClassifierUsage, Completion, TokenCount
from yzos_jobs.inference.errors import (
    ClassifierError,
    LlmCircuitOpen,
    LlmFailed,
    LlmInvalidOutput,
    LlmStopped,
    LlmTimeout,
    LlmUnreachable,
)
from yzos_jobs.inference.profile import InferenceProfile
from yzos_jobs.inference.schema import Field
from yzos_jobs.inference.server_slots import server_slots
from yzos_jobs.redact import mask_url_credentials

if TYPE_CHECKING:
    from openai import OpenAI

    from yzos_jobs.inference.client import ChatReply


# How long the server's answer about its slots holds, and how soon to ask a server that gave none.
SLOTS_KEPT_S = 600.0
SLOTS_RETRY_S = 30.0


class BoundedChat:
    """The model's chat endpoint, shared by every caller of one classifier."""

    def __init__(
        self,
        profile: InferenceProfile,
        *,
        api_key: str | None = None,
        client: OpenAI | None = None,
        stopping: threading.Event | None = None,
    ) -> None:
        self.profile = profile
        self._api_key = api_key
        self._stopping = stopping
        self._client = client
        # A client handed in (a test's, a benchmark's) is taken as it is: no probe of its server
        self._ask_slots = client is None
        self._slots: threading.BoundedSemaphore | None = None
        self._sizing = threading.Lock()
        self._ask_again_at: float | None = None  # monotonic; None: not due
        self._known_slots: int | None = None  # the server's last count, where it gave one
        self._limit = profile.max_concurrency

    @property
    def client(self) -> OpenAI:
        """The OpenAI client, built (and the SDK imported) on first use."""
        if self._client is None:
            self._client = build_client(self.profile, self._api_key, self._stopping)
        return self._client

    @property
    def client_built(self) -> bool:
        return self._client is not None

    def in_flight_limit(self) -> threading.BoundedSemaphore:
        """The bound on this process's requests in flight: `max_concurrency`, or the server's
        parallel slots where it says it has fewer (`server_slots`). Asked at the first request
        (the callers wait for the answer), then again SLOTS_KEPT_S later (a server restarted
        with other slots), or SLOTS_RETRY_S later where the server did not answer (down, or
        still loading its model), by one caller while the others go on under the bound they
        know; a count once given holds until the server answers otherwise."""
        with self._sizing:
            first = self._slots is None
            due = self._ask_again_at is not None and time.monotonic() >= self._ask_again_at
            if not self._ask_slots or not (first or due):
                return self._bound()
            if first:
                self._settle(*self._ask_server())
                return self._bound()
            self._ask_again_at = None  # this caller asks; the others go on meanwhile
        answer: tuple[int | None, bool] = (None, False)
        try:
            answer = self._ask_server()
        finally:
            with self._sizing:
                self._settle(*answer)
        with self._sizing:
            return self._bound()

    def _ask_server(self) -> tuple[int | None, bool]:
        profile = self.profile
        return server_slots(profile.base_url, self._api_key, profile.timeout_s)

    def _settle(self, slots: int | None, answered: bool) -> None:
        """Set the bound from the server's answer (under `_sizing`)."""
        if answered:
            self._known_slots = slots
        self._ask_again_at = time.monotonic() + (SLOTS_KEPT_S if answered else SLOTS_RETRY_S)
        limit = min(self.profile.max_concurrency, self._known_slots or self.profile.max_concurrency)
        if self._slots is None or limit != self._limit:
            # requests in flight release the bound they took; new ones take this one
            self._slots = threading.BoundedSemaphore(limit)
            self._limit = limit

    def _bound(self) -> threading.BoundedSemaphore:
        if self._slots is None:
            self._slots = threading.BoundedSemaphore(self._limit)
        return self._slots

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        constraint: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        spent: Callable[[TokenCount | None], None] | None = None,
        breaker: CircuitBreaker | None = None,
    ) -> ChatReply:
        """One request; `spent` hears the tokens the server reported for it (None: none). With
        `breaker`, the request's outcome is recorded in it, and a request that waited for a free
        slot while the breaker opened is not sent (`LlmCircuitOpen`): the failures it would
        wait out have been seen. Once the process is stopping nothing is sent (`LlmStopped`),
        also by a request that waited for a free slot."""
        self._check_stopping()
        with self.in_flight_limit():  # requests in flight of this process, whoever asks
            self._check_stopping()
            if breaker is not None and breaker.open:
                raise self.circuit_open(breaker)
            try:
                reply = chat(
                    self.client,
                    self.profile,
                    messages,
                    constraint=constraint,
                    max_tokens=max_tokens,
                )
            except Exception as exc:
                # told before the slot is free: a request waiting for it sees the breaker open
                if breaker is not None:
                    breaker.record(exc if isinstance(exc, ClassifierError) else unexpected(exc))
                raise
            if breaker is not None:
                breaker.record(None)  # the endpoint answered
        # Counted before the reply is judged: a reply cut short or invalid cost its tokens too.
        if spent is not None:
            spent(reply.tokens)
        request_events.tokens_reported(reply.tokens)
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
    ) -> Completion:
        """One chat call constrained to `shape`, under the requests in flight of this process and
        the job run's circuit breaker. Returns the reply's text and what it cost; a reply cut by
        `max_tokens` is invalid output."""
        tokens: list[TokenCount | None] = []
        started = time.monotonic()
        try:
            constraint = constraint_params(self.profile, shape, shape.name)
            reply = self.chat(
                messages,
                constraint=constraint,
                max_tokens=max_tokens,
                spent=tokens.append,
                breaker=breaker,
            )
        except LlmCircuitOpen:
            raise self._not_asked(breaker) from None
        except LlmStopped as stopped:
            stopped.usage = ClassifierUsage()  # not asked, or cut short: no call, no failure
            raise
        except Exception as exc:
            error = exc if isinstance(exc, ClassifierError) else unexpected(exc)
            seconds = time.monotonic() - started
            request_events.request_done(request_events.outcome_of(error), seconds)
            error.usage = replace(_failed_usage(seconds, tokens, error), failures=1)
            raise error from None
        seconds = time.monotonic() - started
        request_events.request_done("ok", seconds)
        return Completion(reply.content, _usage(seconds, tokens[0] if tokens else None))

    def _check_stopping(self) -> None:
        if self._stopping is not None and self._stopping.is_set():
            where = mask_url_credentials(self.profile.base_url)
            raise LlmStopped(f"not asked {where}: stopping")

    def _not_asked(self, breaker: CircuitBreaker) -> LlmFailed:
        request_events.request_done("breaker_open", 0.0)
        refused = self.circuit_open(breaker)
        refused.usage = ClassifierUsage(failures=1)  # a failure, and no call made
        return refused

    def circuit_open(self, breaker: CircuitBreaker) -> LlmCircuitOpen:
        return LlmCircuitOpen(
            f"circuit open after {breaker.threshold} consecutive failures; not calling "
            f"{mask_url_credentials(self.profile.base_url)} again in this run"
        )


def _usage(seconds: float, tokens: TokenCount | None) -> ClassifierUsage:
    """What one answered call cost: its time, and its tokens when the server reported them."""
    if tokens is None:
        return ClassifierUsage(
            llm_calls=1, seconds=seconds, latencies_s=(seconds,), unknown_usage=1
        )
    return ClassifierUsage(
        llm_calls=1,
        seconds=seconds,
        latencies_s=(seconds,),
        prompt_tokens=tokens.prompt,
        completion_tokens=tokens.completion,
    )


def _failed_usage(
    seconds: float, tokens: list[TokenCount | None], error: ClassifierError
) -> ClassifierUsage:
    """What a failed call cost: a reply (cut short) its tokens; a request that timed out tokens
    unknown (the server may have spent them); one refused or failed otherwise, none; one that
    found no connection to send it on is no call (of the day's budget either)."""
    if isinstance(error, LlmUnreachable):
        return ClassifierUsage(seconds=seconds)
    if tokens or isinstance(error, LlmTimeout):
        return _usage(seconds, tokens[0] if tokens else None)
    return _usage(seconds, TokenCount(0, 0))


def unexpected(exc: Exception) -> LlmFailed:
    """An error no layer below anticipated, as one call's failure (a batch goes on)."""
    detail = mask_url_credentials(str(exc))[:200]
    return LlmFailed(f"unexpected {exc.__class__.__name__} while asking the model: {detail}")
