"""Importer bookkeeping: importer_seen (what was processed) and importer_files (how far a file
was read). Both are written in the caller's transaction, together with what the records made."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select, tuple_
from sqlalchemy.orm import Session

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import ImporterFile, ImporterSeen
from yzos_jobs.db.types import utcnow

HEAD_BYTES = 4096


def claim_records(
    session: Session, importer: str, keys: Iterable[tuple[str, str]]
) -> set[tuple[str, str]]:
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


def seen(session: Session, importer: str, keys: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    wanted = sorted(set(keys))
    if not wanted:
        return set()
    found: set[tuple[str, str]] = set()
    for start in range(0, len(wanted), 500):
        rows = session.execute(
            select(ImporterSeen.session_id, ImporterSeen.record_id).where(
                ImporterSeen.importer_name == importer,
                tuple_(ImporterSeen.session_id, ImporterSeen.record_id).in_(
                    wanted[start : start + 500]
                ),
            )
        )
        found.update((s, r) for s, r in rows)
    return found


@dataclass(frozen=True)
class FileMark:
    size: int
    mtime_ns: int
    offset: int
    head_hash: str


def head_hash(path: Path, length: int = HEAD_BYTES) -> str:
    """Hash of the file's first bytes: tells a grown file from a replaced one."""
    with path.open("rb") as fh:
        return hashlib.blake2b(fh.read(min(length, HEAD_BYTES)), digest_size=16).hexdigest()


def current_mark(path: Path, offset: int = 0) -> FileMark:
    st = os.stat(path)
    return FileMark(st.st_size, st.st_mtime_ns, offset, head_hash(path, st.st_size))


def load_mark(session: Session, importer: str, path: Path) -> FileMark | None:
    row = session.get(ImporterFile, (importer, str(path)))
    if row is None:
        return None
    return FileMark(row.size, row.mtime_ns, row.offset, row.head_hash)


def resume_offset(path: Path, previous: FileMark | None, now: FileMark) -> int:
    """Where to start reading: the stored offset if the file only grew (its first bytes are the
    ones seen last time), else the beginning."""
    if previous is None or now.size < previous.size:
        return 0
    if head_hash(path, previous.size) != previous.head_hash:
        return 0
    return previous.offset


def save_mark(session: Session, importer: str, path: Path, mark: FileMark) -> None:
    values = {
        "importer_name": importer,
        "path": str(path),
        "size": mark.size,
        "mtime_ns": mark.mtime_ns,
        "offset": mark.offset,
        "head_hash": mark.head_hash,
        "updated_at": utcnow(),
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
