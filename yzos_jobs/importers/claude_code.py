"""The Claude Code importer: `~/.claude/projects/*/*.jsonl` session transcripts.

Each line is a record (`uuid`, `sessionId`, `cwd`, `gitBranch`, `type`, `message`, `timestamp`).
The project comes from `cwd`, never from the encoded directory name. Records are deduplicated by
`uuid` across files (a resumed session copies earlier records into a new file). A session whose
file has been idle for `importers.session_idle_s` is ended: its candidates are promoted inline.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from yzos_jobs.db.engine import run_in_transaction
from yzos_jobs.db.models import ActivitySession, ImporterSeen
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.sessions import upsert_activity_session
from yzos_jobs.db.types import utcnow
from yzos_jobs.entity import noise_filter
from yzos_jobs.importers import state
from yzos_jobs.importers.base import FileImporter, read_lines
from yzos_jobs.importers.records import ImportRecordError, clean_text
from yzos_jobs.supply.pipeline import apply_entities

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


def _time(value: Any) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class ClaudeCodeImporter(FileImporter):
    PATTERN = "*.jsonl"

    def import_file(self, path: Path) -> None:
        self.stats.files += 1
        mark = state.current_mark(path)
        with self.ctx.sessions() as s:
            previous = state.load_mark(s, IMPORTER, path)
        done = state.FileMark(mark.size, mark.mtime_ns, mark.size, mark.head_hash)
        if previous != done:
            start = state.resume_offset(path, previous, mark)
            batch: list[tuple[str, dict[str, Any]]] = []
            end = start
            for line_no, end, raw in read_lines(path, start):
                self.stats.bytes_read += len(raw)
                if self.progress:
                    self.progress(len(raw))
                try:
                    batch.append((f"{path}:{line_no}", self._parse(raw, f"{path}:{line_no}")))
                except ImportRecordError as err:
                    self.stats.error(err)
                if len(batch) >= BATCH:
                    self._flush(path, mark, batch, end)
                    batch = []
            self._flush(path, mark, batch, end)
        else:
            self.stats.files_unchanged += 1
        if time.time() - mark.mtime_ns / 1e9 >= self.idle_s:
            self._end_idle_sessions(path)

    def _parse(self, raw: bytes, where: str) -> dict[str, Any]:
        try:
            obj = json.loads(raw.decode("utf-8", errors="replace"))
        except json.JSONDecodeError as exc:
            raise ImportRecordError(where, f"not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise ImportRecordError(where, "not a JSON object")
        if not obj.get("sessionId") or not obj.get("uuid"):
            if obj.get("type") == "summary":
                return {}  # summaries carry no session; nothing to import from them
            raise ImportRecordError(where, "uuid and sessionId are required")
        return obj

    def _flush(
        self, path: Path, mark: state.FileMark, batch: list[tuple[str, dict[str, Any]]], end: int
    ) -> None:
        records = [(where, r) for where, r in batch if r]

        def write(s: Session) -> tuple[int, int, int, int]:
            keys = [(UUIDS, str(r["uuid"])) for _, r in records]
            fresh = state.claim_records(s, IMPORTER, keys)
            candidates: list[NewCandidate] = []
            sessions: dict[str, tuple[str | None, datetime | None]] = {}
            count = skipped = 0
            for _, r in records:
                if (UUIDS, str(r["uuid"])) not in fresh:
                    skipped += 1
                    continue
                count += 1
                sid = clean_text(r["sessionId"], 256) or ""
                cwd = clean_text(r.get("cwd"), 1000)
                at = _time(r.get("timestamp")) or utcnow()
                if sid not in sessions or (cwd and not sessions[sid][0]):
                    sessions[sid] = (cwd, at)
                text = _user_text(r.get("message")) if r.get("type") == "user" else None
                line = clean_text(
                    text.strip().splitlines()[0] if text and text.strip() else None, REQUEST_CHARS
                )
                if line and not line.startswith(("/", "<")) and len(line.split()) >= 2:
                    candidates.append(self._candidate(line, "task", sid, text, at))
            new_sessions = state.claim_records(s, IMPORTER, [(sid, "session") for sid in sessions])
            for sid, (cwd, at) in sorted(sessions.items()):
                project = noise_filter.normalize_project_path(cwd) if cwd else None
                upsert_activity_session(s, IMPORTER, sid, project_path=project, started_at=at)
                # Remember which sessions this file holds, to end them when it goes idle.
                state.claim_records(s, IMPORTER, [(f"file:{path}", sid)])
                if (sid, "session") in new_sessions and project:
                    context = f"Claude Code session in {project}"
                    candidates.append(
                        self._candidate(PurePosixPath(project).name, "project", sid, context, at)
                    )
            insert_candidates(s, candidates, utcnow())
            state.save_mark(
                s, IMPORTER, path, state.FileMark(mark.size, mark.mtime_ns, end, mark.head_hash)
            )
            return count, skipped, len(candidates), len(new_sessions)

        count, skipped, made, opened = run_in_transaction(self.ctx.sessions, write)
        self.stats.records += count
        self.stats.sessions += opened
        self.stats.skipped += skipped
        self.stats.candidates += made

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

    def _end_idle_sessions(self, path: Path) -> None:
        with self.ctx.sessions() as s:
            open_ids = list(
                s.scalars(
                    select(ActivitySession.external_id)
                    .join(
                        ImporterSeen,
                        (ImporterSeen.importer_name == IMPORTER)
                        & (ImporterSeen.session_id == f"file:{path}")
                        & (ImporterSeen.record_id == ActivitySession.external_id),
                    )
                    .where(
                        ActivitySession.source_kind == IMPORTER, ActivitySession.status == "open"
                    )
                )
            )
        for sid in open_ids:

            def end(s: Session, sid: str = sid) -> None:
                upsert_activity_session(s, IMPORTER, sid, ended_at=utcnow())

            run_in_transaction(self.ctx.sessions, end)
            self.stats.sessions_ended += 1
            self.stats.promoted += apply_entities(self.ctx, sid).promoted
