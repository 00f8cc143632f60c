"""The generic JSONL importer: how any observer feeds the system.

One JSON object per line; `record_id` and `session_id` are required; `type` is one of
`candidate`, `app`, `triage`, `session_end`. A record is processed once (importer_seen, per
record id, in the same transaction as what it produced); a record id seen before is a repeat:
the first wins, and a repeat whose line differs from the first's is reported as a conflict. A
malformed line is reported with its file and line and skipped; a file is read on from where
the previous run stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from yzos_jobs.db.activity_sessions import upsert_activity_session
from yzos_jobs.db.apps import AppRecord, upsert_app_metadata
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.importer_state import content_digest
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.triage_queue import queue_triage
from yzos_jobs.importers.base import (
    FileImporter,
    OpenedFile,
    current_mark,
    parse_json_object,
    parse_timestamp,
)
from yzos_jobs.importers.reading import Position
from yzos_jobs.importers.records import ImportRecordError, Unit, Written, record_key
from yzos_jobs.importers.rotated import rotated_copy
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.kinds import ENTITY_KINDS
from yzos_jobs.supply.session_end import apply_entities
from yzos_jobs.supply.triage_apply import run_triage
from yzos_jobs.text import clean_text, has_visible_character, shown

IMPORTER = "jsonl"
BATCH = 500
TYPES = ("candidate", "app", "triage", "session_end")


@dataclass(frozen=True)
class Record:
    where: Position  # file:line
    type: str
    session_id: str
    record_id: str
    data: dict[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        return (self.session_id, self.record_id)


@dataclass(frozen=True)
class SessionEnd:
    at: datetime | None


@dataclass(frozen=True)
class TriageRecord:
    """A triage record's proposals, queued for session triage (`supply/triage_apply.py`)."""

    proposals: dict[str, list[dict[str, str | None]]]


# What a record becomes before it is written.
Item = NewCandidate | AppRecord | TriageRecord | SessionEnd


def parse_line(raw: bytes, where: Position) -> Record | None:
    if not raw.strip():
        return None
    obj = parse_json_object(raw, where)
    for name in ("record_id", "session_id"):
        # an integer is an id as its digits; a list or an object would be stored as Python's
        # text of it (`['N']`), a boolean as `True`, a fraction or an integer past 64 bits
        # (read as a float: its last digits lost) as another id's rounding
        value = obj.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, str | int)):
            raise ImportRecordError(
                where, f"{name} must be a string or an integer (a long number: as a string)"
            )
    rid, sid = record_key(obj.get("record_id")), record_key(obj.get("session_id"))
    if not rid or not sid:
        raise ImportRecordError(where, "record_id and session_id are required")
    kind = obj.get("type")
    if kind not in TYPES:
        raise ImportRecordError(where, f"unknown type {shown(kind)}")
    return Record(where, kind, sid, rid, obj)


def _text(rec: Record, data: dict[str, Any], key: str, limit: int) -> str | None:
    """A text field of the record, cleaned; a list, an object or a number where text belongs is
    the record's error (stored, it would be Python's text of it: `['Telegram']`)."""
    value = data.get(key)
    if not isinstance(value, str | None):
        raise ImportRecordError(rec.where, f"{key} must be a string, not {shown(value)}")
    return clean_text(value, limit)


def _candidate_row(rec: Record, limit: int) -> NewCandidate:
    d = rec.data
    raw = _text(rec, d, "raw_text", limit)
    if not raw:
        raise ImportRecordError(rec.where, "candidate needs raw_text")
    if not has_visible_character(raw):
        raise ImportRecordError(rec.where, "candidate raw_text has no visible character")
    kind = d.get("suggested_kind")
    if kind is not None and kind not in ENTITY_KINDS:
        raise ImportRecordError(
            rec.where, f"suggested_kind must be one of {', '.join(ENTITY_KINDS)}"
        )
    return NewCandidate(
        raw_text=raw,
        suggested_kind=kind,
        source_kind=_text(rec, d, "source_kind", 32) or IMPORTER,
        source_id=rec.session_id,
        app_bundle_id=_text(rec, d, "app_bundle_id", 256),
        surrounding_text=_text(rec, d, "surrounding_text", limit),
        created_at=parse_timestamp(d.get("observed_at"), rec.where) or utcnow(),
    )


def _app_record(rec: Record) -> AppRecord:
    bundle = _text(rec, rec.data, "bundle_id", 256)
    if not bundle:
        raise ImportRecordError(rec.where, "app needs bundle_id")
    return AppRecord(
        bundle,
        _text(rec, rec.data, "bundle_name", 256),
        _text(rec, rec.data, "category", 256),
        IMPORTER,
    )


def _items(rec: Record, key: str, field_names: tuple[str, ...]) -> list[dict[str, str | None]]:
    value = rec.data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ImportRecordError(rec.where, f"triage {key} must be a list of objects")
    return [{f: _text(rec, v, f, 2000) for f in field_names} for v in value]


def _triage(rec: Record) -> TriageRecord:
    fields = {
        "projects": ("name", ("name", "path", "summary")),
        "tasks": ("title", ("title", "project", "summary")),
        "persons": ("name", ("name",)),
    }
    return TriageRecord(
        {
            key: [item for item in _items(rec, key, names) if item[required]]
            for key, (required, names) in fields.items()
        }
    )


