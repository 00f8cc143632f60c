"""What libraries log through the standard library comes out as the command's own log lines do:
one JSON object per line in a JSON stream (the daemon's, read by machines), the logger named and
URL credentials hidden; the scheduler's warnings, which the daemon logs itself with the job's
name, left out."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from yzos_jobs.config import LoggingSettings
from yzos_jobs.logging import configure_logging


@pytest.fixture
def json_stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    scheduler_level = logging.getLogger("apscheduler").level
    stream = io.StringIO()
    configure_logging(LoggingSettings(), stream, log_format="json")
    yield stream
    root.handlers[:], root.level = handlers, level
    logging.getLogger("apscheduler").setLevel(scheduler_level)


def _records(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_librarys_warning_is_a_json_line_naming_its_logger(json_stream: io.StringIO) -> None:
    logging.getLogger("httpx").warning("GET %s failed", "https://me:sk-secret@llm.local/v1")
    [record] = _records(json_stream)
    assert record["logger"] == "httpx" and record["level"] == "warning"
    assert "sk-secret" not in record["event"] and "llm.local" in record["event"]
    assert record["timestamp"]


def test_the_schedulers_warnings_are_left_to_the_daemon_its_errors_kept(
    json_stream: io.StringIO,
) -> None:
    logging.getLogger("apscheduler.scheduler").warning("skipped: maximum number of instances")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("apscheduler.executors.default").exception("Job raised an exception")
    [record] = _records(json_stream)
    assert record["event"] == "Job raised an exception" and record["level"] == "error"
    assert "RuntimeError: boom" in str(record["exception"])


def test_a_librarys_traceback_on_a_terminal_shows_no_local_values() -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    stream = io.StringIO()
    configure_logging(LoggingSettings(), stream, log_format="console")
    try:
        api_key = "sk-live-local-secret"
        raise RuntimeError(f"refused ({len(api_key)} chars)")
    except RuntimeError:
        logging.getLogger("sqlalchemy.pool").exception("connection lost")
    finally:
        root.handlers[:], root.level = handlers, level
    shown = stream.getvalue()
    assert "connection lost" in shown and "RuntimeError: refused" in shown
    assert "sk-live-local-secret" not in shown
