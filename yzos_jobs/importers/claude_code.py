"""The Claude Code importer: `~/.claude/projects/*/*.jsonl` session transcripts.

Each line is a record (`uuid`, `sessionId`, `cwd`, `gitBranch`, `type`, `message`, `timestamp`).
The project comes from `cwd`, never from the encoded directory name. Records are deduplicated by
`uuid` across files (a resumed session copies earlier records into a new file, under the new
session's id, so a repeated uuid is a copy: the first is kept, without a word). A session whose
file has been idle for `importers.session_idle_s` is ended: its candidates are promoted inline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from sqlalchemy.orm import Session

from yzos_jobs.db.engine import run_in_transaction
from yzos_jobs.db.importer_state import claim_records
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.sessions import open_sessions_seen_under, upsert_activity_session
from yzos_jobs.db.types import utcnow
from yzos_jobs.entity import noise_filter
from yzos_jobs.importers.base import (
    FileImporter,
    OpenedFile,
    parse_json_object,
    parse_timestamp,
)
from yzos_jobs.importers.reading import Position
from yzos_jobs.importers.records import ImportRecordError, Unit, Written, record_key
from yzos_jobs.supply.pipeline import apply_entities
from yzos_jobs.text import clean_text

IMPORTER = "claude_code"
SOURCE_KIND = "ai_tool"
UUIDS = "uuid"  # importer_seen session_id under which record uuids are kept, across files
BATCH = 500
REQUEST_CHARS = 300


def default_dir() -> Path:
    return Path.home() / ".claude" / "projects"


def _user_text(message: Any) -> str | None:
    """The words a person typed: a string, or the text parts of a content list (tool results,
    which Claude Code also files under type "user", are not)."""
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        ]
        return "\n".join(t for t in texts if t) or None
    return None


@dataclass(frozen=True)
class Turn:
    """One transcript record, as much of it as is imported."""

    session_id: str
    cwd: str | None
    at: datetime
    request: NewCandidate | None  # the task a person's request names


class ClaudeCodeImporter(FileImporter):
    NAME = IMPORTER
    PATTERN = "*.jsonl"

    def import_file(self, path: Path) -> None:
        opened = self.open_file(path)
        if opened.fully_read:
            self.stats.files_unchanged += 1
        else:
            batch: list[Unit[Turn]] = []
            end = opened.start
            for where, end, raw in self.lines(opened, opened.start, keep_unfinished=False):
                if raw is None:
                    continue  # a line past the length bound, already reported
                unit = self.prepare(where, lambda r=raw, w=where: self._unit(r, w))
                if unit is not None:
                    batch.append(unit)
                if len(batch) >= BATCH:
                    self._flush(opened, batch, end)
                    batch = []
            self._flush(opened, batch, end)
        if time.time() - opened.now.mtime_ns / 1e9 >= self.idle_s:
            self._end_idle_sessions(opened)

    def _unit(self, raw: bytes, where: Position) -> Unit[Turn] | None:
        r = parse_json_object(raw, where)
        if not r.get("sessionId") or not r.get("uuid"):
            if r.get("type") == "summary":
                return None  # summaries carry no session; nothing to import from them
            raise ImportRecordError(where, "uuid and sessionId are required")
        uuid = record_key(r["uuid"])
        if not uuid:
            raise ImportRecordError(where, "uuid and sessionId are required")
        sid = record_key(r["sessionId"]) or ""
        at = parse_timestamp(r.get("timestamp"), where) or utcnow()
        text = _user_text(r.get("message")) if r.get("type") == "user" else None
        line = clean_text(
            text.strip().splitlines()[0] if text and text.strip() else None, REQUEST_CHARS
        )
        request = None
        if line and not line.startswith(("/", "<")) and len(line.split()) >= 2:
            request = self._candidate(line, "task", sid, text, at)
        turn = Turn(sid, clean_text(r.get("cwd"), 1000), at, request)
        return Unit(where, (UUIDS, uuid), turn)

    def _flush(self, opened: OpenedFile, batch: list[Unit[Turn]], end: int) -> None:
        def write(s: Session, units: list[Unit[Turn]]) -> Written:
            return self._write(s, units, f"file:{opened.key}")

        self.commit(opened, batch, end, write)

    def _write(self, s: Session, units: list[Unit[Turn]], file_id: str) -> Written:
        candidates: list[NewCandidate] = []
        sessions: dict[str, tuple[str | None, datetime]] = {}
        for unit in units:
            t = unit.item
            if t.session_id not in sessions or (t.cwd and not sessions[t.session_id][0]):
                sessions[t.session_id] = (t.cwd, t.at)
            if t.request is not None:
                candidates.append(t.request)
        new_sessions = claim_records(s, IMPORTER, [(sid, "session") for sid in sessions])
        # Remember which sessions this file holds, to end them when it goes idle.
        claim_records(s, IMPORTER, [(file_id, sid) for sid in sessions])
        for sid, (cwd, at) in sorted(sessions.items()):
            project = noise_filter.normalize_project_path(cwd) if cwd else None
            upsert_activity_session(s, IMPORTER, sid, project_path=project, started_at=at)
            if (sid, "session") in new_sessions and project:
                context = f"Claude Code session in {project}"
                candidates.append(
                    self._candidate(PurePosixPath(project).name, "project", sid, context, at)
                )
        insert_candidates(s, candidates, utcnow())
        written = Written()
        written.stats.sessions += len(new_sessions)
        written.stats.candidates += len(candidates)
        return written

    def _candidate(
        self, raw: str, kind: str, sid: str, context: str | None, at: datetime
    ) -> NewCandidate:
        return NewCandidate(
            raw_text=raw,
            suggested_kind=kind,
            source_kind=SOURCE_KIND,
            source_id=sid,
            surrounding_text=clean_text(context, self.limit),
            created_at=at,
        )

    def _end_idle_sessions(self, opened: OpenedFile) -> None:
        with self.ctx.sessions() as s:
            open_ids = open_sessions_seen_under(s, IMPORTER, f"file:{opened.key}")
        for sid in open_ids:

            def end(s: Session, sid: str = sid) -> None:
                upsert_activity_session(s, IMPORTER, sid, ended_at=utcnow())

            run_in_transaction(self.ctx.sessions, end)
            self.stats.sessions_ended += 1
            self.stats.promoted += apply_entities(self.ctx, sid).promoted
