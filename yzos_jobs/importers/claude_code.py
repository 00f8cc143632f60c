"""The Claude Code importer: `~/.claude/projects/*/<sessionId>.jsonl` transcripts, each with its
subagents' transcripts (`transcript_groups` for which files one session's are, `claude_transcript`
for how one is read, `transcript_session` for the session it makes).

A transcript and its subagents are one group: read together, once none of them has changed for
`importers.session_idle_s`, and each session in them is then closed once, after all its files:
written by `FileImporter.write_sessions`, with its importer_seen row (`segment <n>`) and every
file's mark in one transaction. Records added later (the session was resumed in the same file)
are a new segment of it, with its own candidates' source id (`<sessionId>#<n>`) and, with a
model, its own digest. A record whose uuid was imported before is a copy (a resumed session
copies earlier records into its new file): the first is kept, without a word.

The project comes from `cwd`, never from the encoded directory name; a worktree's cwd maps to
its main repository where the transcript shows it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from blake3 import blake3
from sqlalchemy.orm import Session

from yzos_jobs.db.activity_sessions import session_project_paths
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.importer_state import FileMark, claim_records, records_named, seen_records
from yzos_jobs.db.queue import proposed_task_names
from yzos_jobs.importers.base import FileImporter, OpenedFile
from yzos_jobs.importers.claude_transcript import Fact, TranscriptReader
from yzos_jobs.importers.closed_session import SOURCE_KIND, ClosedSession
from yzos_jobs.importers.reading import PositionedLine, positioned_lines
from yzos_jobs.importers.records import Unit, Written
from yzos_jobs.importers.transcript_groups import is_subagent, main_transcript, transcript_groups
from yzos_jobs.importers.transcript_session import TranscriptSession, add_facts
from yzos_jobs.supply.gathered_work import join_gathered_work
from yzos_jobs.supply.moved_session import SessionMove, follow_moved_session
from yzos_jobs.text import shown, storable_name

IMPORTER = "claude_code"
UUIDS = "uuid"  # importer_seen session_id under which record uuids are kept, across files
SEGMENT = "segment"
DIRECTORY = "directory"  # importer_seen record of the project directory a session was read in


def _directory(main: Path) -> str:
    return f"{DIRECTORY} {storable_name(main.parent.name)}"


def _session_key(session_id: str, directory: str, seen_in: list[str]) -> str:
    """The session's id where it was first read (or before directories were recorded), else its
    id and the directory's hash."""
    if not seen_in or f"{DIRECTORY} {directory}" in seen_in:
        return session_id
    return f"{session_id}:{blake3(directory.encode('utf-8')).hexdigest()[:12]}"


def default_dir() -> Path:
    return Path.home() / ".claude" / "projects"


@dataclass
class _Segment:
    session: TranscriptSession
    number: int
    # What earlier segments of the session recorded (read again): with the new records, where
    # the session's work is
    earlier: list[Fact]


