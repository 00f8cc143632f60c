"""The one semantic judge: is a candidate a real person, project or task, or an app, or noise?

Every promote and re-judge path goes through `Classifier.classify` / `classify_many`. This module
is the engine that asks: identical inputs asked once, cached verdicts served, the rest on a pool of
`max_concurrency` workers under the job run's circuit breaker, with one re-ask on an invalid reply.
What is asked and how a reply is read is `entity/verdict_prompt.py`; the chat calls themselves are
`inference/bounded_chat.py`. It never touches the database itself (the verdict cache and the app
metadata lookup are handed in).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from yzos_jobs.entity.verdict_prompt import (
    REASK,
    REASK_ECHO_CHARS,
    Prompt,
    build_prompt,
    dry_run_verdict,
    enforce_invariants,
    input_hash,
    parse_verdict,
    prompt_for,
)
from yzos_jobs.inference import request_events
from yzos_jobs.inference.bounded_chat import BoundedChat, unexpected
from yzos_jobs.inference.breaker import CircuitBreaker
from yzos_jobs.inference.contract import (
    AppMetadata,
    Classified,
    ClassifierUsage,
    ClassifyInput,
    ClassifyOutcome,
    ClassifyVerdict,
    CorrectionExample,
    TokenCount,
    VerdictSource,
    VerdictStore,
)
from yzos_jobs.inference.errors import (
    ClassifierError,
    LlmCircuitOpen,
    LlmFailed,
    LlmInvalidOutput,
    LlmRefused,
    LlmStopped,
    LlmTimeout,
    LlmUnreachable,
)
from yzos_jobs.inference.profile import InferenceProfile
from yzos_jobs.inference.scheduler import InferenceScheduler

if TYPE_CHECKING:
    from openai import OpenAI

    from yzos_jobs.inference.client import ChatReply

__all__ = [
    "AppMetadata",
    "Classified",
    "Classifier",
    "ClassifierError",
    "ClassifierUsage",
    "ClassifyInput",
    "ClassifyOutcome",
    "ClassifyVerdict",
    "CorrectionExample",
    "LlmFailed",
    "LlmInvalidOutput",
    "LlmTimeout",
]


AppLookup = Callable[[Sequence[str]], Mapping[str, AppMetadata]]
# The user corrections in force, in the order the prompt shows them (read once per batch).
CorrectionLookup = Callable[[], Sequence[CorrectionExample]]
_T = TypeVar("_T")
_Result = tuple[ClassifyVerdict | None, ClassifierError | None, VerdictSource]


class _Tally:
    """Counts one classify_many call's work across its worker threads."""

    def __init__(self) -> None:
        self.llm_calls = 0
        self.failures = 0
        self.latencies: list[float] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.unknown_usage = 0
        self._lock = threading.Lock()

    def call(self) -> None:
        with self._lock:
            self.llm_calls += 1

    def spent(self, tokens: TokenCount | None) -> None:
        """A reply's tokens, as the server reported them (None: it reported none)."""
        with self._lock:
            if tokens is None:
                self.unknown_usage += 1
            else:
                self.prompt_tokens += tokens.prompt
                self.completion_tokens += tokens.completion

    def usage(self) -> ClassifierUsage:
        return ClassifierUsage(
            llm_calls=self.llm_calls,
            failures=self.failures,
            latencies_s=tuple(self.latencies),
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            unknown_usage=self.unknown_usage,
        )

    def done(self, seconds: float, failed: bool) -> None:
        with self._lock:
            self.latencies.append(seconds)
            self.failures += failed


