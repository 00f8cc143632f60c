"""The OpenAI-compatible chat client: one request with the configured output constraint.

Whatever the server sends, `chat` returns a `ChatReply` or raises a typed classifier error: an
HTTP 200 whose body is HTML, a JSON array or JSON nested beyond reason is `LlmFailed`, never a
traceback. Each HTTP request ends within `timeout_s` (a total deadline, see `deadline.py`), and
the URL's credentials are masked in every message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yzos_jobs.inference.contract import TokenCount
from yzos_jobs.inference.errors import (
    LlmFailed,
    LlmRefused,
    LlmStopped,
    LlmTimeout,
    LlmUnreachable,
)
from yzos_jobs.inference.fields import clean_model_text
from yzos_jobs.inference.profile import InferenceProfile
from yzos_jobs.inference.schema import VERDICT, Field, gbnf, response_format_for, verdict_gbnf
from yzos_jobs.redact import mask_url_credentials

if TYPE_CHECKING:
    import threading

    from openai import OpenAI

# `openai` is imported on first use: commands that never call an LLM start faster without it.

# Local servers accept any key; the SDK insists on one.
_PLACEHOLDER_KEY = "no-key"
_REFUSAL_CHARS = 200
# A chat reply is a few hundred tokens of JSON (`llm.max_tokens`, `triage.max_tokens`) in an
# envelope; one past this is no reply the request asked for, and is not read into memory.
MAX_REPLY_BYTES = 4 * 2**20


def build_client(
    profile: InferenceProfile, api_key: str | None, stopping: threading.Event | None = None
) -> OpenAI:
    """The OpenAI client of `profile`, whose requests end at `llm.timeout_s` each and make no
    new request once `stopping` is set."""
    from openai import DefaultHttpxClient, OpenAI

    from yzos_jobs.inference.deadline import DeadlineTransport, proxy_for

    transport = DeadlineTransport(
        profile.timeout_s,
        max_connections=profile.max_concurrency,
        proxy=proxy_for(profile.base_url),
        max_body_bytes=MAX_REPLY_BYTES,
        stopping=stopping,
    )
    return OpenAI(
        base_url=profile.base_url,
        api_key=api_key or _PLACEHOLDER_KEY,
        timeout=profile.timeout_s,
        max_retries=profile.max_retries,
        http_client=DefaultHttpxClient(transport=transport, timeout=profile.timeout_s),
    )


@dataclass(frozen=True)
class ChatReply:
    content: str
    model: str
    # "length" when the reply was cut by max_tokens.
    finish_reason: str | None = None
    # The tokens the server says the request took; None when its reply carried no usage.
    tokens: TokenCount | None = None

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


def constraint_params(
    profile: InferenceProfile, shape: Field = VERDICT, name: str = "classify_verdict"
) -> dict[str, Any]:
    """Request fields that constrain the reply to `shape` (the verdict unless given): a GBNF
    grammar or a strict JSON schema. llama.cpp refuses a grammar plus a schema."""
    if profile.constraint == "grammar":
        grammar = verdict_gbnf() if shape is VERDICT else gbnf(shape)
        return {"grammar": grammar, "cache_prompt": True}
    return {"response_format": response_format_for(name, shape, profile.schema_string_bounds)}


def chat(
    client: OpenAI,
    profile: InferenceProfile,
    messages: list[dict[str, str]],
    *,
    constraint: dict[str, Any] | None = None,
    max_tokens: int | None = None,
) -> ChatReply:
    """One chat completion; transport and HTTP failures become typed classifier errors. The
    output constraint and token limit are the verdict's unless given."""
    import openai

    from yzos_jobs.inference.bounded_body import ReplyUnread
    from yzos_jobs.inference.deadline import NOT_SERVING, Stopping, served_tally

    where = mask_url_credentials(profile.base_url)
    # Unreachable only where no try of the call (the client retries) reached a model: a request
    # that was sent and crashed the server, whose retry then found it down, was asked.
    with served_tally() as served:
        try:
            fields = constraint if constraint is not None else constraint_params(profile)
            raw = client.chat.completions.with_raw_response.create(
                model=profile.model,
                # The SDK walks every typed parameter against its type annotations on each request
                # (about a millisecond of CPU for these messages and schemas, changing nothing on
                # them): the messages and the output constraint go as `extra_body`, which is sent
                # as it is — the same JSON on the wire.
                messages=[],
                temperature=0,
                max_tokens=max_tokens or profile.max_tokens,
                extra_body={"messages": messages, **fields},
            )
            body = raw.http_response.text
        except openai.APITimeoutError as exc:
            if not served.reached and _connect_failed(exc):
                raise LlmUnreachable(f"cannot reach {where}: {_cause(exc)}") from None
            raise LlmTimeout(
                f"no answer from {where} within {profile.timeout_s}s (llm.timeout_s)"
            ) from None
        except openai.APIConnectionError as exc:
            if isinstance(exc.__cause__, Stopping):
                raise LlmStopped(f"not asked {where}: stopping") from None
            if not served.reached and _connect_failed(exc):
                raise LlmUnreachable(f"cannot reach {where}: {_cause(exc)}") from None
            raise LlmFailed(f"cannot reach {where}: {_cause(exc)}") from None
        except openai.APIStatusError as exc:
            if not served.reached and exc.status_code in NOT_SERVING:
                # llama-server loading its model, or a gateway with none behind it
                raise LlmUnreachable(f"HTTP {exc.status_code} from {where}: not serving") from None
            raise LlmFailed(f"HTTP {exc.status_code} from {where}") from None
        except ReplyUnread as exc:  # too large, or compressed
            raise LlmFailed(f"{exc} from {where}") from None
        except openai.OpenAIError as exc:
            raise LlmFailed(f"{exc.__class__.__name__} from {where}") from None
    return parse_completion(body, profile.model, where, secret=client.api_key)


