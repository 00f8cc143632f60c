"""What every file importer shares: finding files, file marks and resume, reading lines in
bounded memory, progress, timestamps, and writing a batch so that a bad record costs only itself.

A batch is written in one transaction with the file mark. If a record in it cannot be written
(a value the database refuses, a constraint), the batch is written again record by record, each
in a savepoint: the bad one is reported with its file and line and skipped, the others are
committed, and the mark moves past all of them. A record key seen before is a repeat: the first
wins; a repeat with different content (where content is compared) is reported as a conflict.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, StatementError
from sqlalchemy.orm import Session

from yzos_jobs.db.engine import run_in_transaction
from yzos_jobs.db.importer_state import (
    FileMark,
    claim_records,
    load_mark,
    remember_contents,
    save_mark,
    stored_contents,
)
from yzos_jobs.files import NotRegularFile, find_regular_files, open_regular, reason
from yzos_jobs.importers.reading import MAX_LINE_BYTES, LinesBefore, Position, read_lines
from yzos_jobs.importers.records import (
    ImportPathError,
    ImportRecordError,
    ImportStats,
    Unit,
    Written,
)
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.text import shown

T = TypeVar("T")
R = TypeVar("R")

HEAD_BYTES = 4096
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
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def head_hash(path: Path, length: int = HEAD_BYTES) -> str:
    """Hash of the file's first bytes: tells a grown file from a replaced one."""
    with open_regular(path) as fh:
        return hashlib.blake2b(fh.read(min(length, HEAD_BYTES)), digest_size=16).hexdigest()


def current_mark(path: Path) -> FileMark:
    st = os.stat(path)
    return FileMark(st.st_size, st.st_mtime_ns, st.st_size, head_hash(path, st.st_size))


def resume_offset(path: Path, previous: FileMark | None, now: FileMark) -> int:
    """Where to start reading: the stored offset if the file only grew (its first bytes are the
    ones seen last time), else the beginning."""
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
    except (ValueError, OverflowError, OSError):
        raise ImportRecordError(
            where, f"not a timestamp in years 1 to 9999 UTC: {shown(value)}"
        ) from None


