"""The longest value the model may write into each text field, and how such text is cleaned.

One table serves both ends: the output constraint (the GBNF grammar always, the JSON schema's
`maxLength` when `llm.schema_string_bounds` is on) bounds what the model can generate, and
`clean_model_text` bounds what is kept from any reply, whatever the server did. Lengths count
Unicode code points (as JSON Schema's `maxLength` and llama.cpp grammars do).

Documented limits:
- display_name: 200 characters (an entity's name, as shown and stored)
- reason:       300 characters (one short sentence explaining a verdict)
- project:      200 characters (session triage: the project a session worked on)
- title:        200 characters (session triage: one task's title)
- person:       100 characters (session triage: one person's name)
"""

from __future__ import annotations

import re

# field name -> most characters the model may write into it. Every model-written text field of
# every reply (verdicts, and any later reply type) has its row here.
FIELD_MAX_CHARS: dict[str, int] = {
    "display_name": 200,
    "reason": 300,
    "project": 200,
    "title": 200,
    "person": 100,
}

# C0 and C1 controls and DEL, and lone surrogates, which no database or UTF-8 encoder accepts.
_CONTROL_OR_SURROGATE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_ELLIPSIS = "…"


def one_line(value: str) -> str:
    """Whitespace runs (line breaks included) become one space, other control characters and
    lone surrogates are dropped, the ends are trimmed."""
    return " ".join(_CONTROL_OR_SURROGATE.sub("", " ".join(value.split())).split())


def clean_model_text(value: str, limit: int) -> str:
    """`one_line(value)` with at most `limit` characters (a cut value ends with "…")."""
    text = one_line(value)
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + _ELLIPSIS
    return text


def clean_field(field: str, value: str) -> str:
    """`clean_model_text` at the field's limit from FIELD_MAX_CHARS."""
    return clean_model_text(value, FIELD_MAX_CHARS[field])
