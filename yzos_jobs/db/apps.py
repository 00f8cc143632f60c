"""App metadata: the one upsert (from `apps scan` and JSONL `app` records) and the lookup the
classifier's app_lookup makes for inputs that carry only a bundle id."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import AppMetadataRow
from yzos_jobs.inference.contract import AppMetadata


@dataclass(frozen=True)
class AppRecord:
    """One observation of an app, as it is upserted."""

    bundle_id: str
    bundle_name: str | None
    category: str | None
    source: str  # info_plist | desktop_entry | jsonl | ...


def upsert_app_metadata(session: Session, records: Iterable[AppRecord]) -> int:
    """Insert or update app metadata rows; a later observation wins, known fields are kept."""
    now = utcnow()
    rows = {
        r.bundle_id: {
            "bundle_id": r.bundle_id,
            "bundle_name": r.bundle_name,
            "category": r.category,
            "source": r.source,
            "updated_at": now,
        }
        for r in records
        if r.bundle_id
    }
    if not rows:
        return 0
    stmt = upsert_insert(session, AppMetadataRow)
    stmt = stmt.on_conflict_do_update(
        index_elements=["bundle_id"],
        set_={
            "bundle_name": func.coalesce(stmt.excluded.bundle_name, AppMetadataRow.bundle_name),
            "category": func.coalesce(stmt.excluded.category, AppMetadataRow.category),
            "source": stmt.excluded.source,
            "updated_at": stmt.excluded.updated_at,
        },
    )
    session.execute(stmt, [rows[k] for k in sorted(rows)])
    return len(rows)


def lookup_app_metadata(
    sessions: sessionmaker[Session], bundle_ids: Sequence[str]
) -> Mapping[str, AppMetadata]:
    if not bundle_ids:
        return {}
    with sessions() as session:
        rows = session.execute(
            select(AppMetadataRow).where(AppMetadataRow.bundle_id.in_(list(bundle_ids)))
        ).scalars()
        return {r.bundle_id: AppMetadata(r.bundle_id, r.bundle_name, r.category) for r in rows}
