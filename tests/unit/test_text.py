"""Text from files and observers made storable (`yzos_jobs.text.clean_text`)."""

from __future__ import annotations

import pytest

from yzos_jobs.text import clean_text


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("\x1b[31mRed\x1b[0m fix the login", "Red fix the login"),  # a colour git printed
        ("\x1b]0;build\x07Deploy the site", "Deploy the site"),  # a window title
        ("\x1b]8;;https://example.com\x1b\\docs\x1b]8;;\x1b\\ page", "docs page"),  # a link
        ("Fix\x00 login", "Fix login"),
        ("  padded  ", "padded"),
        ("\x1b[0m", None),  # nothing left
    ],
)
def test_stored_text_has_no_terminal_escapes_nor_nul(raw: str, stored: str | None) -> None:
    assert clean_text(raw, 100) == stored


def test_an_escape_left_open_is_dropped_and_the_text_after_it_kept() -> None:
    assert clean_text("\x1b]" + "x" * 5_000_000, 10) == "x" * 9 + "…"
