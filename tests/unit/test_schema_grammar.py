"""The JSON schema and the GBNF grammar come from one definition and accept the same verdicts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gbnf import GBNF, InputParseError, RuleEnd
from pydantic import ValidationError

from yzos_jobs.entity.classifier import ClassifyVerdict
from yzos_jobs.inference.schema import verdict_gbnf, verdict_json_schema

GRAMMAR = verdict_gbnf()
SCHEMA = verdict_json_schema()

GOOD = {
    "is_real_entity": True,
    "kind": "project",
    "display_name": "YZOS Core",
    "confidence": 0.92,
    "reason": "a repository",
}


def grammar_accepts(text: str) -> bool:
    try:
        state = GBNF(GRAMMAR, text)
    except InputParseError:
        return False
    return any(isinstance(rule, RuleEnd) for rule in state)


def schema_accepts(obj: Any) -> bool:
    """A small validator for the subset of JSON Schema the verdict schema uses."""
    if not isinstance(obj, dict) or set(obj) != set(SCHEMA["required"]):
        return False
    for key, spec in SCHEMA["properties"].items():
        types = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
        value = obj[key]
        names = {
            bool: "boolean",
            str: "string",
            float: "number",
            int: "number",
            type(None): "null",
        }
        if names.get(type(value)) not in types:
            return False
        if "enum" in spec and value not in spec["enum"]:
            return False
    return True


def model_accepts(obj: Any) -> bool:
    try:
        ClassifyVerdict.model_validate(obj)
        return True
    except ValidationError:
        return False


VALID = [
    GOOD,
    {**GOOD, "kind": "app", "is_real_entity": False, "display_name": None},
    {**GOOD, "kind": None, "is_real_entity": False},
    {**GOOD, "kind": "person", "display_name": "陈晓明", "reason": 'says "hi"\n'},
    {**GOOD, "confidence": 1},
    {**GOOD, "confidence": 1e-3},
]
INVALID = [
    {**GOOD, "kind": "company"},
    {k: v for k, v in GOOD.items() if k != "reason"},
    {**GOOD, "extra": 1},
    {**GOOD, "is_real_entity": "yes"},
    {**GOOD, "confidence": "high"},
    {**GOOD, "reason": None},
]


@pytest.mark.parametrize("obj", VALID)
def test_valid_verdicts_are_accepted_by_schema_grammar_and_model(obj: dict[str, Any]) -> None:
    text = json.dumps(obj, ensure_ascii=False)
    assert schema_accepts(obj)
    assert grammar_accepts(text)
    assert grammar_accepts(json.dumps(obj, indent=2))
    assert model_accepts(obj)


@pytest.mark.parametrize("obj", INVALID)
def test_invalid_verdicts_are_rejected_by_schema_grammar_and_model(obj: dict[str, Any]) -> None:
    assert not schema_accepts(obj)
    assert not grammar_accepts(json.dumps(obj))
    assert not model_accepts(obj)


def test_schema_is_strict_and_names_the_same_fields_as_the_model() -> None:
    assert SCHEMA["additionalProperties"] is False
    assert SCHEMA["required"] == list(ClassifyVerdict.model_fields)
    assert SCHEMA["properties"]["kind"]["enum"] == [
        "person",
        "project",
        "task",
        "app",
        "noise",
        None,
    ]


def test_grammar_rejects_prose_and_truncated_objects() -> None:
    good = json.dumps(GOOD)
    assert not grammar_accepts("Sure! " + good)
    assert not grammar_accepts(good[:-1])
