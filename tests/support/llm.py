"""Build a classifier that talks to a loopback OpenAI-protocol double through the real client,
wired exactly as the product wires it (runtime.build_classifier)."""

from __future__ import annotations

import os
import uuid
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.config import Settings
from yzos_jobs.entity.classifier import Classifier
from yzos_jobs.runtime import build_classifier

LLM_DEFAULTS: dict[str, Any] = {
    "backend": "openai",
    "model": "double-7b",
    "timeout_s": 5.0,
    "max_retries": 0,
    "max_concurrency": 4,
    "breaker_threshold": 3,
}


def make_classifier(
    base_url: str,
    sessions: sessionmaker[Session] | None = None,
    api_key: str | None = None,
    **llm: Any,
) -> Classifier:
    """`llm` holds [llm] settings keys (constraint, timeout_s, max_concurrency, …)."""
    section = {**LLM_DEFAULTS, "base_url": base_url, **llm}
    if api_key is not None:
        # The key reaches the classifier the way a user's does: through the variable named.
        variable = f"YZOS_TEST_KEY_{uuid.uuid4().hex[:8].upper()}"
        os.environ[variable] = api_key
        section["api_key_env"] = variable
    return build_classifier(Settings.model_validate({"llm": section}), sessions)
