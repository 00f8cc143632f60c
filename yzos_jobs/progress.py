"""Terminal output for long runs: a progress bar on a terminal, nothing otherwise."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

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
def progress_bar(label: str, stream: Any = None) -> Iterator[_Bar]:
    stream = stream or sys.stderr
    if not getattr(stream, "isatty", lambda: False)():
        yield _Bar(None, label)
        return
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(file=stream),
        transient=True,
    )
    with progress:
        yield _Bar(progress, label)


def render_counts(result: Any) -> str:
    stats = result.stats
    shown = [f"{k} {stats[k]}" for k in COUNT_ORDER if k in stats]
    head = f"{result.job} {result.status}"
    if result.error:
        head += f": {result.error}"
    return "  ".join([head, *shown])
