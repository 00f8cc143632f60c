"""What importers share: counts, typed record errors, record keys, units of work."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from blake3 import blake3

from yzos_jobs.counters import Counters
from yzos_jobs.importers.reading import Position
from yzos_jobs.text import clean_text

T = TypeVar("T")

MAX_ID_CHARS = 256
# A longer id is keyed by a hash of the whole id, after a readable prefix: 200 + 1 + 64
# characters, longer than any id kept as it is, so the two kinds of key never meet.
_ID_PREFIX_CHARS = 200


class ImportRecordError(Exception):
    """One record cannot be imported; reported with its file and line, then skipped."""

    def __init__(self, where: str | Position, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


class ImportPathError(Exception):
    """A path given to an importer does not exist or cannot be read."""


def record_key(value: object) -> str | None:
    """An id (record, session) as importer_seen and activity_sessions key it: cleaned like any
    text; up to MAX_ID_CHARS characters kept as it is (rows written before stay valid), longer
    ones keyed by a hash of the whole id, so ids that differ only at the end stay apart."""
    text = clean_text(value, 1 << 62)
    if text is None or len(text) <= MAX_ID_CHARS:
        return text
    return f"{text[:_ID_PREFIX_CHARS]}…{blake3(text.encode()).hexdigest()}"


@dataclass(frozen=True)
class Unit(Generic[T]):
    """One record read from a file, ready to write: where it is (file:line), its importer_seen
    key, and the hash of its content when a repeat of its key must be told from a conflict
    (None: a repeat is a copy, skipped without a word). `records`: how many of the file's
    records it stands for (a transcript's segment: its records), what the summary counts."""

    where: str | Position
    key: tuple[str, str]
    item: T
    digest: str | None = None
    records: int = 1


@dataclass
class ImportStats(Counters):
    files: int = 0
    files_unchanged: int = 0
    records: int = 0
    sessions: int = 0
    sessions_open: int = 0  # still going on: imported once closed
    # subagents' transcripts whose session's transcript is not there: read with it once it is
    files_waiting: int = 0
    candidates: int = 0
    apps: int = 0
    triaged: int = 0
    digests: int = 0  # closed sessions queued for triage
    sessions_ended: int = 0
    promoted: int = 0  # entities their ended sessions' candidates made
    merged: int = 0  # and the candidates that were sightings of entities already known
    skipped: int = 0
    errors: int = 0
    bytes_read: int = 0
    error_messages: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. a file in which no session was found

    def note(self, text: str) -> None:
        if len(self.notes) < 1000:
            self.notes.append(text)

    def error(self, err: ImportRecordError) -> None:
        self.errors += 1
        if len(self.error_messages) < 1000:
            self.error_messages.append(str(err))

    def merge(self, other: ImportStats) -> None:
        self.add(other, skip=("error_messages", "notes"))
        self.error_messages.extend(other.error_messages[: 1000 - len(self.error_messages)])
        self.notes.extend(other.notes[: 1000 - len(self.notes)])


@dataclass
class Written:
    """What one transaction of an importer wrote: counts, the sessions it ended and the triages
    it queued (both acted on once it has committed)."""

    stats: ImportStats = field(default_factory=ImportStats)
    ended: list[str] = field(default_factory=list)
    triages: list[int] = field(default_factory=list)  # queued session triages
    opened: set[str] = field(default_factory=set)  # sessions records were written in

    def add(self, other: Written) -> None:
        self.stats.merge(other.stats)
        self.ended.extend(other.ended)
        self.triages.extend(other.triages)
        self.opened |= other.opened
