"""Output constraints, from one definition each: a strict JSON schema and a GBNF grammar.

Servers that honour `response_format` (OpenAI, vLLM, Ollama, llama.cpp) get the schema; llama.cpp
servers configured with `constraint = "grammar"` get the grammar. Both are generated from the same
`Field` tree (the verdict's, the session triage reply's), so they accept the same objects (keys in
definition order; the grammar fixes that order).

Output is bounded: every string is at most its length in `fields.FIELD_MAX_CHARS` (every string
field needs a row there), every list at most its `max_items`, numbers have a bounded number of
digits, and whitespace between tokens is bounded as in llama.cpp's own schema-to-grammar
converter, so a weak model cannot keep generating inside a valid prefix. The JSON schema carries
the string and list bounds (`maxLength`, `maxItems`) only when asked (`llm.schema_string_bounds`):
OpenAI's strict mode has refused those keywords.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from yzos_jobs.inference.fields import FIELD_MAX_CHARS
from yzos_jobs.kinds import VERDICT_KINDS


@dataclass(frozen=True)
class Field:
    name: str
    # "boolean" | "number" | "integer" | "string" | "enum" | "array" | "object"
    type: str
    nullable: bool = False
    values: tuple[str, ...] = ()  # an enum's values
    items: Field | None = None  # an array's element (a string element is bounded by its name)
    max_items: int = 0  # an array's bound
    members: tuple[Field, ...] = ()  # an object's fields, in order


FIELDS: tuple[Field, ...] = (
    Field("is_real_entity", "boolean"),
    Field("kind", "enum", nullable=True, values=VERDICT_KINDS),
    Field("display_name", "string", nullable=True),
    Field("confidence", "number"),
    Field("reason", "string"),
)
VERDICT = Field("verdict", "object", members=FIELDS)

# How many digest lines one triaged task may cite, and how many persons one reply may name.
TRIAGE_MAX_LINES = 50
TRIAGE_MAX_PERSONS = 10


def triage_shape(max_tasks: int) -> Field:
    """The session triage reply: its project, at most `max_tasks` tasks, the persons named."""
    task = Field(
        "task",
        "object",
        members=(
            Field("title", "string"),
            Field("existing_task_id", "integer", nullable=True),
            Field("lines", "array", items=Field("line", "integer"), max_items=TRIAGE_MAX_LINES),
        ),
    )
    return Field(
        "triage",
        "object",
        members=(
            Field("project", "string", nullable=True),
            Field("tasks", "array", items=task, max_items=max_tasks),
            Field(
                "persons",
                "array",
                items=Field("person", "string"),
                max_items=TRIAGE_MAX_PERSONS,
            ),
        ),
    )


def json_schema(field: Field, bounds: bool = False) -> dict[str, Any]:
    """The strict JSON schema of a field tree; `bounds` adds maxLength and maxItems."""
    if field.type == "object":
        return {
            "type": "object",
            "properties": {m.name: json_schema(m, bounds) for m in field.members},
            "required": [m.name for m in field.members],
            "additionalProperties": False,
        }
    if field.type == "enum":
        values: list[Any] = list(field.values) + ([None] if field.nullable else [])
        return {"type": ["string", "null"] if field.nullable else "string", "enum": values}
    if field.type == "array":
        assert field.items is not None
        schema: dict[str, Any] = {"type": "array", "items": json_schema(field.items, bounds)}
        if bounds:
            schema["maxItems"] = field.max_items
        return schema
    schema = {"type": [field.type, "null"] if field.nullable else field.type}
    if bounds and field.type == "string":
        schema["maxLength"] = FIELD_MAX_CHARS[field.name]
    return schema


def response_format_for(name: str, field: Field, bounds: bool = False) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "strict": True, "schema": json_schema(field, bounds)},
    }


def verdict_json_schema(string_bounds: bool = False) -> dict[str, Any]:
    return json_schema(VERDICT, string_bounds)


def response_format(string_bounds: bool = False) -> dict[str, Any]:
    return response_format_for("classify_verdict", VERDICT, string_bounds)


# The shapes llama.cpp's json-schema-to-grammar uses: at most 16 digits in each part of a
# number, and between tokens nothing, one space, or one or two line breaks and up to 20 indents.
# (`ws` is written as an optional group rather than with an empty first alternative.)
_GBNF_PRIMITIVES = {
    "boolean": '("true" | "false")',
    "number": ('"-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?'),
    "integer": '"-"? ("0" | [1-9] [0-9]{0,15})',
    "char": '[^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "ws": '(" " | "\\n"{1,2} [ \\t]{0,20})?',
}


def _rule_name(field: Field, suffix: str) -> str:
    return f"{field.name.replace('_', '-')}-{suffix}"


def _gbnf_value(field: Field, rules: dict[str, str]) -> str:
    """The expression for one field's value; rules it needs are added to `rules`."""
    if field.type == "enum":
        base = "(" + " | ".join(f'"\\"{v}\\""' for v in field.values) + ")"
    elif field.type == "string":
        base = _rule_name(field, "string")
        rules[base] = f'"\\"" char{{0,{FIELD_MAX_CHARS[field.name]}}} "\\""'
    elif field.type == "object":
        base = _rule_name(field, "object")
        members = ' ws "," ws '.join(
            f'"\\"{m.name}\\"" ws ":" ws {_gbnf_value(m, rules)}' for m in field.members
        )
        rules[base] = f'"{{" ws {members} ws "}}"'
    elif field.type == "array":
        assert field.items is not None and field.max_items >= 1
        base = _rule_name(field, "list")
        item = _gbnf_value(field.items, rules)
        more = f' ( ws "," ws {item} ){{0,{field.max_items - 1}}}' if field.max_items > 1 else ""
        rules[base] = f'"[" ws ( {item}{more} )? ws "]"'
    else:
        base = field.type
    return f'({base} | "null")' if field.nullable else base


def gbnf(field: Field) -> str:
    """The GBNF grammar of a field tree: its root is the value, then optional whitespace."""
    rules: dict[str, str] = {}
    root = _gbnf_value(field, rules)
    lines = [
        f"root ::= {root} ws",
        *(f"{name} ::= {rule}" for name, rule in rules.items()),
        *(f"{name} ::= {rule}" for name, rule in _GBNF_PRIMITIVES.items()),
    ]
    return "\n".join(lines) + "\n"


@lru_cache(maxsize=1)
def verdict_gbnf() -> str:
    return gbnf(VERDICT)


def triage_json_schema(max_tasks: int, bounds: bool = False) -> dict[str, Any]:
    return json_schema(triage_shape(max_tasks), bounds)
