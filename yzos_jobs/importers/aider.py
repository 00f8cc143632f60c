"""The aider importer: chat history files (see `aider_history` for how one is read).

A session is imported once it is closed: a later header exists, or the file has been idle for
`importers.session_idle_s`. Closed sessions are written (`FileImporter.write_sessions`) with their
importer_seen rows, in batches, each batch with the file mark.

Text appended to a session after it was closed as idle (aider was still running) is a new
segment of that session: the file mark stays at the last session's header, so the next run reads
that session again and writes what lies past the part already imported, with its own
importer_seen row (`segment <from>-<to>`, byte offsets in the session), its own candidates'
source id (`<external id>#<n>`) and, with a model, its own digest. A batch written before the
whole file was read (the import was killed) stores the offset it reached as if the file ended
there, so the next run goes on from it at once, idle or not. Once the last session has been
read with the file idle, the file is not read again until it changes (its mark's `updated_at`
says when it was read).

The file is streamed: one batch of sessions is held at a time, never the file.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.orm import Session

from yzos_jobs.db.importer_state import FileMark, claim_records, records_named
from yzos_jobs.files import open_regular
from yzos_jobs.importers.aider_history import (
    HISTORY_FILE,
    AiderSession,
    FileRoot,
    closed_session,
    read_sessions,
)
from yzos_jobs.importers.base import FileImporter, OpenedFile, head_hash
from yzos_jobs.importers.closed_session import ClosedSession, segment_of
from yzos_jobs.importers.reading import LinesBefore, Position
from yzos_jobs.importers.records import Unit, Written

IMPORTER = "aider"
SESSIONS_PER_BATCH = 100
SEGMENT = "segment"
LEGACY_COVERED = 1 << 62  # a session imported before segments were kept counts as complete


def coverage(record_ids: Sequence[str]) -> tuple[int, int]:
    """(bytes of the session already imported, segments written) from its importer_seen rows."""
    ranges = [r.split(" ", 1)[1] for r in record_ids if r.startswith(f"{SEGMENT} ")]
    ends = [int(r.split("-", 1)[1]) for r in ranges if "-" in r and r.split("-", 1)[1].isdigit()]
    if not ends:
        return (LEGACY_COVERED, 1) if SEGMENT in record_ids else (0, 0)
    return max(ends), len(ends)


class AiderImporter(FileImporter):
    NAME = IMPORTER
    PATTERN = HISTORY_FILE

    def import_file(self, path: Path) -> None:
        opened = self.open_file(path)
        now, previous = opened.now, opened.previous
        looked_at = time.time()  # when the file's idleness was judged
        modified = now.mtime_ns / 1e9
        idle = looked_at - modified >= self.idle_s
        unchanged = previous is not None and (
            previous.size,
            previous.mtime_ns,
            previous.head_hash,
        ) == (now.size, now.mtime_ns, now.head_hash)
        # The last session was read as closed (idle) and the file is as it was then: it was
        # imported, and only text appended to it is news. The mark's `read_at` says so: when
        # the file was judged idle, or its modification time itself where the last session was
        # left open (so that no later reading, whatever its `session_idle_s`, takes it for read).
        read_idle = (
            previous is not None
            and previous.read_at is not None
            and previous.read_at.timestamp() > modified
            and previous.read_at.timestamp() - modified >= self.idle_s
        )
        if unchanged and (previous.offset >= now.size or not idle or read_idle):
            self.stats.files_unchanged += 1
            # the text past the mark is the last session, still going on: read once idle
            self.stats.sessions_open += previous.offset < now.size and not read_idle
            return  # nothing new, and no open session has gone idle
        file_root = FileRoot(path)
        batch: list[AiderSession] = []
        resume_at, found, left_open = now.size, False, False
        before = LinesBefore(path, opened.start)
        lines = self.numbered_lines(opened, before, keep_unfinished=False)
        for session in read_sessions(lines, before, path, self.stats.error):
            found = True
            if not session.closed:
                resume_at = session.offset  # later text continues it: read it again next time
                if not idle:
                    self.stats.sessions_open += 1
                    left_open = True
                    break
            batch.append(session)
            if len(batch) >= SESSIONS_PER_BATCH and session.closed:
                end = session.end  # a mark as if the file ended here: the next run goes on
                mark = FileMark(end, now.mtime_ns, end, head_hash(path, end))
                self._write_batch(opened, batch, mark, file_root, unchanged)
                batch = []
        read_at = datetime.fromtimestamp(modified if left_open else looked_at, UTC)
        final = replace(now, offset=resume_at, read_at=read_at)
        wrote = self._write_batch(opened, batch, final, file_root, unchanged)
        if unchanged and not wrote:
            self.stats.files_unchanged += 1
        if not found and opened.start == 0 and now.size:
            self.stats.note(f"no aider session found in {path} ({_why_none(path)})")

    def _write_batch(
        self,
        opened: OpenedFile,
        sessions: list[AiderSession],
        mark: FileMark,
        file_root: FileRoot,
        reread: bool,
    ) -> int:
        """The closed sessions past what was imported of them, in one transaction with their
        importer_seen rows and the file mark; then, without a model, their session end. Returns
        how many were new. `reread`: the file is unchanged and its idle last session was read
        again, so finding it imported is no repeat worth counting."""
        with self.ctx.sessions() as db:
            seen = records_named(db, IMPORTER, [s.external_id for s in sessions], SEGMENT)
        mtime = datetime.fromtimestamp(opened.now.mtime_ns / 1e9, UTC)
        units: list[Unit[tuple[ClosedSession, str]]] = []
        for s in sessions:
            covered, written = coverage(seen.get(s.external_id, []))
            length = s.end - s.offset
            if covered >= length:
                self.stats.skipped += not reread  # imported before: a copy
                continue
            unit = self.prepare(
                s.where,
                lambda s=s, c=covered, n=written, n_bytes=length: self._unit(
                    s, c, n, n_bytes, file_root, mtime
                ),
            )
            if unit is not None:
                units.append(unit)
        written_now = self.commit(opened, units, mark.offset, self._write, mark)
        self.after_sessions(written_now)
        return len(units)

    def _unit(
        self,
        s: AiderSession,
        covered: int,
        segments: int,
        length: int,
        file_root: FileRoot,
        mtime: datetime,
    ) -> Unit[tuple[ClosedSession, str]]:
        first_line = s.where.before() if isinstance(s.where, Position) else 0
        whole = closed_session(s, first_line, s.repository.root(s.path, file_root), mtime)
        part = segment_of(
            whole,
            [e for (at, _), e in zip(s.events, whole.events, strict=True) if at >= covered],
            segments + 1,
        )
        extent = f"{SEGMENT} {covered}-{length}"
        key = (s.external_id, SEGMENT if covered == 0 else extent)
        return Unit(s.where, key, (part, extent))

    def _write(self, db: Session, units: list[Unit[tuple[ClosedSession, str]]]) -> Written:
        claim_records(db, IMPORTER, [(u.item[0].external_id, u.item[1]) for u in units])
        return self.write_sessions(db, [u.item[0] for u in units])


# Byte order marks of the encodings aider never writes, that an editor's "Save as Unicode" or a
# PowerShell 5 redirect gives a history.
_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")


def _why_none(path: Path) -> str:
    """Why a history showed no session: read as UTF-8, a UTF-16 file has no line aider wrote."""
    try:
        with open_regular(path) as fh:
            first = fh.read(2)
    except OSError:
        first = b""
    if first in _UTF16_MARKS:
        return "it is UTF-16; aider writes UTF-8: save it as UTF-8 to import it"
    return "no '# aider chat started at' line with a date and time it can read"
