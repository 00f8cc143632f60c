"""What every file importer shares: finding files, file marks and resume, reading lines in
bounded memory, progress, timestamps. A record that cannot be read is one line naming its file
and line; a batch of records is written with its file mark by batches.write_batch, where a
record that cannot be written costs only itself.

The coding-session importers (aider, Claude Code) also share how a closed session is written
(`write_sessions`): its activity session with its own start and end, its line-level candidates
and, with a model to triage with, its digest. With a model, the candidates are held while the
session waits for triage (`entity_promote` runs it); without one (dry_run), they are pending and
promoted inline once the transaction has committed (`after_sessions`), as with triage off.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import orjson
from sqlalchemy.orm import Session

from yzos_jobs.db.activity_sessions import SessionFacts, upsert_activity_sessions
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.importer_state import FileMark, load_mark, save_mark
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.triage_queue import queue_triage
from yzos_jobs.files import describe, find_regular_files, open_regular
from yzos_jobs.importers.batches import Write, write_batch, write_each
from yzos_jobs.importers.closed_session import ClosedSession
from yzos_jobs.importers.reading import (
    MAX_LINE_BYTES,
    Line,
    LinesBefore,
    Position,
    PositionedLine,
    read_lines,
)
from yzos_jobs.importers.records import (
    ImportPathError,
    ImportRecordError,
    ImportStats,
    Unit,
    Written,
)
from yzos_jobs.importers.same_work import OpenTaskNames
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.supply.session_end import SessionEnd
from yzos_jobs.text import shown, storable_name

T = TypeVar("T")
R = TypeVar("R")

HEAD_BYTES = 4096
PROGRESS_STEP = 1 << 18  # bytes read between progress updates
# What a bad value raises while a record is turned into rows (untrusted data: a field of an
# unexpected type, an object nested past the recursion limit, a number too big for a date).
PARSE_ERRORS = (
    ValueError,
    TypeError,
    AttributeError,
    LookupError,
    OverflowError,
    RecursionError,
)


def check_import_path(path: Path) -> None:
    """Raise `ImportPathError` unless `path` is a directory to search or a regular file."""
    if path.is_dir() or path.is_file():
        return
    if path.exists():
        raise ImportPathError(f"{path}: not a regular file")
    raise ImportPathError(f"{path}: no such file or directory")


@dataclass(frozen=True)
class OpenedFile:
    """A file about to be read: its mark now (offset = its size), the mark stored by the last
    run, and the offset reading resumes from."""

    path: Path
    key: str  # the path as importer_files stores it
    now: FileMark
    previous: FileMark | None
    start: int

    @property
    def fully_read(self) -> bool:
        """Unchanged since a run that read it to the end."""
        return self.previous == self.now


def path_key(path: Path) -> str:
    """The path as stored: a name that is not UTF-8 (Python decodes it with surrogateescape)
    keeps its bytes as backslash escapes instead of failing to encode."""
    return storable_name(os.fsdecode(path))


def head_hash(path: Path, length: int) -> str:
    """Hash of the file's first bytes and of those just before `length` (where a read of it
    ended): tells a file that only grew since from one replaced, or edited before that point (a
    line deleted there shifts the bytes before it: reading on from the old offset would start
    inside a record and lose it)."""
    with open_regular(path) as fh:
        head = fh.read(min(length, HEAD_BYTES))
        tail = b""
        if length > HEAD_BYTES:
            start = max(HEAD_BYTES, length - HEAD_BYTES)
            fh.seek(start)
            tail = fh.read(length - start)
    return hashlib.blake2b(head + b"\0" + tail, digest_size=16).hexdigest()


def current_mark(path: Path) -> FileMark:
    st = os.stat(path)
    return FileMark(st.st_size, st.st_mtime_ns, st.st_size, head_hash(path, st.st_size))


def resume_offset(path: Path, previous: FileMark | None, now: FileMark) -> int:
    """Where to start reading: the stored offset if the file only grew (its first bytes, and
    those before where the last read ended, are the ones seen then), else the beginning."""
    if previous is None or now.size < previous.size:
        return 0
    if head_hash(path, previous.size) != previous.head_hash:
        return 0
    return previous.offset


def parse_timestamp(value: object, where: str | Position) -> datetime | None:
    """A timestamp as every importer reads one, in UTC: ISO 8601 text (`Z` or no offset is UTC)
    or seconds since the epoch; None when absent. Anything else, and a time outside years 1 to
    9999 once in UTC (what both databases and Python hold), is the record's error: reported and
    the record skipped, never clamped."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, str):
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            parsed = datetime.fromtimestamp(value, UTC)
        else:
            raise ValueError(value)
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError, OSError) as exc:
        reason = _out_of_range(exc) if isinstance(value, str) else None
        raise ImportRecordError(
            where,
            f"not a timestamp in years 1 to 9999 UTC: {shown(value)}"
            + (f" ({reason})" if reason else ""),
        ) from None


