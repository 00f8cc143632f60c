"""The aider importer: `.aider.chat.history.md` files.

A session starts at each `# aider chat started at YYYY-MM-DD HH:MM:SS` line. `#### ` lines are
the user's messages (consecutive lines form one message), `> ` lines are aider's own output (the
command line, `Git repo: …`, `Added X to the chat.`, `Commit <sha> <subject>`), everything else is
the assistant's text. A session is imported once it is closed, i.e. a later header exists or the
file has been idle for `importers.session_idle_s`: one transaction writes its activity session,
its candidates (the project from the repository, tasks from commit subjects and requests) and its
importer_seen row (the per-segment lock); then the session end promotes them inline.

The file is streamed: one session's facts are held at a time, never the file, and the next run
starts at the first session that was still open.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from blake3 import blake3
from sqlalchemy.orm import Session

from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.sessions import upsert_activity_session
from yzos_jobs.db.types import utcnow
from yzos_jobs.entity import noise_filter
from yzos_jobs.importers.base import FileImporter, OpenedFile, parse_timestamp
from yzos_jobs.importers.reading import Position
from yzos_jobs.importers.records import ImportRecordError, Unit, Written
from yzos_jobs.supply.pipeline import apply_entities
from yzos_jobs.text import clean_text

IMPORTER = "aider"
SOURCE_KIND = "ai_tool"
HISTORY_FILE = ".aider.chat.history.md"
HEADER = re.compile(rb"^# aider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})")
COMMIT = re.compile(r"^Commit ([0-9a-f]{6,40}) (.+)$")
GIT_REPO = re.compile(r"^Git repo: (.+?)(?: with [\d,]+ files)?$")
ADDED = re.compile(r"^Added (.+) to the chat\.?$")
MODE_COMMANDS = ("/ask ", "/code ", "/architect ", "/context ")
REQUEST_CHARS = 300
SESSIONS_PER_BATCH = 100
IDENTITY_BYTES = 4096


@dataclass
class AiderSession:
    """What one session says, gathered line by line."""

    path: Path
    offset: int
    started_at: datetime
    where: Position  # its header line, for messages
    command: str | None = None
    repo: str | None = None
    files: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    commits: list[tuple[str, str]] = field(default_factory=list)
    _message: list[str] = field(default_factory=list)
    _head: bytearray = field(default_factory=bytearray)

    def raw_line(self, raw: bytes) -> None:
        if len(self._head) < IDENTITY_BYTES:
            self._head += raw[: IDENTITY_BYTES - len(self._head)]

    @property
    def external_id(self) -> str:
        """The session's identity: its start time and the hash of its first bytes. Not the
        file's path, so a moved or copied history file is not imported twice."""
        digest = blake3(bytes(self._head)).hexdigest()[:20]
        return f"{self.started_at:%Y%m%dT%H%M%S}:{digest}"

    def user_line(self, text: str) -> None:
        self._message.append(text)

    def other_line(self, text: str) -> None:
        self.end_message()
        if text.startswith("> "):
            self.tool_line(text[2:].strip())

    def tool_line(self, text: str) -> None:
        if self.command is None and (text.startswith("aider") or "/aider " in text):
            self.command = text
        elif m := GIT_REPO.match(text):
            self.repo = m.group(1).strip()
        elif m := ADDED.match(text):
            self.files.append(m.group(1).strip())
        elif m := COMMIT.match(text):
            self.commits.append((m.group(1), m.group(2).strip()))

    def end_message(self) -> None:
        if not self._message:
            return
        message = "\n".join(self._message).strip()
        self._message = []
        if not message:
            return  # `#### ` with nothing after it
        for prefix in MODE_COMMANDS:
            if message.startswith(prefix):
                message = message[len(prefix) :].strip()
        # aider logs `/ask X` and then X again: one request.
        if self.requests and self.requests[-1] == message:
            return
        self.requests.append(message)

    def repo_dir(self) -> str | None:
        if not self.repo or self.repo.lower() == "none":
            return None
        repo = PurePosixPath(self.repo)
        if repo.name == ".git":
            repo = repo.parent
        base = PurePosixPath(self.path.parent)
        full = repo if repo.is_absolute() else base / repo
        parts: list[str] = []
        for part in full.parts:  # resolve "..", without touching the file system
            if part == ".." and len(parts) > 1:
                parts.pop()
            elif part not in (".", ""):
                parts.append(part)
        return str(PurePosixPath(*parts)) if parts else None


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    return line if len(line) <= REQUEST_CHARS else line[: REQUEST_CHARS - 1] + "…"