# A key shorter than this is no secret worth the search (a placeholder, a local server's "x").
_MIN_KEY_CHARS = 8


def _masking(secret: str | None) -> Callable[[str], str]:
    """What masks the API key wherever a server wrote it back into a reply's text (a proxy or
    a server that echoes the request's headers): what the model writes is shown, logged, stored
    and cached, and the key must be none of those. Applied to the decoded strings, however the
    JSON escaped them, the reply's and those of the JSON the model wrote (a verdict, a triage)."""
    if not secret or secret == _PLACEHOLDER_KEY or len(secret) < _MIN_KEY_CHARS:
        return lambda text: text
    return lambda text: _without(text.replace(secret, "***"), secret)


def _without(text: str, secret: str) -> str:
    """`text` with the key masked in the strings of the JSON it holds, where escapes hid it."""
    if not text.lstrip().startswith(("{", "[")):
        return text
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text  # no JSON: the replace above is all there is to do
    masked, changed = _masked_strings(data, secret)
    return json.dumps(masked, ensure_ascii=False) if changed else text


def _masked_strings(value: Any, secret: str) -> tuple[Any, bool]:
    if isinstance(value, str):
        return (value.replace(secret, "***"), True) if secret in value else (value, False)
    if isinstance(value, list):
        items = [_masked_strings(v, secret) for v in value]
        return [v for v, _ in items], any(c for _, c in items)
    if isinstance(value, dict):
        pairs = {k: _masked_strings(v, secret) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, any(c for _, c in pairs.values())
    return value, False


def parse_completion(
    body: str, default_model: str, where: str, *, secret: str | None = None
) -> ChatReply:
    """The reply of a Chat Completions body, checked field by field: a server may answer 200
    with anything at all. `secret` (the API key) is masked in the texts it holds."""
    masked = _masking(secret)
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise LlmFailed(f"reply from {where} is not JSON") from None
    if not isinstance(data, dict):
        raise LlmFailed(f"reply from {where} is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LlmFailed(f"reply from {where} has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise LlmFailed(f"reply from {where} has no message")
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        raise LlmRefused(f"model refused: {clean_model_text(masked(refusal), _REFUSAL_CHARS)}")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise LlmFailed(f"reply from {where} has a message content that is not text")
    model = data.get("model")
    finish_reason = choice.get("finish_reason")
    return ChatReply(
        content=masked(content or ""),
        model=masked(model) if isinstance(model, str) and model else default_model,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        tokens=reported_tokens(data.get("usage")),
    )


# A count beyond this is no count a server could mean (a garbled or hostile reply): unknown.
_MAX_TOKENS_REPORTED = 10_000_000


def reported_tokens(usage: object) -> TokenCount | None:
    """The prompt and completion tokens of a reply's `usage`, or None when it has none that
    can be believed (absent, not numbers, negative, absurd)."""
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    counts = (prompt, completion)
    if not all(type(n) is int and 0 <= n <= _MAX_TOKENS_REPORTED for n in counts):
        return None
    return TokenCount(prompt, completion)  # type: ignore[arg-type]


def _connect_failed(exc: BaseException) -> bool:
    """Whether the request failed before a connection was made (refused, no such host, the
    connect timed out): nothing was sent. A connection closed or timed out later may have
    been the request's doing."""
    import httpx2

    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, httpx2.ConnectError | httpx2.ConnectTimeout):
            return True
        cause = cause.__cause__
    return False


def _cause(exc: BaseException) -> str:
    root: BaseException = exc
    while root.__cause__ is not None:
        root = root.__cause__
    return mask_url_credentials(str(root) or root.__class__.__name__)
