"""Importer bookkeeping: importer_seen (what was processed) and importer_files (how far a file
was read). Both are written in the caller's transaction, together with what the records made.

A record's importer_seen row is (importer, session id, record id). A record whose content is
compared on a repeat (JSONL) also has a content row: importer `<importer>:content`, its session
id, and its record id followed by a space and the hash of its content (32 hex digits). Keyed
next to its session's other records, the row is written where the claim rows are, not at a
random place in the index.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from blake3 import blake3
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import ImporterFile, ImporterSeen

Key = tuple[str, str]  # (session id, record id)
LOOKUP_CHUNK = 500


def claim_records(session: Session, importer: str, keys: Iterable[Key]) -> set[Key]:
    """Mark (session_id, record_id) keys seen; returns the keys that were new. On PostgreSQL a
    concurrent importer inserting the same key waits for this transaction, then gets nothing:
    the row is the lock that makes each record processed once."""
    rows = [
        {"importer_name": importer, "session_id": s, "record_id": r, "last_seen": utcnow()}
        for s, r in sorted(set(keys))
    ]
    if not rows:
        return set()
    stmt = (
        upsert_insert(session, ImporterSeen)
        .on_conflict_do_nothing(index_elements=["importer_name", "session_id", "record_id"])
        .returning(ImporterSeen.session_id, ImporterSeen.record_id)
    )
    return {(s, r) for s, r in session.execute(stmt, rows)}


def seen_records(
    session: Session, importer: str, session_id: str, record_ids: Iterable[str]
) -> set[str]:
    """The ids among `record_ids` seen under one session id (a plain IN on the key's last
    column, which the key's index answers)."""
    wanted = sorted(set(record_ids))
    found: set[str] = set()
    for start in range(0, len(wanted), LOOKUP_CHUNK):
        found.update(
            session.scalars(
                select(ImporterSeen.record_id).where(
                    ImporterSeen.importer_name == importer,
                    ImporterSeen.session_id == session_id,
                    ImporterSeen.record_id.in_(wanted[start : start + LOOKUP_CHUNK]),
                )
            )
        )
    return found


def records_named(
    session: Session, importer: str, session_ids: Iterable[str], name: str
) -> dict[str, list[str]]:
    """Per session id, its record ids that are `name` or start with `name` and a space (the
    segments of an aider session: `segment`, `segment 0-812`, `segment 812-1400`)."""
    wanted = sorted(set(session_ids))
    found: dict[str, list[str]] = {}
    for start in range(0, len(wanted), LOOKUP_CHUNK):
        rows = session.execute(
            select(ImporterSeen.session_id, ImporterSeen.record_id).where(
                ImporterSeen.importer_name == importer,
                ImporterSeen.session_id.in_(wanted[start : start + LOOKUP_CHUNK]),
                (ImporterSeen.record_id == name)
                | (func.substr(ImporterSeen.record_id, 1, len(name) + 1) == f"{name} "),
            )
        )
        for sid, rid in rows:
            found.setdefault(sid, []).append(rid)
    return found


DIGEST_CHARS = 32


def content_digest(content: bytes) -> str:
    """The hash a content row keeps of a record's content."""
    return blake3(content).hexdigest(length=DIGEST_CHARS // 2)


def remember_contents(session: Session, importer: str, digests: Mapping[Key, str]) -> None:
    """Store the content hash of records just claimed, to tell a repeat from a conflict later."""
    if not digests:
        return
    now = utcnow()
    rows = [
        {
            "importer_name": f"{importer}:content",
            "session_id": sid,
            "record_id": f"{rid} {digests[(sid, rid)]}",
            "last_seen": now,
        }
        for sid, rid in sorted(digests)
    ]
    stmt = upsert_insert(session, ImporterSeen).on_conflict_do_nothing(
        index_elements=["importer_name", "session_id", "record_id"]
    )
    session.execute(stmt, rows)


def stored_contents(session: Session, importer: str, keys: Iterable[Key]) -> dict[Key, str]:
    """The content hash stored for each of `keys` that has one (records imported before content
    hashes were kept have none). One query per key: only repeats are looked up."""
    found: dict[Key, str] = {}
    for sid, rid in sorted(set(keys)):
        prefix = f"{rid} "
        digest = session.scalar(
            select(ImporterSeen.record_id)
            .where(
                ImporterSeen.importer_name == f"{importer}:content",
                ImporterSeen.session_id == sid,
                func.length(ImporterSeen.record_id) == len(prefix) + DIGEST_CHARS,
                func.substr(ImporterSeen.record_id, 1, len(prefix)) == prefix,
            )
            .limit(1)
        )
        if digest is not None:
            found[(sid, rid)] = digest[-DIGEST_CHARS:]
    return found


@dataclass(frozen=True)
class FileMark:
    """A file as last read: its size, mtime and first bytes' hash, and the offset reached;
    `read_at`, when the file was looked at for it (stored as the mark's `updated_at`; None: when
    it is stored)."""

    size: int
    mtime_ns: int
    offset: int
    head_hash: str
    read_at: datetime | None = field(default=None, compare=False)


def load_mark(session: Session, importer: str, path: str) -> FileMark | None:
    row = session.get(ImporterFile, (importer, path))
    if row is None:
        return None
    return FileMark(row.size, row.mtime_ns, row.offset, row.head_hash, row.updated_at)


def save_mark(session: Session, importer: str, path: str, mark: FileMark) -> None:
    values = {
        "importer_name": importer,
        "path": path,
        "size": mark.size,
        "mtime_ns": mark.mtime_ns,
        "offset": mark.offset,
        "head_hash": mark.head_hash,
        "updated_at": mark.read_at or utcnow(),
    }
    stmt = upsert_insert(session, ImporterFile).values(values)
    session.execute(
        stmt.on_conflict_do_update(
            index_elements=["importer_name", "path"],
            set_={
                k: stmt.excluded[k]
                for k in ("size", "mtime_ns", "offset", "head_hash", "updated_at")
            },
        )
    )
