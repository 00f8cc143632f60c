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


# On a terminal, a control character in a logged text (a file name holding `ESC ] 0 ;`, a
# pasted line) would act on the terminal: retitle it, clear it. Console lines show it escaped;
# line breaks and tabs stay (a traceback's lines). JSON lines escape control characters anyway.
_INERT = {
    c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
    for c in [
        *(c for c in range(0x20) if chr(c) not in "\n\t"),
        *range(0x7F, 0xA0),
        *(ord(ch) for ch in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"),
        *range(0x2066, 0x206A),
    ]
}


def _inert(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    for key, value in event.items():
        if isinstance(value, str) and not value.isprintable():
            event[key] = value.translate(_INERT)
    return event


class _MaskUrlCredentials(logging.Filter):
    """The same for the standard library's loggers (the HTTP client's, the SDK's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask_url_credentials(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


LEVELS = ("debug", "info", "warning", "error")
# What -v, -vv ask for.
VERBOSE_LEVELS = ("info", "debug")

_json_logs = False


def effective_level(configured: str | None, verbose: int, default: str) -> str:
    """The level logs are kept from: the configured one (else the command's default), or what
    -v/--verbose asks for when that is more."""
    base = configured or default
    if verbose <= 0:
        return base
    asked = VERBOSE_LEVELS[min(verbose, len(VERBOSE_LEVELS)) - 1]
    return min(base, asked, key=LEVELS.index)


def logs_as_json() -> bool:
    """Whether log lines are JSON (for machines: every field kept) rather than for a person."""
    return _json_logs


def configure_logging(
    settings: LoggingSettings,
    stream: Any = None,
    *,
    verbose: int = 0,
    default_level: str = "warning",
    log_format: str | None = None,
) -> None:
    """Logs go to `stream` (stderr) at the effective level; `log_format` (the command line's
    --log-format) takes precedence over the settings' format."""
    global _json_logs
    stream = stream or sys.stderr
    fmt = log_format or settings.format
    tty = bool(getattr(stream, "isatty", lambda: False)())
    if fmt == "auto":
        fmt = "console" if tty else "json"
    _json_logs = fmt == "json"
    renderer: Any = (
        # Tracebacks plain: a rich one shows each frame's local variables, an API key among them.
        structlog.dev.ConsoleRenderer(colors=tty, exception_formatter=structlog.dev.plain_traceback)
        if fmt == "console"
        else structlog.processors.JSONRenderer()
    )
    chosen = effective_level(settings.level, verbose, default_level)
    level = getattr(logging, chosen.upper())
    # What every line carries, the project's own and the libraries' alike.
    common: list[Any] = [
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _redact,
        structlog.processors.format_exc_info if fmt == "json" else _noop,
        _noop if fmt == "json" else _inert,
    ]
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            *common,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    # Libraries log through the standard library; keep their warnings, in the same stream and the
    # same format (a JSON stream holds JSON lines only), their logger named.
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processor=renderer,
            foreign_pre_chain=[
                structlog.stdlib.add_logger_name,
                structlog.stdlib.add_log_level,
                *common,
            ],
        )
    )
    handler.addFilter(_MaskUrlCredentials())
    logging.basicConfig(level=max(level, logging.WARNING), handlers=[handler], force=True)
    # The scheduler's own warnings (a run skipped, a run missed) say what the daemon already
    # logs with the job's name; its errors stay.
    logging.getLogger("apscheduler").setLevel(logging.ERROR)


def _noop(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    return event


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)


# Fields of a run's stats that say how long it took, not what it did.
TIMING_FIELDS = frozenset({"seconds"})


def nonzero(stats: dict[str, Any]) -> dict[str, Any]:
    """The counters that say something: non-zero numbers, true flags, non-empty text; a nested
    table keeps its own non-zero counters, and goes when none is left."""
    kept: dict[str, Any] = {}
    for key, value in stats.items():
        if isinstance(value, dict):
            value = nonzero(value)
        if value:  # 0, 0.0, False, "", None, {} say nothing
            kept[key] = value
    return kept


def did_something(stats: dict[str, Any]) -> bool:
    """Whether a run's own counters show any work (its duration aside; a nested table holds
    details, such as what each source of an import holds)."""
    return any(
        key not in TIMING_FIELDS and not isinstance(value, dict)
        for key, value in nonzero(stats).items()
    )


def run_fields(stats: dict[str, Any]) -> dict[str, Any]:
    """What a run's log line carries: every counter in JSON logs (for machines), the non-zero
    ones for a person."""
    return dict(stats) if logs_as_json() else nonzero(stats)