class Classifier:
    def __init__(
        self,
        profile: InferenceProfile,
        *,
        api_key: str | None = None,
        cache: VerdictStore | None = None,
        app_lookup: AppLookup | None = None,
        client: OpenAI | None = None,
        corrections: CorrectionLookup | None = None,
        stopping: threading.Event | None = None,
    ) -> None:
        """`stopping`: set when the process stops, after which no new request goes out (the
        client's retries of a call in flight included)."""
        self.profile = profile
        self.scheduler = InferenceScheduler(profile)
        self.cache = cache
        self.app_lookup = app_lookup
        self.corrections = corrections
        self._prompt_memo: tuple[tuple[CorrectionExample, ...], Prompt] | None = None
        self.chat = BoundedChat(profile, api_key=api_key, client=client, stopping=stopping)
        self._executor: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    @property
    def client(self) -> OpenAI:
        return self.chat.client

    def active_model_id(self) -> str | None:
        """The model that judges; None under DryRun (no network at all)."""
        return self.scheduler.active_model_id()

    def classify(self, inp: ClassifyInput) -> ClassifyVerdict:
        outcome = self.classify_many([inp]).outcomes[0]
        if outcome.error is not None:
            raise outcome.error
        assert outcome.verdict is not None
        return outcome.verdict

    def classify_many(
        self, inputs: Sequence[ClassifyInput], breaker: CircuitBreaker | None = None
    ) -> Classified:
        """Judge a batch and wait for it (see `submit_many`)."""
        return self.submit_many(inputs, breaker).result()

    def submit_many(
        self, inputs: Sequence[ClassifyInput], breaker: CircuitBreaker | None = None
    ) -> Future[Classified]:
        """Start judging a batch: identical inputs asked once, cached verdicts served, the rest
        queued on this classifier's pool of `max_concurrency` workers, behind the batches
        submitted before. The future holds every input's outcome, in order, with what it cost.
        `breaker`: the job run's circuit breaker (a batch of its own when none is given)."""
        started = time.monotonic()
        model_id = self.scheduler.active_model_id()
        if model_id is None:
            done: Future[Classified] = Future()
            outcomes = [ClassifyOutcome(dry_run_verdict(i), None, "dry_run", None) for i in inputs]
            usage = ClassifierUsage(seconds=time.monotonic() - started)
            done.set_result(Classified(outcomes, usage))
            return done
        inputs = self._with_app_metadata(inputs)
        prompt = self.prompt()
        hashes = [input_hash(i, self.profile.context_chars) for i in inputs]
        distinct = dict(zip(reversed(hashes), reversed(inputs), strict=True))
        cached = self._cached(model_id, prompt.version, distinct)
        batch = _Batch(self, model_id, prompt, hashes, distinct, cached, started)
        batch.start(breaker or self.new_breaker())
        return batch.future

    def _pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=self.profile.max_concurrency, thread_name_prefix="classify"
                )
            return self._executor

    def new_breaker(self) -> CircuitBreaker:
        return CircuitBreaker(self.profile.breaker_threshold)

    @property
    def replies(self) -> VerdictStore | None:
        return self.cache

    def prompt(self) -> Prompt:
        """The prompt in force: the built-in one and the user corrections read for this batch."""
        examples = tuple(self.corrections()) if self.corrections is not None else ()
        memo = self._prompt_memo
        if memo is None or memo[0] != examples:
            memo = self._prompt_memo = (examples, prompt_for(examples))
        return memo[1]

    def cache_keys(self, inputs: Sequence[ClassifyInput]) -> list[str]:
        """The verdict cache key of each input, as classify_many computes it."""
        ctx = self.profile.context_chars
        return [input_hash(i, ctx) for i in self._with_app_metadata(inputs)]

    def _cached(
        self, model_id: str, version: str, distinct: Mapping[str, ClassifyInput]
    ) -> dict[str, _Result]:
        results: dict[str, _Result] = {}
        if self.cache is None or not distinct:
            return results
        for h, raw in self.cache.get_many(model_id, version, distinct).items():
            try:
                verdict = enforce_invariants(ClassifyVerdict.model_validate(raw))
            except (ValidationError, LlmInvalidOutput):
                continue  # a stale or damaged entry is simply asked again
            results[h] = (verdict, None, "cache")
        return results

    def _with_app_metadata(self, inputs: Sequence[ClassifyInput]) -> list[ClassifyInput]:
        wanted = sorted({i.app_bundle_id for i in inputs if i.app_bundle_id and not i.app_metadata})
        if not wanted or self.app_lookup is None:
            return list(inputs)
        known = self.app_lookup(wanted)
        return [
            replace(i, app_metadata=known[i.app_bundle_id])
            if i.app_bundle_id and not i.app_metadata and i.app_bundle_id in known
            else i
            for i in inputs
        ]

    def _ask(
        self, inp: ClassifyInput, breaker: CircuitBreaker, tally: _Tally, system: str
    ) -> tuple[ClassifyVerdict | None, ClassifierError | None]:
        started = time.monotonic()
        try:
            verdict = self._ask_with_reask(inp, breaker, tally, system)
        except LlmCircuitOpen as refused:  # open before this input was sent: none was
            tally.done(0.0, failed=True)
            request_events.request_done("breaker_open", 0.0)
            return None, refused
        except LlmStopped as stopped:  # the process is stopping: no failure of the model's
            return None, stopped
        except Exception as exc:  # whatever went wrong is this input's outcome, not the batch's
            error = exc if isinstance(exc, ClassifierError) else unexpected(exc)
            tally.done(_since(started), failed=True)
            request_events.request_done(request_events.outcome_of(error), _since(started))
            return None, error
        tally.done(_since(started), failed=False)
        request_events.request_done("ok", _since(started))
        return verdict, None

    def _ask_with_reask(
        self, inp: ClassifyInput, breaker: CircuitBreaker, tally: _Tally, system: str
    ) -> ClassifyVerdict:
        messages = build_prompt(inp, self.profile.context_chars, system)
        reply = self._send(messages, breaker, tally)
        try:
            return parse_verdict(reply.content)
        except LlmRefused:
            raise
        except LlmInvalidOutput as first:
            messages += [
                {"role": "assistant", "content": reply.content[:REASK_ECHO_CHARS]},
                {"role": "user", "content": REASK.format(error=first)},
            ]
            try:
                second = self._send(messages, breaker, tally)
            except LlmCircuitOpen:
                raise first from None  # the re-ask was not sent: the reply stands as it was
            try:
                return parse_verdict(second.content)
            except LlmInvalidOutput as exc:
                raise LlmInvalidOutput(f"invalid output after one re-ask: {exc}") from None

    def _send(
        self, messages: list[dict[str, str]], breaker: CircuitBreaker, tally: _Tally
    ) -> ChatReply:
        """One request, counted as a call unless the breaker, the stop or no connection to
        the endpoint kept it from being sent (a stop may also cut short a call in flight: what
        it cost is unknown)."""
        try:
            reply = self.chat.chat(messages, spent=tally.spent, breaker=breaker)
        except (LlmCircuitOpen, LlmStopped, LlmUnreachable):
            raise
        except Exception:
            tally.call()
            raise
        tally.call()
        return reply