def session_candidates(session: AiderSession, limit: int) -> list[NewCandidate]:
    """The project from the repository, tasks from commit subjects and from requests."""
    out: list[NewCandidate] = []
    first_request = _first_line(session.requests[0]) if session.requests else ""

    def add(raw: str, kind: str, context: str) -> None:
        raw_text = clean_text(raw, limit)
        if raw_text is None or noise_filter.is_noise(raw_text):
            return
        out.append(
            NewCandidate(
                raw_text=raw_text,
                suggested_kind=kind,
                source_kind=SOURCE_KIND,
                source_id=session.external_id,
                surrounding_text=clean_text(context, limit),
                created_at=session.started_at,
            )
        )

    repo_dir = session.repo_dir()
    if repo_dir:
        context = f"aider session in {repo_dir}" + (f": {first_request}" if first_request else "")
        add(PurePosixPath(repo_dir).name, "project", context)
    for sha, subject in session.commits:
        add(subject, "task", f"aider commit {sha}: {subject}")
    for request in session.requests:
        line = _first_line(request)
        if line.startswith("/") or len(line.split()) < 2:
            continue  # a command, or a single token: structure, not a request
        add(line, "task", request)
    return out


def read_sessions(
    lines: Iterable[tuple[Position, int, bytes | None]],
    path: Path,
    start: int,
    report: Callable[[ImportRecordError], None],
) -> Iterator[tuple[AiderSession, int]]:
    """Sessions in `lines` (read from byte offset `start`), each with the offset where the next
    one begins (the end of the lines for the last one). Lines are decoded leniently: CRLF and
    invalid UTF-8 are fine. A header whose date is impossible is reported, and the lines up to
    the next header belong to no session."""
    current: AiderSession | None = None
    offset = start
    for where, end, raw in lines:
        line_start, offset = offset, end
        if raw is None:
            continue  # a line past the length bound, already reported
        header = HEADER.match(raw)
        if header:
            if current is not None:
                current.end_message()
                yield current, line_start
            current = None
            try:
                started = parse_timestamp(header.group(1).decode(), where)
            except ImportRecordError as err:
                report(err)
                continue
            assert started is not None
            current = AiderSession(path, line_start, started, where)
            current.raw_line(raw)
            continue
        if current is None:
            continue  # text before the first header belongs to no session
        current.raw_line(raw)
        text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if text.startswith("#### ") or text == "####":
            current.user_line(text[5:])
        else:
            current.other_line(text)
    if current is not None:
        current.end_message()
        yield current, offset


class AiderImporter(FileImporter):
    NAME = IMPORTER
    PATTERN = HISTORY_FILE

    def import_file(self, path: Path) -> None:
        opened = self.open_file(path)
        mark, previous = opened.now, opened.previous
        idle = time.time() - mark.mtime_ns / 1e9 >= self.idle_s
        unchanged = previous is not None and (
            previous.size,
            previous.mtime_ns,
            previous.head_hash,
        ) == (mark.size, mark.mtime_ns, mark.head_hash)
        if unchanged and (previous.offset >= mark.size or not idle):
            self.stats.files_unchanged += 1
            return  # nothing new, and no open session has gone idle
        closed: list[AiderSession] = []
        resume_at = mark.size
        lines = self.lines(opened, opened.start, keep_unfinished=True)
        for session, next_offset in read_sessions(lines, path, opened.start, self.stats.error):
            if next_offset >= mark.size and not idle:
                resume_at = session.offset  # still open: read again from here next time
                break
            closed.append(session)
            if len(closed) >= SESSIONS_PER_BATCH:
                self._import_sessions(opened, closed, next_offset)
                closed = []
        self._import_sessions(opened, closed, resume_at)

    def _import_sessions(
        self, opened: OpenedFile, sessions: list[AiderSession], next_offset: int
    ) -> None:
        """Closed sessions in one transaction with their importer_seen rows (one per session
        segment) and the file mark; then their session end promotes the candidates inline."""
        units: list[Unit[tuple[AiderSession, list[NewCandidate]]]] = []
        for session in sessions:
            rows = self.prepare(session.where, lambda s=session: session_candidates(s, self.limit))
            if rows is not None:
                unit = Unit(session.where, (session.external_id, "segment"), (session, rows))
                units.append(unit)
        written = self.commit(opened, units, next_offset, self._write)
        if written.ended:
            self.stats.promoted += apply_entities(self.ctx, written.ended).promoted

    def _write(
        self, db: Session, units: list[Unit[tuple[AiderSession, list[NewCandidate]]]]
    ) -> Written:
        now = utcnow()
        for unit in units:
            session = unit.item[0]
            repo_dir = session.repo_dir()
            upsert_activity_session(
                db,
                IMPORTER,
                session.external_id,
                project_path=noise_filter.normalize_project_path(repo_dir) if repo_dir else None,
                started_at=session.started_at,
                ended_at=now,
            )
        rows = [row for unit in units for row in unit.item[1]]
        insert_candidates(db, rows, now)
        written = Written(ended=[unit.key[0] for unit in units if unit.item[1]])
        written.stats.sessions += len(units)
        written.stats.sessions_ended += len(units)
        written.stats.candidates += len(rows)
        return written
