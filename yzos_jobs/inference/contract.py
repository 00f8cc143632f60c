"""The classifier's contract types: what it is asked, what it answers, what a batch cost.

They live below the classifier so that observers, the job context and the database layer can
speak of them without importing the judge; `entity/classifier.py` re-exports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from yzos_jobs.counters import Counters
from yzos_jobs.inference.breaker import CircuitBreaker
from yzos_jobs.inference.errors import ClassifierError
from yzos_jobs.inference.schema import Field
from yzos_jobs.kinds import VerdictKind


@dataclass(frozen=True)
class AppMetadata:
    bundle_id: str  # com.tdesktop.Telegram
    bundle_name: str | None = None  # Info.plist CFBundleName
    # LSApplicationCategoryType, e.g. public.app-category.social-networking
    category: str | None = None


@dataclass(frozen=True)
class ClassifyInput:
    raw_text: str  # display_name / hypothesized name to judge
    source_kind: str  # cron | llm_triage | clipboard | ai_tool | window_title | ...
    source_id: str  # candidate id / session id
    suggested_kind: str | None = None  # project | task | person, proposed upstream
    app_bundle_id: str | None = None
    app_metadata: AppMetadata | None = None  # looked up from app_metadata when only the id is known
    surrounding_text: str | None = None  # context for the judge


class ClassifyVerdict(BaseModel):
    """The verdict, and the JSON object the model must return."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    is_real_entity: bool
    kind: VerdictKind | None
    display_name: str | None
    confidence: float
    reason: str


VerdictSource = Literal["llm", "cache", "dry_run"]


@dataclass(frozen=True)
class ClassifyOutcome:
    """One input's result in a batch: a verdict, or the error that stands in for it."""

    verdict: ClassifyVerdict | None
    error: ClassifierError | None
    source: VerdictSource | None
    model_id: str | None
    # The prompt version the verdict was asked (or cached) under, and how long asking took.
    prompt_version: str | None = None
    latency_ms: int | None = None


@dataclass(frozen=True)
class CorrectionExample:
    """A user's correction, shown to the judge as a worked example: what was observed (as the
    judge saw it) and the verdict the user gave."""

    raw_text: str
    suggested_kind: str | None
    surrounding_text: str | None
    verdict: ClassifyVerdict


@dataclass(frozen=True)
class ClassifierUsage(Counters):
    """What one or more classify_many calls cost; summed with `+`; `counts` is what a job run
    records of it."""

    llm_calls: int = 0
    cache_hits: int = 0
    deduplicated: int = 0
    failures: int = 0
    seconds: float = 0.0
    latencies_s: tuple[float, ...] = field(default=(), repr=False)

    def counts(self) -> dict[str, int]:
        return {"llm_calls": self.llm_calls, "cache_hits": self.cache_hits}


@dataclass(frozen=True)
class Classified:
    """A batch's outcomes, in input order, and what producing them cost."""

    outcomes: list[ClassifyOutcome]
    usage: ClassifierUsage


class VerdictStore(Protocol):
    """Cached model replies keyed by (model id, prompt version, input hash), with a TTL."""

    def get_many(
        self, model_id: str, prompt_version: str, hashes: Iterable[str]
    ) -> dict[str, dict[str, Any]]: ...

    def put_many(
        self, model_id: str, prompt_version: str, verdicts: Mapping[str, dict[str, Any]]
    ) -> None: ...


class Judge(Protocol):
    """What jobs need of the classifier (entity/classifier.py's `Classifier` is the one)."""

    def active_model_id(self) -> str | None: ...

    def classify(self, inp: ClassifyInput) -> ClassifyVerdict: ...

    def classify_many(
        self, inputs: Sequence[ClassifyInput], breaker: CircuitBreaker | None = None
    ) -> Classified: ...

    def submit_many(
        self, inputs: Sequence[ClassifyInput], breaker: CircuitBreaker | None = None
    ) -> Future[Classified]: ...

    def new_breaker(self) -> CircuitBreaker: ...

    def complete(
        self,
        messages: list[dict[str, str]],
        shape: Field,
        max_tokens: int,
        breaker: CircuitBreaker,
    ) -> str: ...

    @property
    def replies(self) -> VerdictStore | None:
        """The cache of model replies (verdicts, triage replies), when there is one."""
        ...
