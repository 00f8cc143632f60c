"""Wiring: builds the long-lived objects (engine, sessions, classifier) from the settings once."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.config import Settings
from yzos_jobs.db.apps import lookup_app_metadata
from yzos_jobs.db.verdict_cache import VerdictCache
from yzos_jobs.entity.classifier import Classifier
from yzos_jobs.inference.contract import AppMetadata
from yzos_jobs.inference.profile import InferenceProfile


def build_classifier(
    settings: Settings,
    sessions: sessionmaker[Session] | None,
    *,
    use_cache: bool = True,
    stopping: threading.Event | None = None,
) -> Classifier:
    profile = InferenceProfile.from_settings(settings.llm)

    def app_lookup(bundle_ids: Sequence[str]) -> Mapping[str, AppMetadata]:
        assert sessions is not None
        return lookup_app_metadata(sessions, bundle_ids)

    # Loaded here, not at start-up: the correction machinery is only needed once a judge is.
    from yzos_jobs.entity.corrections import correction_lookup

    return Classifier(
        profile,
        api_key=settings.llm_api_key(),
        cache=VerdictCache(sessions, profile.cache_ttl_s) if sessions and use_cache else None,
        app_lookup=app_lookup if sessions else None,
        corrections=correction_lookup(sessions, settings.llm.max_correction_examples)
        if sessions
        else None,
        stopping=stopping,
    )
