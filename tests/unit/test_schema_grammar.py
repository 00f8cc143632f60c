"""The JSON schema and the GBNF grammar come from one definition and accept the same verdicts,
within the same bounds (the field lengths of `inference.fields`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gbnf import GBNF, InputParseError, RuleEnd
from pydantic import ValidationError

from yzos_jobs.entity.classifier import ClassifyVerdict
from yzos_jobs.inference.fields import FIELD_MAX_CHARS
from yzos_jobs.inference.schema import FIELDS, verdict_gbnf, verdict_json_schema

GRAMMAR = verdict_gbnf()
START = GBNF(GRAMMAR)  # the grammar parsed once; each check feeds text to this start state
SCHEMA = verdict_json_schema()
BOUNDED_SCHEMA = verdict_json_schema(string_bounds=True)
STRING_FIELDS = [f.name for f in FIELDS if f.type == "string"]

GOOD = {
    "is_real_entity": True,
    "kind": "project",
    "display_name": "YZOS Core",
    "confidence": 0.92,
    "reason": "a repository",
}


def grammar_accepts(text: str) -> bool:
    try:
        state = START + text
    except (InputParseError, IndexError):
        # gbnf 0.0.32 keeps every input fed to a parsed grammar and can fail with IndexError
        # while pointing at the refused character; either way the text was refused.
        return False
    return any(isinstance(rule, RuleEnd) for rule in state)


def schema_accepts(obj: Any, schema: dict[str, Any] = SCHEMA) -> bool:
    """A small validator for the subset of JSON Schema the verdict schema uses."""
    if not isinstance(obj, dict) or set(obj) != set(schema["required"]):
        return False
    for key, spec in schema["properties"].items():
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
        if "maxLength" in spec and isinstance(value, str) and len(value) > spec["maxLength"]:
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


@pytest.mark.parametrize("field", STRING_FIELDS)
def test_a_string_at_its_bound_passes_and_one_past_it_is_refused_by_both(field: str) -> None:
    bound = FIELD_MAX_CHARS[field]
    at_bound = {**GOOD, field: "陈" * (bound - 1) + "\n"}  # an escape counts as one character
    past = {**GOOD, field: "x" * (bound + 1)}
    assert BOUNDED_SCHEMA["properties"][field]["maxLength"] == bound
    assert schema_accepts(at_bound, BOUNDED_SCHEMA)
    assert grammar_accepts(json.dumps(at_bound, ensure_ascii=False))
    assert grammar_accepts(json.dumps(at_bound))  # as \uXXXX escapes
    assert not schema_accepts(past, BOUNDED_SCHEMA)
    assert not grammar_accepts(json.dumps(past))


def test_schema_string_bounds_are_off_by_default() -> None:
    assert all("maxLength" not in spec for spec in SCHEMA["properties"].values())
    assert schema_accepts({**GOOD, "reason": "x" * (FIELD_MAX_CHARS["reason"] + 1)})


def test_every_string_field_has_a_length_in_the_table() -> None:
    assert STRING_FIELDS and all(field in FIELD_MAX_CHARS for field in STRING_FIELDS)


@pytest.mark.parametrize(
    ("gap", "accepted"),
    [
        ("", True),
        (" ", True),
        ("\n" + "\t" * 20, True),
        ("\n\n" + " " * 20, True),
        ("  ", False),
        ("\n" + " " * 21, False),
        ("\n\n\n", False),
        (" \n", False),
    ],
)
def test_whitespace_between_tokens_is_bounded(gap: str, accepted: bool) -> None:
    compact = json.dumps(GOOD, separators=(",", ":"))
    spaced = compact.replace(":", ":" + gap, 1)
    assert grammar_accepts(spaced) is accepted
    assert grammar_accepts(compact + gap) is accepted  # after the object too


def test_numbers_have_a_bounded_number_of_digits() -> None:
    compact = json.dumps(GOOD, separators=(",", ":"))
    assert grammar_accepts(compact.replace("0.92", "0." + "9" * 16))
    assert not grammar_accepts(compact.replace("0.92", "0." + "9" * 17))
    assert not grammar_accepts(compact.replace("0.92", "1" * 17))
