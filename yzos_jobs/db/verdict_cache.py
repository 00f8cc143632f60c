"""The verdict cache: JSON verdicts keyed by (model id, prompt version, input hash), with a TTL."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.connection import transaction
from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import VerdictCacheRow

_CHUNK = 500


class VerdictCache:
    def __init__(self, sessions: sessionmaker[Session], ttl_s: int) -> None:
        self._sessions = sessions
        self._ttl = timedelta(seconds=ttl_s)

    def get_many(
        self, model_id: str, prompt_version: str, hashes: Iterable[str]
    ) -> dict[str, dict[str, Any]]:
        keys = list(dict.fromkeys(hashes))
        found: dict[str, dict[str, Any]] = {}
        if self._ttl.total_seconds() <= 0:
            return found
        now = utcnow()
        with self._sessions() as session:
            for start in range(0, len(keys), _CHUNK):
                rows = session.execute(
                    select(VerdictCacheRow.input_hash, VerdictCacheRow.verdict).where(
                        VerdictCacheRow.model_id == model_id,
                        VerdictCacheRow.prompt_version == prompt_version,
                        VerdictCacheRow.input_hash.in_(keys[start : start + _CHUNK]),
                        VerdictCacheRow.expires_at > now,
                    )
                )
                found.update({h: v for h, v in rows})
        return found

    def put_many(
        self, model_id: str, prompt_version: str, verdicts: Mapping[str, dict[str, Any]]
    ) -> None:
        if not verdicts or self._ttl.total_seconds() <= 0:
            return
        now = utcnow()
        rows = [
            {
                "model_id": model_id,
                "prompt_version": prompt_version,
                "input_hash": h,
                "verdict": v,
                "created_at": now,
                "expires_at": now + self._ttl,
            }
            for h, v in sorted(verdicts.items())  # one lock order across daemons
        ]
        with transaction(self._sessions) as session:
            stmt = upsert_insert(session, VerdictCacheRow)
            stmt = stmt.on_conflict_do_update(
                index_elements=["model_id", "prompt_version", "input_hash"],
                set_={
                    "verdict": stmt.excluded.verdict,
                    "created_at": stmt.excluded.created_at,
                    "expires_at": stmt.excluded.expires_at,
                },
            )
            for start in range(0, len(rows), _CHUNK):
                session.execute(stmt, rows[start : start + _CHUNK])


def delete_expired_verdicts(session: Session, now: datetime) -> int:
    """Drop cached verdicts past their TTL (they are never served anyway)."""
    result = session.execute(delete(VerdictCacheRow).where(VerdictCacheRow.expires_at <= now))
    return int(result.rowcount or 0)


def forget_verdicts(session: Session, hashes: Sequence[str]) -> int:
    """Drop the cached verdicts of these inputs under every model and prompt version (a user
    asked for a new judgement)."""
    if not hashes:
        return 0
    result = session.execute(
        delete(VerdictCacheRow).where(VerdictCacheRow.input_hash.in_(list(hashes)))
    )
    return int(result.rowcount or 0)