class ClaudeCodeImporter(FileImporter):
    NAME = IMPORTER
    PATTERN = "*.jsonl"

    def import_each(self, files: list[Path]) -> None:
        groups = transcript_groups(files)
        self.tell_total([path for group in groups for path in group])
        for group in groups:
            with self.done_with(group):
                self.import_unit(group)

    def import_unit(self, files: list[Path]) -> None:
        """One transcript group as `transcript_groups` made it (grouped once for a whole run:
        grouping lists the directory's subagents' transcripts)."""
        if self.ctx.stop.is_set():
            return  # the daemon was asked to stop: the groups left are read next time
        self.stats.files += len(files)
        self._import_group(files)

    def _import_group(self, group: list[Path]) -> None:
        if all(is_subagent(p) for p in group):
            # subagents' transcripts without their session's: their records are no one's
            # requests, read with the session's transcript once it is there
            self._waiting(group)
            return
        opened: list[OpenedFile] = []
        for path in group:
            try:
                opened.append(self.open_file(path))
            except OSError as exc:
                self._unreadable(path, exc)
        if not opened:
            return
        if all(o.fully_read for o in opened):
            self.stats.files_unchanged += len(opened)
            return
        if any(time.time() - o.now.mtime_ns / 1e9 < self.idle_s for o in opened):
            self.stats.sessions_open += 1  # still going on: closed once idle
            return
        reader = TranscriptReader(self.stats.error)
        earlier: dict[str, TranscriptSession] = {}
        for o in opened:
            try:
                add_facts(earlier, ((0, f) for f in self._read_before(o, reader)), o.path)
            except OSError as exc:  # read on without it, as `_read` does with the new records
                self._unreadable(o.path, exc)
        sessions: dict[str, TranscriptSession] = {}
        marks: list[tuple[OpenedFile, FileMark]] = []
        for o in opened:
            try:
                end = self._read(o, reader, sessions)
            except OSError as exc:
                self._unreadable(o.path, exc)
                continue
            marks.append((o, replace(o.now, offset=end)))
        self.stats.skipped += reader.repeats
        units = self._units(group[0], sessions, earlier)
        written = self.commit_marks(marks, units, self._write)
        self.after_sessions(written)
        if not sessions and all(o.start == 0 for o in opened):
            self.stats.note(f"no Claude Code session found in {group[0]}")

    def _read_before(self, opened: OpenedFile, reader: TranscriptReader) -> list[Fact]:
        """The facts of what earlier imports read of a file, read again (`TranscriptReader.recall`)
        so that the records after pair with them as in one reading of the whole file."""
        if opened.start == 0:
            return []
        subagent = is_subagent(opened.path)
        return reader.recall(positioned_lines(opened.path, until=opened.start), subagent=subagent)

    def _read(
        self, opened: OpenedFile, reader: TranscriptReader, sessions: dict[str, TranscriptSession]
    ) -> int:
        """Read one file's new records into `sessions`; returns the offset reached."""
        reached = [opened.start]

        def lines() -> Iterator[PositionedLine]:
            for where, end, raw in self.lines(opened, opened.start, keep_unfinished=False):
                reached[0] = end
                yield where, end, raw

        subagent = is_subagent(opened.path)
        add_facts(sessions, reader.facts(lines(), subagent=subagent), opened.path)
        return reached[0]

    def _waiting(self, group: list[Path]) -> None:
        """Told once per import: subagents' transcripts that wait for their session's, or that
        name no session (never read)."""
        main = main_transcript(group[0])
        if main == group[0]:
            self.stats.note(f"{group[0]}: a subagent's transcript that names no session; not read")
            return
        self.stats.files_waiting += len(group)
        more = f" (and {len(group) - 1} more of its session)" if len(group) > 1 else ""
        self.stats.note(
            f"{group[0]}{more}: a subagent's transcript waiting for its session's, {main}; "
            "read with it once it is there"
        )

    def _units(
        self,
        main: Path,
        sessions: dict[str, TranscriptSession],
        earlier: dict[str, TranscriptSession],
    ) -> list[Unit[_Segment]]:
        """One unit per session: its next segment, under the session's key (its id; in a
        project directory other than the one it was first read from, its id and that
        directory's hash: a session id reused with `--session-id` elsewhere is another
        session). A session whose records were all imported before (a file read again from its
        start) has no next segment: its records are counted as repeats."""
        here = main.parent.name
        with self.ctx.sessions() as db:
            directories = records_named(db, IMPORTER, list(sessions), DIRECTORY)
            keys = {sid: _session_key(sid, here, directories.get(sid, [])) for sid in sessions}
            written = records_named(db, IMPORTER, list(keys.values()), SEGMENT)
            numbers = {
                sid: 1 + sum(r.startswith(f"{SEGMENT} ") for r in written.get(keys[sid], []))
                for sid in sessions
            }
            # only a session with segments written can be read again whole (a first one's
            # records are new, bar copies from other files, which its write counts)
            later = [f.uuid for sid, s in sessions.items() if numbers[sid] > 1 for f in s.facts]
            copies = seen_records(db, IMPORTER, UUIDS, later) if later else set()
        units: list[Unit[_Segment]] = []
        for sid, session in sorted(sessions.items()):
            number = numbers[sid]
            if number > 1 and all(f.uuid in copies for f in session.facts):
                self.stats.skipped += len(_record_ids(session.facts))
                continue
            key = keys[sid]
            session.session_id = key
            before = earlier[sid].facts if sid in earlier else []
            segment = _Segment(session, number, before)
            records = len(_record_ids(session.facts))
            units.append(Unit(str(main), (key, f"{SEGMENT} {number}"), segment, records=records))
        return units

    def _write(self, db: Session, units: list[Unit[_Segment]]) -> Written:
        """The segments' new records (a record imported before is a copy), then the sessions."""
        stored = session_project_paths(
            db, IMPORTER, [u.item.session.session_id for u in units if u.item.number > 1]
        )
        closed: list[ClosedSession] = []
        repeats = 0
        claim_records(
            db,
            IMPORTER,
            [(u.item.session.session_id, _directory(Path(str(u.where)))) for u in units],
        )
        for unit in units:
            segment = unit.item
            facts = segment.session.facts
            fresh = claim_records(db, IMPORTER, [(UUIDS, f.uuid) for f in facts])
            kept = [f for f in facts if (UUIDS, f.uuid) in fresh]
            repeats += len(_record_ids(facts) - _record_ids(kept))
            sid, file = segment.session.session_id, segment.session.file
            session = TranscriptSession(sid, file, kept)
            project, named, earlier_ids = None, {}, []
            if segment.number > 1:
                # where everything the session recorded so far shows its work (what a later
                # segment did can show the repository the start folder is in), else where it
                # was recorded
                whole = TranscriptSession(sid, file, [*segment.earlier, *kept])
                project = whole.project_path() or stored.get(sid)
                earlier_ids = [sid, *(f"{sid}#{n}" for n in range(2, segment.number))]
                named = proposed_task_names(db, SOURCE_KIND, earlier_ids)
            built = session.closed(segment.number, project, segment.earlier, named)
            if built is None:
                if kept and all(f.at is None for f in kept):
                    # a session is placed in time by its records: none has a timestamp
                    self.stats.note(
                        f"session {shown(sid)} in {file}: no record has a timestamp; "
                        "nothing of it was imported"
                    )
                continue
            if segment.number > 1 and built.project_path is not None:
                # what the earlier segments alone proposed goes where the session worked
                now = utcnow()
                move = SessionMove(stored.get(sid), built.project_path, built.project)
                activity = (built.source, built.external_id)
                follow_moved_session(db, activity, SOURCE_KIND, earlier_ids, move, now)
                # work a commit here gathered, that the segments before proposed as several tasks
                gathered = built.gathered_before(self.ctx.settings.importers.asked_again_similarity)
                join_gathered_work(db, SOURCE_KIND, earlier_ids, gathered, IMPORTER, now)
            closed.append(built)
        written = self.write_sessions(db, closed)
        # of the records the units stand for, these were copies of records read before
        written.stats.records -= repeats
        written.stats.skipped += repeats
        return written


def _record_ids(facts: list[Fact]) -> set[str]:
    """The transcript's records the facts come from (a prompt the queue handed over is the
    queue's, whose records are not counted)."""
    return {f.uuid for f in facts if not f.from_queue}
