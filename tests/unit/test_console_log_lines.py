"""Log lines for a person, on a terminal: what they quote (a file name, a pasted line) never
acts on the terminal; its control characters are shown escaped, a traceback keeps its lines."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from yzos_jobs.config import LoggingSettings
from yzos_jobs.logging import configure_logging, get_logger

# retitles the terminal, clears it, then a right-to-left override
HOSTILE = "/home/me/.claude/projects/p/\x1b]0;PWNED\x07\x1b[2J\u202efifo.jsonl"


@pytest.fixture
def console() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    stream = io.StringIO()
    configure_logging(LoggingSettings(), stream, log_format="console")
    yield stream
    root.handlers[:], root.level = handlers, level


def test_a_logged_file_name_cannot_drive_the_terminal(console: io.StringIO) -> None:
    get_logger("yzos_jobs.importers").warning("source file skipped", path=HOSTILE)
    logging.getLogger("httpx").warning("GET %s", HOSTILE)  # a library's line too
    shown = console.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert shown.count("\\x1b]0;PWNED\\x07\\x1b[2J\\u202efifo.jsonl") == 2


def test_a_traceback_keeps_its_lines(console: io.StringIO) -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        get_logger("yzos_jobs.daemon").exception("job failed\tbadly")
    shown = console.getvalue()
    assert "job failed\tbadly" in shown
    assert "Traceback (most recent call last):\n" in shown and "RuntimeError: boom" in shown
