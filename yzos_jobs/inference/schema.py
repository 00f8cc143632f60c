"""The verdict's output constraint, from one definition: a strict JSON schema and a GBNF grammar.

Servers that honour `response_format` (OpenAI, vLLM, Ollama, llama.cpp) get the schema; llama.cpp
servers configured with `constraint = "grammar"` get the grammar. Both are generated from FIELDS,
so they accept the same objects (keys in FIELDS order; the grammar fixes that order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("person", "project", "task", "app", "noise")
ENTITY_KINDS = ("person", "project", "task")


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # "boolean" | "number" | "string" | "enum"
    nullable: bool = False
    values: tuple[str, ...] = ()


FIELDS: tuple[Field, ...] = (
    Field("is_real_entity", "boolean"),
    Field("kind", "enum", nullable=True, values=KINDS),
    Field("display_name", "string", nullable=True),
    Field("confidence", "number"),
    Field("reason", "string"),
)


def _schema_for(field: Field) -> dict[str, Any]:
    if field.type == "enum":
        values: list[Any] = list(field.values) + ([None] if field.nullable else [])
        return {"type": ["string", "null"] if field.nullable else "string", "enum": values}
    return {"type": [field.type, "null"] if field.nullable else field.type}


def verdict_json_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f.name: _schema_for(f) for f in FIELDS},
        "required": [f.name for f in FIELDS],
        "additionalProperties": False,
    }


def response_format() -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "classify_verdict",
            "strict": True,
            "schema": verdict_json_schema(),
        },
    }


_GBNF_PRIMITIVES = {
    "boolean": '("true" | "false")',
    "number": '("-"? ([0-9] | [1-9] [0-9]*)) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?',
    "string": (
        '"\\"" ( [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\\""'
    ),
}


def _gbnf_value(field: Field) -> str:
    if field.type == "enum":
        alternatives = " | ".join(f'"\\"{v}\\""' for v in field.values)
        base = f"({alternatives})"
    else:
        base = field.type
    return f'({base} | "null")' if field.nullable else base


def verdict_gbnf() -> str:
    members = ' ws "," ws '.join(f'"\\"{f.name}\\"" ws ":" ws {_gbnf_value(f)}' for f in FIELDS)
    lines = [
        f'root ::= "{{" ws {members} ws "}}" ws',
        *(f"{name} ::= {rule}" for name, rule in _GBNF_PRIMITIVES.items()),
        "ws ::= ([ \\t\\n] ws)?",
    ]
    return "\n".join(lines) + "\n"
