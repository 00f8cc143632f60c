"""The generic JSONL importer: how any observer feeds the system.

One JSON object per line; `record_id` and `session_id` are required; `type` is one of
`candidate`, `app`, `triage`, `session_end`. A record is processed once (importer_seen, per
record id, in the same transaction as what it produced); a malformed line is reported with its
file and line and skipped; a file is read on from where the previous run stopped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from yzos_jobs.db.engine import run_in_transaction
from yzos_jobs.db.queue import NewCandidate, insert_candidates
from yzos_jobs.db.sessions import upsert_activity_session
from yzos_jobs.db.types import utcnow
from yzos_jobs.entity.engine import (
    SessionTriage,
    TriagePerson,
    TriageProject,
    TriageTask,
    judge_triage,
    write_triage,
)
from yzos_jobs.importers import state
from yzos_jobs.importers.base import FileImporter, read_lines
from yzos_jobs.importers.records import ImportRecordError, ImportStats, clean_text
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.kinds import ENTITY_KINDS
from yzos_jobs.observe.app_meta import AppRecord, upsert_app_metadata
from yzos_jobs.supply.pipeline import apply_entities

IMPORTER = "jsonl"
BATCH = 500


@dataclass(frozen=True)
class Record:
    where: str  # file:line
    type: str
    session_id: str
    record_id: str
    data: dict[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        return (self.session_id, self.record_id)


def _parse_time(value: Any, where: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        if isinstance(value, int | float):
            return datetime.fromtimestamp(value, UTC)
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except (ValueError, OverflowError, OSError):
        raise ImportRecordError(where, f"not a timestamp: {value!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_line(raw: bytes, where: str, limit: int) -> Record | None:
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportRecordError(where, f"not JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise ImportRecordError(where, "not a JSON object")
    rid, sid = clean_text(obj.get("record_id"), 256), clean_text(obj.get("session_id"), 256)
    if not rid or not sid:
        raise ImportRecordError(where, "record_id and session_id are required")
    kind = obj.get("type")
    if kind not in ("candidate", "app", "triage", "session_end"):
        raise ImportRecordError(where, f"unknown type {kind!r}")
    return Record(where, kind, sid, rid, obj)


def _candidate_row(rec: Record, limit: int) -> NewCandidate:
    d = rec.data
    raw = clean_text(d.get("raw_text"), limit)
    if not raw:
        raise ImportRecordError(rec.where, "candidate needs raw_text")
    kind = d.get("suggested_kind")
    if kind is not None and kind not in ENTITY_KINDS:
        raise ImportRecordError(
            rec.where, f"suggested_kind must be one of {', '.join(ENTITY_KINDS)}"
        )
    return NewCandidate(
        raw_text=raw,
        suggested_kind=kind,
        source_kind=clean_text(d.get("source_kind"), 32) or IMPORTER,
        source_id=rec.session_id,
        app_bundle_id=clean_text(d.get("app_bundle_id"), 256),
        surrounding_text=clean_text(d.get("surrounding_text"), limit),
        created_at=_parse_time(d.get("observed_at"), rec.where) or utcnow(),
    )


def _app_record(rec: Record) -> AppRecord:
    bundle = clean_text(rec.data.get("bundle_id"), 256)
    if not bundle:
        raise ImportRecordError(rec.where, "app needs bundle_id")
    return AppRecord(
        bundle,
        clean_text(rec.data.get("bundle_name"), 256),
        clean_text(rec.data.get("category"), 256),
        IMPORTER,
    )


def _items(rec: Record, key: str, field_names: tuple[str, ...]) -> list[dict[str, str | None]]:
    value = rec.data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ImportRecordError(rec.where, f"triage {key} must be a list of objects")
    return [{f: clean_text(v.get(f), 2000) for f in field_names} for v in value]


def _triage(rec: Record) -> SessionTriage:
    projects = [
        TriageProject(p["name"], p["path"], p["summary"])
        for p in _items(rec, "projects", ("name", "path", "summary"))
        if p["name"]
    ]
    tasks = [
        TriageTask(t["title"], t["project"], t["summary"])
        for t in _items(rec, "tasks", ("title", "project", "summary"))
        if t["title"]
    ]
    persons = [TriagePerson(p["name"]) for p in _items(rec, "persons", ("name",)) if p["name"]]
    return SessionTriage(projects, tasks, persons)


class JsonlImporter(FileImporter):
    PATTERN = "*.jsonl"

    def __init__(self, ctx: JobContext, progress: Callable[[int], None] | None = None) -> None:
        super().__init__(ctx, progress)
        self.markers = ctx.settings.noise_filter.work_dir_segments
        self._position = 0

    def import_file(self, path: Path) -> None:
        self.stats.files += 1
        now_mark = state.current_mark(path)
        with self.ctx.sessions() as s:
            previous = state.load_mark(s, IMPORTER, path)
        if previous == state.FileMark(
            now_mark.size, now_mark.mtime_ns, now_mark.size, now_mark.head_hash
        ):
            self.stats.files_unchanged += 1
            return
        start = state.resume_offset(path, previous, now_mark)
        self._position = start
        batch: list[Record] = []
        batch_end = start
        for line_no, end, raw in read_lines(path, start):
            try:
                rec = parse_line(raw, f"{path}:{line_no}", self.limit)
            except ImportRecordError as err:
                self.stats.error(err)
                rec = None
            if rec is not None:
                batch.append(rec)
            batch_end = end
            if len(batch) >= BATCH or (rec is not None and rec.type in ("triage", "session_end")):
                self._flush(path, batch, batch_end, now_mark)
                batch = []
        self._flush(path, batch, batch_end, now_mark)

    def _flush(self, path: Path, batch: list[Record], end: int, mark: state.FileMark) -> None:
        """Process a run of records and move the file mark past them, in one transaction."""
        proposals: dict[tuple[str, str], SessionTriage] = {}
        for r in batch:
            if r.type == "triage":
                # A malformed triage is reported when the record is applied.
                with suppress(ImportRecordError):
                    proposals[r.key] = _triage(r)
        triage_recs = [r for r in batch if r.key in proposals]
        if triage_recs:
            with self.ctx.sessions() as s:
                done = state.seen(s, IMPORTER, [r.key for r in triage_recs])
            # The LLM is asked before the write transaction, and only about unseen records.
            triage_recs = [r for r in triage_recs if r.key not in done]
        triage = {
            r.key: judge_triage(self.ctx, r.session_id, proposals[r.key]) for r in triage_recs
        }

        def write(session: Session) -> tuple[ImportStats, list[str]]:
            # Counted here and merged only after the commit: a retried or rolled-back
            # transaction must not count twice.
            counts, ended = ImportStats(), []
            fresh = state.claim_records(session, IMPORTER, [r.key for r in batch])
            candidates: list[NewCandidate] = []
            apps: list[AppRecord] = []
            for rec in batch:
                if rec.key not in fresh:
                    counts.skipped += 1
                    continue
                try:
                    self._apply(session, rec, candidates, apps, triage, ended, counts)
                    counts.records += 1
                except ImportRecordError as err:
                    counts.error(err)
            # Activity sessions from this importer are keyed ("jsonl", session_id), whatever
            # observer produced the candidates in them.
            opened: dict[str, Any] = {}
            for c in candidates:
                opened.setdefault(c.source_id, c.created_at)
            for session_id, started in sorted(opened.items()):
                upsert_activity_session(session, IMPORTER, session_id, started_at=started)
            counts.sessions += len(opened)
            insert_candidates(session, candidates, utcnow())
            counts.candidates += len(candidates)
            counts.apps += upsert_app_metadata(session, apps)
            state.save_mark(
                session,
                IMPORTER,
                path,
                state.FileMark(mark.size, mark.mtime_ns, end, mark.head_hash),
            )
            return counts, ended

        counts, ended = run_in_transaction(self.ctx.sessions, write)
        self.stats.merge(counts)
        for session_id in ended:
            self.stats.promoted += apply_entities(self.ctx, session_id).promoted
        advanced, self._position = end - self._position, end
        self.stats.bytes_read += advanced
        if self.progress:
            self.progress(advanced)

    def _apply(
        self,
        session: Session,
        rec: Record,
        candidates: list[NewCandidate],
        apps: list[AppRecord],
        triage: dict[tuple[str, str], Any],
        ended: list[str],
        counts: ImportStats,
    ) -> None:
        if rec.type == "candidate":
            candidates.append(_candidate_row(rec, self.limit))
        elif rec.type == "app":
            apps.append(_app_record(rec))
        elif rec.type == "triage":
            judged = triage.get(rec.key)
            if judged is None:
                _triage(rec)  # raises the record's error
                return
            write_triage(session, judged, self.markers)
            counts.triaged += 1
        else:
            at = _parse_time(rec.data.get("ended_at") or rec.data.get("observed_at"), rec.where)
            upsert_activity_session(session, IMPORTER, rec.session_id, ended_at=at or utcnow())
            counts.sessions_ended += 1
            ended.append(rec.session_id)
