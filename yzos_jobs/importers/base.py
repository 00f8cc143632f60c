"""What every file importer shares: settings it reads, counts, finding and reading files."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from yzos_jobs.importers.records import ImportPathError, ImportStats
from yzos_jobs.jobcontext import JobContext


class FileImporter:
    """Imports files named directly or found below directories by `PATTERN`."""

    PATTERN = "*"

    def __init__(self, ctx: JobContext, progress: Callable[[int], None] | None = None) -> None:
        self.ctx = ctx
        self.limit = ctx.settings.importers.max_field_chars
        self.idle_s = ctx.settings.importers.session_idle_s
        self.progress = progress
        self.stats = ImportStats()

    def import_paths(self, paths: list[Path]) -> ImportStats:
        for path in expand_paths(paths, self.PATTERN):
            self.import_file(path)
        return self.stats

    def import_file(self, path: Path) -> None:
        raise NotImplementedError


def expand_paths(paths: list[Path], pattern: str) -> list[Path]:
    """Files named directly, and files matching `pattern` below directories; a missing path is an
    error for the whole command."""
    files: list[Path] = []
    for p in paths:
        if p.is_file():
            files.append(p.resolve())
        elif p.is_dir():
            files.extend(sorted(f.resolve() for f in p.rglob(pattern) if f.is_file()))
        else:
            raise ImportPathError(f"{p}: no such file or directory")
    return files


def read_lines(path: Path, start: int) -> Iterator[tuple[int, int, bytes]]:
    """(line number, offset after the line, bytes) of each complete line from `start`; a last
    line without its newline is left for the next run (the observer may still be writing it)."""
    line_no = 0
    with path.open("rb") as fh:
        if start:
            # Count lines before the resume point for error messages that name the right line.
            remaining = start
            while remaining > 0:
                chunk = fh.read(min(remaining, 1 << 20))
                if not chunk:
                    break
                line_no += chunk.count(b"\n")
                remaining -= len(chunk)
        offset = start
        for raw in fh:
            if not raw.endswith(b"\n"):
                return
            line_no += 1
            offset += len(raw)
            yield line_no, offset, raw
