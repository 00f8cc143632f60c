"""Which model is active. DryRun has none: the classifier then answers without any network."""

from __future__ import annotations

from yzos_jobs.inference.profile import InferenceProfile, LlmBackend


class InferenceScheduler:
    def __init__(self, profile: InferenceProfile) -> None:
        self.profile = profile

    def active_model_id(self) -> str | None:
        if self.profile.llm_backend is LlmBackend.DRY_RUN:
            return None
        return self.profile.model
