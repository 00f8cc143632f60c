"""Structured logging: readable on a terminal, JSON lines otherwise."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from yzos_jobs.config import LoggingSettings
from yzos_jobs.redact import mask_url_credentials

_SECRET_KEYS = frozenset({"api_key", "authorization", "password"})


def _redact(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    # Belt and braces: the API key is never passed to a logger, but redact if it ever is, and
    # hide the credentials of any URL (an API key in llm.base_url) in any text logged.
    for key, value in event.items():
        if key in _SECRET_KEYS:
            event[key] = "***"
        elif isinstance(value, str):
            event[key] = mask_url_credentials(value)
    return event


class _MaskUrlCredentials(logging.Filter):
    """The same for the standard library's loggers (the HTTP client's, the SDK's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask_url_credentials(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def configure_logging(settings: LoggingSettings, stream: Any = None) -> None:
    stream = stream or sys.stderr
    fmt = settings.format
    tty = bool(getattr(stream, "isatty", lambda: False)())
    if fmt == "auto":
        fmt = "console" if tty else "json"
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=tty)
        if fmt == "console"
        else structlog.processors.JSONRenderer()
    )
    level = getattr(logging, settings.level.upper())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact,
            structlog.processors.format_exc_info if fmt == "json" else _noop,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    # Libraries log through the standard library; keep their warnings, in the same stream.
    logging.basicConfig(level=max(level, logging.WARNING), stream=stream, force=True)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_MaskUrlCredentials())


def _noop(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    return event


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)
