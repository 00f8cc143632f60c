"""Text from files and observers, made storable: what both databases accept, at a bounded length."""

from __future__ import annotations

import re
import unicodedata

# A lone surrogate ("\ud800" in JSON, or a file name Python decoded with surrogateescape) is not
# UTF-8: both database drivers refuse to encode it.
_SURROGATES = re.compile("[\ud800-\udfff]")
# A terminal's escape sequences: a control sequence (colours, `ESC[31m`), an operating-system
# command (a window title, a link: `ESC]…BEL`), or a two-character escape
_TERMINAL_ESCAPE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]{0,1000}(?:\x07|\x1b\\)|[@-Z\\-_])"
)


def storable_name(name: str) -> str:
    """A name read from the file system as both databases store it: a byte that is not UTF-8
    (which Python decodes as a lone surrogate, `surrogateescape`) kept as a backslash escape
    (`proj-\\xff`), any other lone surrogate as U+FFFD."""
    if name.isascii() or not _SURROGATES.search(name):
        return name
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", name)


def clean_text(value: object, limit: int) -> str | None:
    """Text as the database accepts it: no NUL bytes (PostgreSQL refuses them), no terminal
    escape sequences (a colour a program printed around a commit's subject), lone surrogates
    replaced by U+FFFD, at most `limit` characters (longer values are cut and marked), whitespace
    trimmed. None for nothing left."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\x1b" in text:
        text = _TERMINAL_ESCAPE.sub("", text)
    text = text.strip()
    if not text:
        return None
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text if text.isascii() else _SURROGATES.sub("\ufffd", text)


def shown(value: object, limit: int = 60) -> str:
    """A value as an error message quotes it: one short line whatever the value is (a nested
    object is named by its type, not printed)."""
    if not isinstance(value, str | int | float | bool) and value is not None:
        return f"a JSON {'object' if isinstance(value, dict) else type(value).__name__}"
    text = repr(value[: limit + 1] if isinstance(value, str) else value)  # repr escapes surrogates
    return text if len(text) <= limit else text[: limit - 1] + "…"


def without_format_characters(text: str) -> str:
    """Text without Unicode format characters (category Cf: zero-width spaces and joiners, bidi
    controls, soft hyphens): they draw nothing, so two names that differ only by them look the
    same."""
    if text.isascii():
        return text  # no format character is ASCII
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def has_visible_character(text: str | None) -> bool:
    """Whether the text draws anything: one character that is not a space, a separator, a
    control, format, private-use, unassigned or surrogate code point."""
    if not text:
        return False
    if text.isascii():
        return any("!" <= ch <= "~" for ch in text)
    return any(unicodedata.category(ch)[0] not in "CZ" for ch in text)
