"""Typed ORM models of every table, as they stand at the head revision (028)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    CheckConstraint,
    Date,
    Float,
    ForeignKey,
    Index,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from yzos_jobs.db.column_types import BigId, Json, UTCDateTime
from yzos_jobs.kinds import CANDIDATE_STATUSES, ENTITY_KINDS, ENTITY_STATUSES, TRIAGE_STATUSES

SESSION_STATUSES = ("open", "ended")
JOB_RUN_STATUSES = ("running", "succeeded", "failed")
TRIAGE_KINDS = ("digest", "proposals")
CALL_SITES = (
    "promote_candidate",
    "merge_or_create_project",
    "merge_or_create_task",
    "apply_entities",
    "entity_purge_v06",
    "user",
)
DECISION_SOURCES = ("llm", "cache", "fallback", "dry_run", "user")

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def in_list(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Entity(Base):
    __tablename__ = "entities"
    __table_args__ = (
        UniqueConstraint("kind", "normalized_name", "project_key"),
        CheckConstraint(in_list("kind", ENTITY_KINDS), name="kind"),
        CheckConstraint(in_list("status", ENTITY_STATUSES), name="status"),
        Index(None, "status", "verdict_source", "classified_at"),
        # SQLite: an id a merge freed is never given to another entity (revision 028)
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))
    display_name: Mapped[str] = mapped_column(Text)
    normalized_name: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), server_default=text("'active'"))
    summary: Mapped[str | None] = mapped_column(Text)
    # Facts about the entity that have no column of their own, as a JSON object: the last
    # re-judging's `classification` (kind, reason, model), a triaged task's `project` name.
    okf: Mapped[dict[str, Any] | None] = mapped_column(Json)
    project_path: Mapped[str | None] = mapped_column(Text, index=True)
    # Identity scope: a hash of a project's repository path; a task's project's; '' when unknown.
    project_key: Mapped[str] = mapped_column(String(64), server_default=text("''"), index=True)
    # The project a task belongs to.
    project_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("entities.id", ondelete="SET NULL"), index=True
    )
    confidence: Mapped[float | None] = mapped_column(Float)
    verdict_source: Mapped[str | None] = mapped_column(String(32))
    classified_model: Mapped[str | None] = mapped_column(Text)
    classified_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    sighting_count: Mapped[int] = mapped_column(server_default=text("0"))
    first_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class EntityCandidate(Base):
    __tablename__ = "entity_candidates"
    __table_args__ = (
        CheckConstraint(in_list("status", CANDIDATE_STATUSES), name="status"),
        CheckConstraint(
            f"suggested_kind IS NULL OR {in_list('suggested_kind', ENTITY_KINDS)}",
            name="suggested_kind",
        ),
        Index(None, "status", "id"),
        Index(None, "status", "lease_until"),
        Index(None, "source_kind", "source_id"),
        {"sqlite_autoincrement": True},  # SQLite: a `c:ID` is never given again (revision 028)
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    raw_text: Mapped[str] = mapped_column(Text)
    suggested_kind: Mapped[str | None] = mapped_column(String(16))
    source_kind: Mapped[str] = mapped_column(String(32))
    source_id: Mapped[str] = mapped_column(Text)
    app_bundle_id: Mapped[str | None] = mapped_column(Text)
    surrounding_text: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), server_default=text("'pending'"))
    claimed_by: Mapped[str | None] = mapped_column(Text)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    attempts: Mapped[int] = mapped_column(server_default=text("0"))
    entity_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("entities.id", ondelete="SET NULL"), index=True
    )
    verdict: Mapped[dict[str, Any] | None] = mapped_column(Json)
    reject_reason: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The repository of the session the candidate came from, and the source line it rests on.
    project_path: Mapped[str | None] = mapped_column(Text)
    source_line: Mapped[int | None] = mapped_column()


class EntitySighting(Base):
    __tablename__ = "entity_sightings"
    __table_args__ = (UniqueConstraint("entity_id", "source_kind", "source_id", "fingerprint"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    entity_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("entities.id", ondelete="CASCADE"), index=True
    )
    source_kind: Mapped[str] = mapped_column(String(32))
    source_id: Mapped[str] = mapped_column(Text)
    summary: Mapped[str | None] = mapped_column(Text)
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    fingerprint: Mapped[str] = mapped_column(String(64))


class EntityOverride(Base):
    __tablename__ = "entity_overrides"
    __table_args__ = (CheckConstraint(in_list("status", ENTITY_STATUSES), name="status"),)

    entity_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True
    )
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(Text)
    set_by: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ActivitySession(Base):
    __tablename__ = "activity_sessions"
    __table_args__ = (
        UniqueConstraint("source_kind", "external_id"),
        CheckConstraint(in_list("status", SESSION_STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    source_kind: Mapped[str] = mapped_column(String(32))
    external_id: Mapped[str] = mapped_column(Text)
    project_path: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(String(16), server_default=text("'open'"))


class AppMetadataRow(Base):
    __tablename__ = "app_metadata"

    bundle_id: Mapped[str] = mapped_column(Text, primary_key=True)
    bundle_name: Mapped[str | None] = mapped_column(Text)
    category: Mapped[str | None] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(32))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ImporterSeen(Base):
    __tablename__ = "importer_seen"

    importer_name: Mapped[str] = mapped_column(String(32), primary_key=True)
    session_id: Mapped[str] = mapped_column(Text, primary_key=True)
    record_id: Mapped[str] = mapped_column(Text, primary_key=True)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime)


class ImporterFile(Base):
    """How far an importer has read an append-only file, so an unchanged file is not re-read."""

    __tablename__ = "importer_files"

    importer_name: Mapped[str] = mapped_column(String(32), primary_key=True)
    path: Mapped[str] = mapped_column(Text, primary_key=True)
    size: Mapped[int] = mapped_column(BigId)
    mtime_ns: Mapped[int] = mapped_column(BigId)
    offset: Mapped[int] = mapped_column(BigId)
    head_hash: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class JobRun(Base):
    __tablename__ = "job_runs"
    __table_args__ = (
        UniqueConstraint("job_name", "slot"),
        CheckConstraint(in_list("status", JOB_RUN_STATUSES), name="status"),
        Index(None, "job_name", "started_at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    job_name: Mapped[str] = mapped_column(String(64))
    slot: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    owner: Mapped[str] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    stats: Mapped[dict[str, Any] | None] = mapped_column(Json)
    error: Mapped[str | None] = mapped_column(Text)


class VerdictCacheRow(Base):
    __tablename__ = "verdict_cache"
    __table_args__ = (Index(None, "expires_at"),)

    model_id: Mapped[str] = mapped_column(Text, primary_key=True)
    prompt_version: Mapped[str] = mapped_column(String(32), primary_key=True)
    input_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    verdict: Mapped[dict[str, Any]] = mapped_column(Json)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Decision(Base):
    """One verdict that changed or confirmed a candidate's or an entity's state."""

    __tablename__ = "decisions"
    __table_args__ = (
        CheckConstraint(in_list("call_site", CALL_SITES), name="call_site"),
        CheckConstraint(in_list("source", DECISION_SOURCES), name="source"),
        Index(None, "entity_id", "id"),
        Index(None, "candidate_id"),
        # Retention deletes by age; rows arrive in time order (inserts go to the last page).
        Index(None, "created_at"),
        # The user's corrections, newest first: the judge's worked examples.
        Index(None, "call_site", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    # No foreign keys: the trail is an append-only log written for every decided candidate,
    # where checking two references would cost more than writing the row; a merge moves an
    # entity's rows to its target before the entity goes, and candidates are never deleted.
    candidate_id: Mapped[int | None] = mapped_column(BigId)
    entity_id: Mapped[int | None] = mapped_column(BigId)
    call_site: Mapped[str] = mapped_column(String(32))
    # No foreign key either: run rows and decisions are pruned on periods of their own.
    job_run_id: Mapped[int | None] = mapped_column(BigId)
    verdict: Mapped[dict[str, Any] | None] = mapped_column(Json)
    source: Mapped[str] = mapped_column(String(16))
    model: Mapped[str | None] = mapped_column(Text)
    prompt_version: Mapped[str | None] = mapped_column(String(64))
    latency_ms: Mapped[int | None] = mapped_column()
    # What the decision did: promoted, merged, rejected, archived, kept, rekinded, corrected, …
    outcome: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class SessionTriage(Base):
    """A closed session (or segment, or JSONL triage record) waiting to be triaged."""

    __tablename__ = "session_triage"
    __table_args__ = (
        UniqueConstraint("activity_session_id", "part"),
        CheckConstraint(in_list("kind", TRIAGE_KINDS), name="kind"),
        CheckConstraint(in_list("status", TRIAGE_STATUSES), name="status"),
        Index(None, "status", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    activity_session_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("activity_sessions.id", ondelete="CASCADE")
    )
    # '' for a whole session; a segment id or a JSONL record id otherwise.
    part: Mapped[str] = mapped_column(Text, server_default=text("''"))
    # digest: a coding session's digest for one triage call; proposals: a JSONL triage record.
    kind: Mapped[str] = mapped_column(String(16))
    payload: Mapped[dict[str, Any]] = mapped_column(Json)
    status: Mapped[str] = mapped_column(String(16), server_default=text("'pending'"))
    attempts: Mapped[int] = mapped_column(server_default=text("0"))
    claimed_by: Mapped[str | None] = mapped_column(Text)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class EntityAlias(Base):
    """A name merged away that keeps resolving to the entity it was merged into."""

    __tablename__ = "entity_aliases"
    __table_args__ = (UniqueConstraint("kind", "normalized_name", "project_key"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))
    normalized_name: Mapped[str] = mapped_column(Text)
    project_key: Mapped[str] = mapped_column(String(64), server_default=text("''"))
    entity_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("entities.id", ondelete="CASCADE"), index=True
    )
    set_by: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class JobPause(Base):
    """A job an operator paused: every daemon on the database skips its scheduled runs."""

    __tablename__ = "job_pauses"

    job_name: Mapped[str] = mapped_column(String(64), primary_key=True)
    paused_by: Mapped[str] = mapped_column(Text)
    paused_at: Mapped[datetime] = mapped_column(UTCDateTime)


class LlmUsageDay(Base):
    """What the LLM cost on one UTC day, summed by every daemon (the daily budgets' ledger)."""

    __tablename__ = "llm_usage_days"

    day: Mapped[date] = mapped_column(Date, primary_key=True)
    prompt_tokens: Mapped[int] = mapped_column(BigId, server_default=text("0"))
    completion_tokens: Mapped[int] = mapped_column(BigId, server_default=text("0"))
    calls: Mapped[int] = mapped_column(BigId, server_default=text("0"))
    # Calls whose reply carried no usage: counted as calls, their tokens unknown.
    unknown_usage_calls: Mapped[int] = mapped_column(BigId, server_default=text("0"))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
