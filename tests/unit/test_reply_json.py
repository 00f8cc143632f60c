"""The JSON object a model's reply holds, however the model wrapped it."""

from __future__ import annotations

from typing import Any

import pytest

from yzos_jobs.inference.errors import LlmInvalidOutput
from yzos_jobs.inference.replies import extract_json


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        (
            '{"t": "quote ```py x``` and <think>y</think>"}',
            {"t": "quote ```py x``` and <think>y</think>"},
        ),
        ('Here it is:\n{"t": "```py x```"}', {"t": "```py x```"}),
        ('<think>{not json</think>\n{"a": 2}', {"a": 2}),
        ('```json\n{"a": 3}\n```', {"a": 3}),
        ('{"a": 1, oops}\n```json\n{"b": 4}\n```', {"b": 4}),
        ('{"a": 5}\nand some reasoning after it', {"a": 5}),
    ],
)
def test_the_object_is_found(reply: str, value: dict[str, Any]) -> None:
    assert extract_json(reply) == value


@pytest.mark.parametrize("reply", ["no json here", '{"a": ', "<think>{}</think>"])
def test_a_reply_without_a_whole_object_is_invalid_output(reply: str) -> None:
    with pytest.raises(LlmInvalidOutput):
        extract_json(reply)
