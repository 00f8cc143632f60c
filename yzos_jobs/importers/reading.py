"""Reading an append-only file line by line from an offset, in bounded memory.

A line longer than MAX_LINE_BYTES (its newline included) is not held: it is read past in
chunks, reported once, and the offset moves beyond it, even when it has no newline yet (a
1 GB file with no newline is one bad line, not 1 GB of memory nor a re-read on every run). The
rest of such a line, appended later, is recognised on the next run (the byte before the resume
offset is not a newline) and passed over without a second report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from yzos_jobs.files import open_regular

MAX_LINE_BYTES = 16 << 20  # 16 MiB: far above any real JSONL record or transcript line
_CHUNK = 1 << 20

# (line number counted from the start offset, offset after the line, the line's bytes, or None
# for a line passed over)
Line = tuple[int, int, bytes | None]


def lines_before(fh: BinaryIO, offset: int) -> int:
    """Newlines in the first `offset` bytes: the line number error messages count from."""
    fh.seek(0)
    count, remaining = 0, offset
    while remaining > 0:
        chunk = fh.read(min(remaining, _CHUNK))
        if not chunk:
            break
        count += chunk.count(b"\n")
        remaining -= len(chunk)
    return count


class LinesBefore:
    """The number of lines before an offset, counted on first use only: counting means reading
    everything before it, which a run that reports nothing never needs."""

    __slots__ = ("_count", "offset", "path")

    def __init__(self, path: Path, offset: int) -> None:
        self.path, self.offset = path, offset
        self._count: int | None = 0 if offset == 0 else None

    def __call__(self) -> int:
        if self._count is None:
            with open_regular(self.path) as fh:
                self._count = lines_before(fh, self.offset)
        return self._count


class Position:
    """A line of a file, as messages name it: `path:line`."""

    __slots__ = ("before", "line")

    def __init__(self, before: LinesBefore, line: int) -> None:
        self.before, self.line = before, line

    @property
    def file_line(self) -> int:
        """The line's number in the file (`line` counts from where this read started)."""
        return self.before() + self.line

    def __str__(self) -> str:
        return f"{self.before.path}:{self.file_line}"


# A line as an importer's reader takes it: where it is, the offset after it, its bytes or None
PositionedLine = tuple[Position, int, bytes | None]


def _skip_rest_of_line(fh: BinaryIO) -> tuple[int, bool]:
    """Read past the rest of the current line: (bytes read, whether its newline was found)."""
    skipped = 0
    while True:
        chunk = fh.readline(_CHUNK)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped, bool(chunk)


def read_lines(
    fh: BinaryIO,
    start: int,
    *,
    keep_unfinished: bool,
    on_long_line: Callable[[int], None],
) -> Iterator[Line]:
    """Lines from byte offset `start`, numbered from there (line 1 is the first line read), the
    file's first without a UTF-8 byte order mark. A last line without its newline is left for
    the next run (the writer may still be at it) unless `keep_unfinished`. `on_long_line(line
    number)` is called for each line past MAX_LINE_BYTES, which is yielded with None for its
    bytes."""
    line_no = 0
    offset = start
    if start:
        fh.seek(start - 1)
        if fh.read(1) != b"\n":  # resuming inside a line passed over last time
            skipped, finished = _skip_rest_of_line(fh)
            offset += skipped
            line_no += finished
            yield line_no, offset, None
    readline = fh.readline
    while True:
        raw = readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES:
            line_no += 1
            skipped, _ = (0, True) if raw.endswith(b"\n") else _skip_rest_of_line(fh)
            offset += len(raw) + skipped
            on_long_line(line_no)
            yield line_no, offset, None
            continue
        if raw[-1:] != b"\n" and not keep_unfinished:
            return
        line_no += 1
        offset += len(raw)
        if offset == len(raw):  # the file's first line: an editor may have saved a BOM before it
            raw = raw.removeprefix(_BOM)
        yield line_no, offset, raw


_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark


def positioned_lines(path: Path, *, until: int | None = None) -> Iterator[PositionedLine]:
    """A file's finished lines from its start, each with its Position, read again silently (a
    line past MAX_LINE_BYTES was reported when first read): up to offset `until` where given."""
    before = LinesBefore(path, 0)
    with open_regular(path) as fh:
        for n, end, raw in read_lines(fh, 0, keep_unfinished=False, on_long_line=lambda n: None):
            if until is not None and end > until:
                return
            yield Position(before, n), end, raw
