"""Build a classifier that talks to a loopback OpenAI-protocol double through the real client."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.db.apps import lookup_app_metadata
from yzos_jobs.db.verdict_cache import VerdictCache
from yzos_jobs.entity.classifier import Classifier
from yzos_jobs.inference.profile import InferenceProfile, LlmBackend

PROFILE = InferenceProfile(
    llm_backend=LlmBackend.OPENAI,
    model="double-7b",
    timeout_s=5.0,
    max_retries=0,
    max_concurrency=4,
    breaker_threshold=3,
)


def profile_for(base_url: str, **changes: object) -> InferenceProfile:
    return replace(PROFILE, base_url=base_url, **changes)  # type: ignore[arg-type]


def make_classifier(
    base_url: str,
    sessions: sessionmaker[Session] | None = None,
    api_key: str | None = None,
    **changes: object,
) -> Classifier:
    profile = profile_for(base_url, **changes)
    return Classifier(
        profile,
        api_key=api_key,
        cache=VerdictCache(sessions, profile.cache_ttl_s) if sessions else None,
        app_lookup=(lambda ids: lookup_app_metadata(sessions, ids)) if sessions else None,
    )
