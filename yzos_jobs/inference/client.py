"""The OpenAI-compatible chat client: one request with the configured output constraint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yzos_jobs.inference.errors import LlmFailed, LlmRefused, LlmTimeout
from yzos_jobs.inference.profile import InferenceProfile
from yzos_jobs.inference.schema import response_format, verdict_gbnf

if TYPE_CHECKING:
    from openai import OpenAI

# `openai` is imported on first use: commands that never call an LLM start faster without it.

# Local servers accept any key; the SDK insists on one.
_PLACEHOLDER_KEY = "no-key"


def build_client(profile: InferenceProfile, api_key: str | None) -> OpenAI:
    from openai import OpenAI

    return OpenAI(
        base_url=profile.base_url,
        api_key=api_key or _PLACEHOLDER_KEY,
        timeout=profile.timeout_s,
        max_retries=profile.max_retries,
    )


@dataclass(frozen=True)
class ChatReply:
    content: str
    model: str


def constraint_params(constraint: str) -> dict[str, Any]:
    """Request fields for the output constraint. llama.cpp refuses a grammar plus a schema."""
    if constraint == "grammar":
        return {"extra_body": {"grammar": verdict_gbnf(), "cache_prompt": True}}
    return {"response_format": response_format()}


def chat(client: OpenAI, profile: InferenceProfile, messages: list[dict[str, str]]) -> ChatReply:
    """One chat completion; transport and HTTP failures become typed classifier errors."""
    import openai

    try:
        completion = client.chat.completions.create(
            model=profile.model,
            messages=messages,  # type: ignore[arg-type]
            temperature=0,
            **constraint_params(profile.constraint),
        )
    except openai.APITimeoutError:
        raise LlmTimeout(f"no answer from {profile.base_url} within {profile.timeout_s}s") from None
    except openai.APIConnectionError as exc:
        raise LlmFailed(f"cannot reach {profile.base_url}: {_cause(exc)}") from None
    except openai.APIStatusError as exc:
        raise LlmFailed(f"HTTP {exc.status_code} from {profile.base_url}") from None
    except openai.OpenAIError as exc:
        raise LlmFailed(f"{exc.__class__.__name__} from {profile.base_url}") from None
    if not completion.choices:
        raise LlmFailed(f"reply from {profile.base_url} has no choices")
    message = completion.choices[0].message
    refusal = getattr(message, "refusal", None)
    if refusal:
        raise LlmRefused(f"model refused: {refusal[:200]}")
    return ChatReply(content=message.content or "", model=completion.model or profile.model)


def _cause(exc: BaseException) -> str:
    root: BaseException = exc
    while root.__cause__ is not None:
        root = root.__cause__
    return str(root) or root.__class__.__name__
