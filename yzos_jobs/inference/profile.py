"""The inference profile: which backend judges candidates, and how it is reached."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from yzos_jobs.config import LlmSettings


class LlmBackend(StrEnum):
    DRY_RUN = "dry_run"
    OPENAI = "openai"


@dataclass(frozen=True)
class InferenceProfile:
    llm_backend: LlmBackend = LlmBackend.DRY_RUN
    base_url: str = "http://127.0.0.1:8080/v1"
    model: str = "dry-run"
    constraint: str = "json_schema"
    timeout_s: float = 120.0
    max_retries: int = 2
    max_concurrency: int = 8
    context_chars: int = 600
    cache_ttl_s: int = 7 * 24 * 3600
    breaker_threshold: int = 3
    max_tokens: int = 384  # a reply cut by it is invalid output
    schema_string_bounds: bool = False  # send the field lengths as maxLength in the schema

    @classmethod
    def from_settings(cls, llm: LlmSettings) -> InferenceProfile:
        return cls(
            llm_backend=LlmBackend(llm.backend),
            base_url=llm.base_url,
            model=llm.model,
            constraint=llm.constraint,
            timeout_s=llm.timeout_s,
            max_retries=llm.max_retries,
            max_concurrency=llm.max_concurrency,
            context_chars=llm.context_chars,
            cache_ttl_s=llm.cache_ttl_s,
            breaker_threshold=llm.breaker_threshold,
            max_tokens=llm.max_tokens,
            schema_string_bounds=llm.schema_string_bounds,
        )