def _item(rec: Record, limit: int) -> Item:
    if rec.type == "candidate":
        return _candidate_row(rec, limit)
    if rec.type == "app":
        return _app_record(rec)
    if rec.type == "triage":
        return _triage(rec)
    at = rec.data.get("ended_at") or rec.data.get("observed_at")
    return SessionEnd(parse_timestamp(at, rec.where))


def read_unit(raw: bytes, where: Position, limit: int) -> Unit[Item] | None:
    """One line as the unit to write; None for a blank line. The content hash is the line's
    bytes: a repeat of a record_id is a conflict unless the line is the same."""
    rec = parse_line(raw, where)
    if rec is None:
        return None
    return Unit(where, rec.key, _item(rec, limit), content_digest(raw.strip()))


class JsonlImporter(FileImporter):
    NAME = IMPORTER
    PATTERN = "*.jsonl"

    def __init__(self, ctx: JobContext, **callbacks: Callable[[int], None] | None) -> None:
        super().__init__(ctx, **callbacks)
        # Sessions this import wrote records in: a session spread over many batches counts once.
        self._sessions: set[str] = set()

    def import_file(self, path: Path) -> None:
        opened = self.open_file(path)
        previous = opened.previous
        if previous is not None and opened.start == 0 and previous.offset > 0:
            # Not the file read last time: where that one was renamed to (rotated), what was
            # written to it since the last read is read first, under this file's mark.
            rotated = rotated_copy(path, previous)
            if rotated is not None:
                now = current_mark(rotated)
                self._read(OpenedFile(rotated, opened.key, now, previous, previous.offset))
                if self.ctx.stop.is_set():
                    return
                opened = self.open_file(path)
        if opened.fully_read:
            self.stats.files_unchanged += 1
            return
        self._read(opened)

    def _read(self, opened: OpenedFile) -> None:
        """The records of `opened` from where reading starts to its last whole line."""
        path = opened.path
        batch: list[Unit[Item]] = []
        end = opened.start
        # records whose bytes are not all UTF-8: how many, the first
        odd_count, first_odd = 0, None
        for where, end, raw in self.lines(opened, opened.start, keep_unfinished=False):
            if raw is None:
                continue  # a line past the length bound, already reported
            if not raw.isascii() and not _utf8(raw):
                odd_count += 1
                first_odd = first_odd or where
            unit = self.prepare(where, lambda r=raw, w=where: read_unit(r, w, self.limit))
            if unit is None:
                continue
            batch.append(unit)
            # A triage sees what came before it; a session end promotes its session's
            # candidates: both are written (and the end acted on) before the next record.
            if len(batch) >= BATCH or isinstance(unit.item, TriageRecord | SessionEnd):
                self._flush(opened, batch, end)
                batch = []
                if self.ctx.stop.is_set():
                    return  # asked to stop: the file is read on from this batch's end next time
        self._flush(opened, batch, end)
        if first_odd is not None:
            # read all the same (an observer writing Latin-1, a line cut mid-character): said,
            # since its text now holds U+FFFD where those bytes were
            which = f"{odd_count} records (this the first) hold" if odd_count > 1 else "holds"
            self.stats.note(f"{first_odd}: {which} bytes that are not UTF-8, read as U+FFFD")
        if end < opened.now.size:
            # a last line with no newline: its writer may be at it still, so it waits; said,
            # for whoever imports the file by hand and wonders where that record went
            self.stats.note(f"{path}: its last line has no newline yet; it is read once it ends")

    def _flush(self, opened: OpenedFile, batch: list[Unit[Item]], end: int) -> None:
        written = self.commit(opened, batch, end, self._write)
        self.stats.sessions += len(written.opened - self._sessions)
        self._sessions |= written.opened
        if written.triages:
            # Applied right away where it can be; what fails waits for entity_promote.
            self.stats.triaged += run_triage(self.ctx, only=written.triages).triaged
        for session_id in written.ended:
            done = apply_entities(self.ctx, session_id)
            self.stats.promoted += done.promoted
            self.stats.merged += done.merged

    def _write(self, session: Session, units: list[Unit[Item]]) -> Written:
        # Counted here and merged only after the commit: a retried or rolled-back transaction
        # must not count twice.
        written = Written()
        counts = written.stats
        candidates: list[NewCandidate] = []
        apps: list[AppRecord] = []
        for unit in units:
            item = unit.item
            if isinstance(item, NewCandidate):
                candidates.append(item)
            elif isinstance(item, AppRecord):
                apps.append(item)
            elif isinstance(item, TriageRecord):
                session_id, record_id = unit.key
                upsert_activity_session(session, IMPORTER, session_id)
                queued = queue_triage(
                    session, IMPORTER, session_id, record_id, "proposals", item.proposals, utcnow()
                )
                if queued is not None:
                    written.triages.append(queued)
            elif isinstance(item, SessionEnd):
                session_id = unit.key[0]
                ended_at = item.at or utcnow()
                upsert_activity_session(session, IMPORTER, session_id, ended_at=ended_at)
                counts.sessions_ended += 1
                written.ended.append(session_id)
        # Activity sessions from this importer are keyed ("jsonl", session_id), whatever
        # observer produced the candidates in them.
        opened: dict[str, datetime | None] = {}
        for c in candidates:
            opened.setdefault(c.source_id, c.created_at)
        for session_id, started in sorted(opened.items()):
            upsert_activity_session(session, IMPORTER, session_id, started_at=started)
        written.opened.update(opened)
        insert_candidates(session, candidates, utcnow())
        counts.candidates += len(candidates)
        counts.apps += upsert_app_metadata(session, apps)
        return written


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