class _Batch:
    """One submitted batch: its misses run on the classifier's pool; the worker that answers the
    last one stores the fresh verdicts and completes the future."""

    def __init__(
        self,
        classifier: Classifier,
        model_id: str,
        prompt: Prompt,
        hashes: list[str],
        distinct: dict[str, ClassifyInput],
        results: dict[str, _Result],
        started: float,
    ) -> None:
        self.classifier, self.model_id, self.prompt = classifier, model_id, prompt
        self.hashes, self.distinct, self.results = hashes, distinct, results
        self.cache_hits = len(results)
        self.misses = [h for h in dict.fromkeys(hashes) if h not in results]
        self.started = started
        self.tally = _Tally()
        self.latencies: dict[str, int] = {}
        self.future: Future[Classified] = Future()
        self._left = len(self.misses)
        self._lock = threading.Lock()

    def start(self, breaker: CircuitBreaker) -> None:
        if not self.misses:
            self._finish()
            return
        pool = self.classifier._pool()
        for key in self.misses:
            pool.submit(self._one, key, breaker)

    def _one(self, key: str, breaker: CircuitBreaker) -> None:
        ask, system = self.classifier._ask, self.prompt.system
        try:
            (verdict, error), ms = _timed(ask, self.distinct[key], breaker, self.tally, system)
        except Exception as exc:  # this input's outcome, never the pool's
            (verdict, error), ms = (None, unexpected(exc)), 0
        with self._lock:
            self.results[key] = (verdict, error, "llm")
            self.latencies[key] = ms
            self._left -= 1
            last = self._left == 0
        if last:
            self._finish()

    def _finish(self) -> None:
        try:
            self.future.set_result(self._classified())
        except Exception as exc:  # the cache write failed: the batch's caller sees why
            self.future.set_exception(exc)

    def _classified(self) -> Classified:
        fresh = {
            h: verdict.model_dump()
            for h in self.misses
            if (verdict := self.results[h][0]) is not None
        }
        cache = self.classifier.cache
        if cache is not None and fresh:
            cache.put_many(self.model_id, self.prompt.version, fresh)
        outcomes = []
        for h in self.hashes:
            verdict, error, source = self.results[h]
            outcomes.append(
                ClassifyOutcome(
                    verdict,
                    error,
                    source if error is None else None,
                    self.model_id,
                    self.prompt.version,
                    self.latencies.get(h),
                )
            )
        request_events.cache_hits(self.cache_hits)
        usage = replace(
            self.tally.usage(),
            cache_hits=self.cache_hits,
            deduplicated=len(self.hashes) - len(self.distinct),
            seconds=time.monotonic() - self.started,
        )
        return Classified(outcomes, usage)


def _since(started: float) -> float:
    return time.monotonic() - started


def _timed(fn: Callable[..., _T], *args: Any) -> tuple[_T, int]:
    """fn(*args) and how long it took, in milliseconds."""
    started = time.monotonic()
    result = fn(*args)
    return result, round((time.monotonic() - started) * 1000)