def parse_json_object(raw: bytes, where: str | Position) -> dict[str, Any]:
    """One line as a JSON object (invalid UTF-8 replaced); anything else, nesting past the
    recursion limit included, is the line's error."""
    try:
        obj = json.loads(raw.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise ImportRecordError(where, f"not JSON ({exc.msg})") from None
    except RecursionError:
        raise ImportRecordError(where, "not JSON (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer past Python's 4300-digit conversion limit
        raise ImportRecordError(where, f"not JSON ({str(exc)[:120]})") from None
    if not isinstance(obj, dict):
        raise ImportRecordError(where, "not a JSON object")
    return obj


def is_record_error(exc: BaseException) -> bool:
    """An error one record's values cause while it is written, as opposed to the database
    going away (OperationalError, raised on), or a mistake in the statement itself."""
    if isinstance(exc, DataError | IntegrityError):
        return True
    if isinstance(exc, DBAPIError):
        return False
    # StatementError: a value that could not be bound (e.g. a date out of range).
    return isinstance(
        exc, StatementError | ImportRecordError | ValueError | OverflowError | RecursionError
    )


def _rounds(units: Sequence[Unit[T]]) -> list[list[Unit[T]]]:
    """Units in rounds: the first of each key in the first round, a key's second in the second,
    and so on. A round's keys are claimed together; a later round finds its keys taken (or, if
    the earlier one could not be written, free), so a repeat within a batch is judged exactly
    like a repeat across batches."""
    occurrences: dict[tuple[str, str], int] = {}
    rounds: list[list[Unit[T]]] = []
    for unit in units:
        n = occurrences.get(unit.key, 0)
        occurrences[unit.key] = n + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(unit)
    return rounds


def _cannot_store(exc: BaseException) -> str:
    cause = getattr(exc, "orig", None) or exc
    text = str(cause).strip()
    detail = text.splitlines()[0] if text else cause.__class__.__name__
    return f"cannot be stored ({detail[:160]})"


class FileImporter:
    """Imports files named directly or found below directories by `PATTERN`; `NAME` keys its
    importer_seen and importer_files rows."""

    NAME = ""
    PATTERN = "*"

    def __init__(self, ctx: JobContext, progress: Callable[[int], None] | None = None) -> None:
        self.ctx = ctx
        self.limit = ctx.settings.importers.max_field_chars
        self.idle_s = ctx.settings.importers.session_idle_s
        self.progress = progress
        self.stats = ImportStats()

    def import_paths(self, paths: list[Path]) -> ImportStats:
        for path in self._expand(paths):
            self.stats.files += 1
            try:
                self.import_file(path)
            except OSError as exc:  # unreadable: one line, and the other files are imported
                self._unreadable(path, exc)
        return self.stats

    def import_file(self, path: Path) -> None:
        raise NotImplementedError

    # --- files ----------------------------------------------------------------------------

    def _expand(self, paths: list[Path]) -> list[Path]:
        """Files named directly, and regular files matching PATTERN below directories. A path
        that does not exist, or names something that is neither a file nor a directory, is an
        error for the whole command; what cannot be read below a directory is one line each."""
        files: list[Path] = []
        for p in paths:
            if p.is_dir():
                files.extend(find_regular_files(p, self.PATTERN, self._unreadable))
            elif p.is_file():
                files.append(p.resolve())
            elif p.exists():
                raise ImportPathError(f"{p}: not a regular file")
            else:
                raise ImportPathError(f"{p}: no such file or directory")
        return files

    def _unreadable(self, path: Path, exc: OSError) -> None:
        if isinstance(exc, NotRegularFile):
            self.stats.error(ImportRecordError(str(path), "not a regular file"))
        else:
            self.stats.error(ImportRecordError(str(path), f"cannot read ({reason(exc)})"))

    def open_file(self, path: Path) -> OpenedFile:
        now = current_mark(path)
        key = path_key(path)
        with self.ctx.sessions() as s:
            previous = load_mark(s, self.NAME, key)
        return OpenedFile(path, key, now, previous, resume_offset(path, previous, now))

    def lines(
        self, opened: OpenedFile, start: int, *, keep_unfinished: bool
    ) -> Iterator[tuple[Position, int, bytes | None]]:
        """The file's lines from `start` (see reading.read_lines) with their positions, counted
        as progress; a line past the length bound is reported here and comes with None."""
        before = LinesBefore(opened.path, start)

        def long_line(line_no: int) -> None:
            message = f"line longer than {MAX_LINE_BYTES} bytes"
            self.stats.error(ImportRecordError(Position(before, line_no), message))

        last = start
        with open_regular(opened.path) as fh:
            lines = read_lines(fh, start, keep_unfinished=keep_unfinished, on_long_line=long_line)
            for line_no, end, raw in lines:
                self.advance(end - last)
                last = end
                yield Position(before, line_no), end, raw

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
        write: Callable[[Session, list[Unit[T]]], Written],
    ) -> Written:
        """Write the new ones of `units` with `write`, and move the file mark to `end`, in one
        transaction; record by record if one of them cannot be written."""
        rounds = _rounds(units)
        mark = replace(opened.now, offset=end)

        def at_once(session: Session) -> Written:
            written = Written()
            for group in rounds:
                written.add(self._claim_and_write(session, group, write))
            save_mark(session, self.NAME, opened.key, mark)
            return written

        def one_by_one(session: Session) -> Written:
            written = Written()
            for unit in (unit for group in rounds for unit in group):
                try:
                    with session.begin_nested():
                        written.add(self._claim_and_write(session, [unit], write))
                except Exception as exc:
                    if not is_record_error(exc):
                        raise
                    written.stats.error(ImportRecordError(unit.where, _cannot_store(exc)))
            save_mark(session, self.NAME, opened.key, mark)
            return written

        try:
            written = run_in_transaction(self.ctx.sessions, at_once)
        except Exception as exc:
            if not is_record_error(exc):
                raise
            written = run_in_transaction(self.ctx.sessions, one_by_one)
        self.stats.merge(written.stats)
        return written

    def _claim_and_write(
        self,
        session: Session,
        units: list[Unit[T]],
        write: Callable[[Session, list[Unit[T]]], Written],
    ) -> Written:
        fresh = claim_records(session, self.NAME, [u.key for u in units])
        new = [u for u in units if u.key in fresh]
        written = Written()
        repeated = [u for u in units if u.key not in fresh]
        compared = [u.key for u in repeated if u.digest is not None]
        stored = stored_contents(session, self.NAME, compared) if compared else {}
        for unit in repeated:
            # No stored hash: imported before hashes were kept; taken as a copy.
            if unit.digest is None or stored.get(unit.key, unit.digest) == unit.digest:
                written.stats.skipped += 1
            else:
                written.stats.error(self._conflict(unit))
        remember_contents(
            session, self.NAME, {u.key: u.digest for u in new if u.digest is not None}
        )
        if new:
            written.add(write(session, new))
            written.stats.records += len(new)
        return written

    def _conflict(self, unit: Unit[T]) -> ImportRecordError:
        sid, rid = unit.key
        return ImportRecordError(
            unit.where,
            f"record_id {shown(rid)} of session {shown(sid)} was imported before with other "
            "content; the first is kept",
        )
