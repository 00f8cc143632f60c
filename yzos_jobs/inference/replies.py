"""What goes into a prompt as data, and what comes out of a reply as JSON: shared by every call
(the verdict, the session triage)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from yzos_jobs.inference.errors import LlmInvalidOutput

_Model = TypeVar("_Model", bound=BaseModel)

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def encode_data(data: Mapping[str, Any] | Sequence[Any]) -> str:
    """Observed data as JSON for a delimited prompt block. "<" is escaped so no observed text can
    close its block early; a lone surrogate (undecodable input) cannot be sent as UTF-8 and is
    shown as U+FFFD."""
    text = json.dumps(data, ensure_ascii=False, indent=1).replace("<", "\\u003c")
    return _LONE_SURROGATE.sub("\ufffd", text)


_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def extract_json(text: str) -> Any:
    """The first JSON object of a reply, past reasoning blocks and code fences. A reply that is
    a JSON object is read as it is: its strings may hold fences and tags of their own (a task
    named by a request that quotes code). Else, past reasoning blocks, the object at the first
    `{`, then the one in a code fence."""
    text = text.strip()
    tried = [text] if text.startswith("{") else []
    bare = _THINK_BLOCK.sub("", text).strip()
    if (start := bare.find("{")) >= 0:
        tried.append(bare[start:])
    if fenced := _FENCE.search(bare):
        inside = fenced.group(1).strip()
        if (start := inside.find("{")) >= 0:
            tried.append(inside[start:])
    if not tried:
        raise LlmInvalidOutput("reply holds no JSON object")
    first_error = ""
    for candidate in tried:
        try:
            value, _ = json.JSONDecoder().raw_decode(candidate)
        except json.JSONDecodeError as exc:
            first_error = first_error or exc.msg
            continue
        except RecursionError:
            raise LlmInvalidOutput("JSON nested too deeply") from None
        return value
    raise LlmInvalidOutput(f"malformed JSON: {first_error}")


def validate_reply(model: type[_Model], data: Any, what: str = "") -> _Model:
    """A reply's JSON held to its model; the first thing wrong with it, named by where it is, as
    invalid output (`what` prefixes the place, such as "triage ")."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "object"
        raise LlmInvalidOutput(f"{what}{where}: {first['msg']}") from None
