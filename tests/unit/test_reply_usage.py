"""A reply's `usage` is believed only when it is two plausible token counts; anything else is
unknown usage, never a guess and never an error."""

from __future__ import annotations

import json

import pytest

from yzos_jobs.inference.client import parse_completion
from yzos_jobs.inference.contract import TokenCount


def _body(usage: object) -> str:
    reply = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]}
    if usage is not ...:
        reply["usage"] = usage
    return json.dumps(reply)


def test_reported_usage_is_read() -> None:
    usage = {"prompt_tokens": 812, "completion_tokens": 41, "total_tokens": 853}
    assert parse_completion(_body(usage), "m", "here").tokens == TokenCount(812, 41)


@pytest.mark.parametrize(
    "usage",
    [
        ...,
        None,
        [],
        "812",
        {"prompt_tokens": 812},
        {"prompt_tokens": "812", "completion_tokens": 41},
        {"prompt_tokens": -1, "completion_tokens": 41},
        {"prompt_tokens": 812.5, "completion_tokens": 41},
        {"prompt_tokens": True, "completion_tokens": 41},
        {"prompt_tokens": 10**30, "completion_tokens": 41},
    ],
)
def test_usage_that_cannot_be_believed_is_unknown(usage: object) -> None:
    reply = parse_completion(_body(usage), "m", "here")
    assert reply.tokens is None and reply.content == "{}"
