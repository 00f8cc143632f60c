"""Terminal output for long runs: a progress bar on a terminal, nothing otherwise."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

COUNT_ORDER = (
    "promoted",
    "merged",
    "rejected",
    "fallback",
    "skipped",
    "failed",
    "archived",
    "kept",
    "llm_calls",
    "cache_hits",
    "seconds",
)


class _Bar:
    def __init__(self, progress: Progress | None, label: str) -> None:
        self._progress = progress
        self._task = progress.add_task(label, total=None) if progress else None

    def advance(self, n: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, n)

    def set_total(self, total: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, total=total)


@contextmanager
def progress_bar(
    label: str, stream: Any = None, *, enabled: bool = True, in_bytes: bool = False
) -> Iterator[_Bar]:
    """A bar on a terminal; nothing when the stream is not one or the bar is not wanted (JSON
    logs share the stream: their lines stay whole). `in_bytes`: it counts bytes (shown in kB,
    MB, …), not items."""
    stream = stream or sys.stderr
    if not enabled or not getattr(stream, "isatty", lambda: False)():
        yield _Bar(None, label)
        return
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn() if in_bytes else MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(file=stream),
        transient=True,
    )
    with progress:
        yield _Bar(progress, label)


# How a counter of an import reads in a summary line where its key would mislead: `skipped`
# counts records that repeat one read before (a copied file, a resumed transcript's copies, a
# record written twice), while a bad record is an error, printed as a `skipped FILE:LINE` line.
IMPORT_COUNT_NAMES = {"skipped": "copies"}
IMPORT_JOB = "import_sources"


def counters_text(
    stats: dict[str, Any],
    order: tuple[str, ...] = COUNT_ORDER,
    names: dict[str, str] | None = None,
    idle: str = "nothing to do",
) -> str:
    """The non-zero counters of `stats` as `name value` pairs, those in `order` first, each
    under its name in `names` where it has one there, nested tables (a job's per-source counts)
    left to a table of their own; `idle` if none."""
    shown = {
        k: v for k, v in stats.items() if v and not isinstance(v, dict) and k not in ("seconds",)
    }
    keys = [k for k in order if k in shown] + [k for k in shown if k not in order]
    parts = [_counter((names or {}).get(k, k), shown[k]) for k in keys]
    if stats.get("seconds") is not None:
        parts.append(f"{stats['seconds']:.2f} s")
    return "  ".join(parts) if keys else "  ".join(p for p in [idle, *parts] if p)


def _counter(key: str, value: Any) -> str:
    if value is True:
        return key  # a flag: "stopped"
    if isinstance(value, str):
        return value  # a reason: "dry_run: no model to re-judge with"
    return f"{key} {value}"


def render_counts(result: Any) -> str:
    head = f"{result.job} {result.status}"
    if result.error:
        head += f": {result.error}"
    # a run that failed before it counted anything did not find "nothing to do"
    names = IMPORT_COUNT_NAMES if result.job == IMPORT_JOB else None
    counted = counters_text(result.stats, names=names, idle="" if result.error else "nothing to do")
    return f"{head}  {counted}" if counted else head
