"""The verdict's output constraint, from one definition: a strict JSON schema and a GBNF grammar.

Servers that honour `response_format` (OpenAI, vLLM, Ollama, llama.cpp) get the schema; llama.cpp
servers configured with `constraint = "grammar"` get the grammar. Both are generated from FIELDS,
so they accept the same objects (keys in FIELDS order; the grammar fixes that order).

Output is bounded: every string field is at most its length in `fields.FIELD_MAX_CHARS` (every
string field needs a row there), numbers have a bounded number of digits, and whitespace between
tokens is bounded as in llama.cpp's own schema-to-grammar converter, so a weak model cannot keep
generating inside a valid prefix. The JSON schema carries the string bounds as `maxLength` only
when asked (`llm.schema_string_bounds`): OpenAI's strict mode has refused the keyword.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from yzos_jobs.inference.fields import FIELD_MAX_CHARS
from yzos_jobs.kinds import VERDICT_KINDS


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # "boolean" | "number" | "string" | "enum"
    nullable: bool = False
    values: tuple[str, ...] = ()


FIELDS: tuple[Field, ...] = (
    Field("is_real_entity", "boolean"),
    Field("kind", "enum", nullable=True, values=VERDICT_KINDS),
    Field("display_name", "string", nullable=True),
    Field("confidence", "number"),
    Field("reason", "string"),
)


def _schema_for(field: Field, string_bounds: bool) -> dict[str, Any]:
    if field.type == "enum":
        values: list[Any] = list(field.values) + ([None] if field.nullable else [])
        return {"type": ["string", "null"] if field.nullable else "string", "enum": values}
    schema: dict[str, Any] = {"type": [field.type, "null"] if field.nullable else field.type}
    if string_bounds and field.type == "string":
        schema["maxLength"] = FIELD_MAX_CHARS[field.name]
    return schema


def verdict_json_schema(string_bounds: bool = False) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f.name: _schema_for(f, string_bounds) for f in FIELDS},
        "required": [f.name for f in FIELDS],
        "additionalProperties": False,
    }


def response_format(string_bounds: bool = False) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "classify_verdict",
            "strict": True,
            "schema": verdict_json_schema(string_bounds),
        },
    }


# The shapes llama.cpp's json-schema-to-grammar uses: at most 16 digits in each part of a
# number, and between tokens nothing, one space, or one or two line breaks and up to 20 indents.
# (`ws` is written as an optional group rather than with an empty first alternative.)
_GBNF_PRIMITIVES = {
    "boolean": '("true" | "false")',
    "number": ('"-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?'),
    "char": '[^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "ws": '(" " | "\\n"{1,2} [ \\t]{0,20})?',
}


def _string_rule(field: Field) -> str:
    return f"{field.name.replace('_', '-')}-string"


def _gbnf_value(field: Field) -> str:
    if field.type == "enum":
        alternatives = " | ".join(f'"\\"{v}\\""' for v in field.values)
        base = f"({alternatives})"
    elif field.type == "string":
        base = _string_rule(field)
    else:
        base = field.type
    return f'({base} | "null")' if field.nullable else base


def verdict_gbnf() -> str:
    members = ' ws "," ws '.join(f'"\\"{f.name}\\"" ws ":" ws {_gbnf_value(f)}' for f in FIELDS)
    strings = [
        f'{_string_rule(f)} ::= "\\"" char{{0,{FIELD_MAX_CHARS[f.name]}}} "\\""'
        for f in FIELDS
        if f.type == "string"
    ]
    lines = [
        f'root ::= "{{" ws {members} ws "}}" ws',
        *strings,
        *(f"{name} ::= {rule}" for name, rule in _GBNF_PRIMITIVES.items()),
    ]
    return "\n".join(lines) + "\n"