def _out_of_range(exc: Exception) -> str | None:
    """Which part of a timestamp of ISO 8601's shape names nothing real (`2024-02-30`: "day is
    out of range for month"), as Python says it; None for text of another shape. Python's words
    for an offset name its own types, so that one is said here."""
    said = str(exc)
    if said.startswith("offset"):
        return "an offset must be less than 24 hours"
    return (
        said
        if said.startswith(("year", "month", "day", "hour", "minute", "second", "date"))
        else None
    )


def parse_json_object(raw: bytes, where: str | Position) -> dict[str, Any]:
    """One line as a JSON object (invalid UTF-8 replaced); anything else, nesting past the
    recursion limit included, is the line's error. orjson reads it (a transcript's import is
    mostly this parse; an integer past 64 bits comes back as a float), the standard library
    what orjson refuses (NaN, a lone surrogate, invalid UTF-8) and the error's wording."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        obj = _parsed_slowly(raw, where)
    if not isinstance(obj, dict):
        raise ImportRecordError(where, "not a JSON object")
    return obj


def _parsed_slowly(raw: bytes, where: str | Position) -> Any:
    try:
        return json.loads(raw.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise ImportRecordError(where, f"not JSON ({exc.msg})") from None
    except RecursionError:
        raise ImportRecordError(where, "not JSON (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer past Python's 4300-digit conversion limit
        raise ImportRecordError(where, f"not JSON ({str(exc)[:120]})") from None


class FileImporter:
    """Imports files named directly or found below directories by `PATTERN`; `NAME` keys its
    importer_seen and importer_files rows."""

    NAME = ""
    PATTERN = "*"

    def __init__(
        self,
        ctx: JobContext,
        progress: Callable[[int], None] | None = None,
        total: Callable[[int], None] | None = None,
    ) -> None:
        """`progress`: told the bytes read, and once a file is done, the rest of it (read by an
        earlier import, or left for later: a session still going on); `total`: told the bytes
        of the files to import, once they are listed."""
        self.ctx = ctx
        self.limit = ctx.settings.importers.max_field_chars
        self.idle_s = ctx.settings.importers.session_idle_s
        self.progress = progress
        self.total = total
        self._sizes: dict[Path, int] = {}  # the files' sizes when the total was told
        self.stats = ImportStats()
        # With a model, closed coding sessions are triaged (their candidates held meanwhile).
        self.triage = ctx.classifier.active_model_id() is not None
        self.session_end = SessionEnd(ctx)
        # A work item close to an open task of its project is a sighting of that task.
        self.open_tasks = OpenTaskNames(ctx.settings.importers.same_task_similarity)

    def import_paths(self, paths: list[Path]) -> ImportStats:
        with self.importing():
            self.import_each(self._expand(paths))
        return self.stats

    @contextmanager
    def importing(self) -> Iterator[None]:
        """Around one import of any number of `import_each` calls: the sessions they ended are
        promoted at the end (see SessionEnd)."""
        try:
            yield
            self.session_end.finish()  # if the import failed, entity_promote takes the rest
        finally:
            self.session_end.close()
            self.stats.promoted += self.session_end.promoted
            self.stats.merged += self.session_end.merged
            if self.session_end.failure:
                self.stats.note(
                    f"session end stopped ({self.session_end.failure}): the candidates it did "
                    "not promote wait for entity_promote"
                )

    def import_each(self, files: list[Path]) -> None:
        self.tell_total(files)
        for path in files:
            if self.ctx.stop.is_set():
                break  # the daemon was asked to stop: the files left are read next time
            self.stats.files += 1
            with self.done_with([path]):
                try:
                    self.import_file(path)
                except OSError as exc:  # unreadable: one line, and the other files are imported
                    self._unreadable(path, exc)

    def tell_total(self, files: list[Path]) -> None:
        if self.total is not None:
            self._sizes = {f: _size(f) for f in files}
            self.total(sum(self._sizes.values()))

    @contextmanager
    def done_with(self, files: list[Path]) -> Iterator[None]:
        """Around importing `files`: once done, the progress is told whatever of their bytes
        was not read now, so that the bar reaches its total."""
        read = self.stats.bytes_read
        try:
            yield
        finally:
            if self.progress is not None and self._sizes:
                rest = sum(self._sizes.get(f, 0) for f in files) - (self.stats.bytes_read - read)
                if rest > 0:
                    self.progress(rest)

    def import_unit(self, files: list[Path]) -> None:
        """One unit the daemon locks and imports (`sources.feed`): a file, for most importers."""
        self.import_each(files)

    def import_file(self, path: Path) -> None:
        raise NotImplementedError

    # --- files ----------------------------------------------------------------------------

    def _expand(self, paths: list[Path]) -> list[Path]:
        """Files named directly, and regular files matching PATTERN below directories. A path
        that does not exist, or names something that is neither a file nor a directory, is an
        error for the whole command; what cannot be read below a directory is one line each."""
        files: list[Path] = []
        for p in paths:
            check_import_path(p)
            if p.is_dir():
                files.extend(find_regular_files(p, self.PATTERN, self._unreadable))
            else:
                files.append(p.resolve())
        return list(dict.fromkeys(files))  # a file named twice (or below two paths) once

    def _unreadable(self, path: Path, exc: OSError) -> None:
        self.stats.error(ImportRecordError(str(path), describe(exc)))

    def open_file(self, path: Path) -> OpenedFile:
        now = current_mark(path)
        key = path_key(path)
        with self.ctx.sessions() as s:
            previous = load_mark(s, self.NAME, key)
        return OpenedFile(path, key, now, previous, resume_offset(path, previous, now))

    def lines(
        self, opened: OpenedFile, start: int, *, keep_unfinished: bool
    ) -> Iterator[PositionedLine]:
        """The file's lines from `start` (see reading.read_lines) with their positions, counted
        as progress; a line past the length bound is reported here and comes with None."""
        before = LinesBefore(opened.path, start)
        for line_no, end, raw in self.numbered_lines(
            opened, before, keep_unfinished=keep_unfinished
        ):
            yield Position(before, line_no), end, raw

    def numbered_lines(
        self, opened: OpenedFile, before: LinesBefore, *, keep_unfinished: bool
    ) -> Iterator[Line]:
        """As `lines`, numbered from `before.offset` without a Position each (a reader that
        names few lines makes its own); progress is counted in steps, not line by line."""

        def long_line(line_no: int) -> None:
            message = f"line longer than {MAX_LINE_BYTES} bytes"
            self.stats.error(ImportRecordError(Position(before, line_no), message))

        counted = last = before.offset
        try:
            with open_regular(opened.path) as fh:
                for line in read_lines(
                    fh, before.offset, keep_unfinished=keep_unfinished, on_long_line=long_line
                ):
                    last = line[1]
                    if last - counted >= PROGRESS_STEP:
                        self.advance(last - counted)
                        counted = last
                    yield line
        finally:  # also when the reader stops early: what it was given is counted
            self.advance(last - counted)

    def advance(self, n: int) -> None:
        self.stats.bytes_read += n
        if self.progress is not None and n:
            self.progress(n)

    # --- records --------------------------------------------------------------------------

    def prepare(self, where: str | Position, build: Callable[[], R]) -> R | None:
        """Run `build` (one record turned into what will be written); a bad value in the record
        is reported with `where` and gives None."""
        try:
            return build()
        except ImportRecordError as err:
            self.stats.error(err)
        except PARSE_ERRORS as exc:
            text = str(exc).strip()
            detail = exc.__class__.__name__
            if text:
                detail += f": {text.splitlines()[0][:120]}"
            if isinstance(exc, RecursionError):
                detail = "nested too deeply"
            self.stats.error(ImportRecordError(where, f"cannot be read ({detail})"))
        return None

    def commit(
        self,
        opened: OpenedFile,
        units: Sequence[Unit[T]],
        end: int,
        write: Write[T],
        mark: FileMark | None = None,
    ) -> Written:
        """Write the new ones of `units` with `write` and move the file mark to `end` (or store
        `mark`), in one transaction (see batches.write_batch); counted once committed."""
        return self.commit_marks([(opened, mark or replace(opened.now, offset=end))], units, write)

    def commit_marks(
        self,
        marks: Sequence[tuple[OpenedFile, FileMark]],
        units: Sequence[Unit[T]],
        write: Write[T],
    ) -> Written:
        """Write the new ones of `units` and store the files' marks in one transaction."""

        def save(session: Session) -> None:
            for opened, mark in marks:
                save_mark(session, self.NAME, opened.key, mark)

        written = write_batch(self.ctx.sessions, self.NAME, units, write, save)
        self.stats.merge(written.stats)
        return written

    # --- closed coding sessions -----------------------------------------------------------

    def write_sessions(self, db: Session, sessions: Sequence[ClosedSession]) -> Written:
        """Write closed sessions (or segments) in the caller's transaction: each its activity
        session (its project, its own start and end), its line-level candidates (a candidate the
        database refuses is reported at its line, the others written) and, with a model, its
        digest queued for triage, the candidates held until then. A session without a digest
        line has nothing to triage: its candidates are pending."""
        now = utcnow()
        written = Written()
        upsert_activity_sessions(
            db,
            [
                SessionFacts(s.source, s.external_id, s.project_path, s.started_at, s.ended_at)
                for s in sessions
            ],
        )
        triaged = [s for s in sessions if self.triage and s.digest_lines()]
        held = {s.source_id for s in triaged}
        self.open_tasks.load(db, list(dict.fromkeys(s.project_path for s in sessions)))
        same_work = self.open_tasks.same_work
        asked_again = self.ctx.settings.importers.asked_again_similarity
        rows = [(s, c) for s in sessions for c in s.candidates(self.limit, same_work, asked_again)]

        def insert(db: Session, items: Sequence[tuple[ClosedSession, NewCandidate]]) -> None:
            insert_candidates(db, [c for s, c in items if s.source_id in held], now, held=True)
            insert_candidates(db, [c for s, c in items if s.source_id not in held], now)

        failed = write_each(db, rows, insert)
        for (s, c), why in failed:
            written.stats.error(ImportRecordError(f"{s.file}:{c.source_line}", why))
        for s in triaged:
            queue_triage(db, s.source, s.external_id, s.part, "digest", s.payload(), now)
        written.stats.digests += len(triaged)
        written.stats.candidates += len(rows) - len(failed)
        written.stats.sessions += sum(s.segment == 1 for s in sessions)
        written.stats.sessions_ended += len(sessions)
        if not self.triage:
            written.ended.extend(s.source_id for s in sessions)
        return written

    def after_sessions(self, written: Written) -> None:
        """Without a model: the ended sessions' candidates are promoted (see SessionEnd)."""
        self.session_end.ended(written.ended)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # gone or unreadable since listed: reported when it is opened
        return 0
