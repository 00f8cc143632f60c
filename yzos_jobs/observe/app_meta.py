"""App metadata: read from macOS bundles (Info.plist) and freedesktop .desktop entries, upserted
into `app_metadata` (the only writer), and looked up by the classifier's prompt builder."""

from __future__ import annotations

import configparser
import os
import plistlib
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.db.dialect import upsert_insert
from yzos_jobs.db.models import AppMetadataRow
from yzos_jobs.db.types import utcnow
from yzos_jobs.entity.classifier import AppMetadata


@dataclass(frozen=True)
class AppRecord:
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


def read_info_plist(path: Path) -> AppRecord | None:
    """CFBundleIdentifier, CFBundleName and LSApplicationCategoryType of one Info.plist (XML or
    binary). None when the file is not a plist or has no bundle identifier."""
    try:
        with path.open("rb") as fh:
            data = plistlib.load(fh)
    except (OSError, plistlib.InvalidFileException, ValueError, EOFError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("CFBundleIdentifier"), str):
        return None
    name = data.get("CFBundleName") or data.get("CFBundleDisplayName")
    category = data.get("LSApplicationCategoryType")
    return AppRecord(
        bundle_id=data["CFBundleIdentifier"],
        bundle_name=name if isinstance(name, str) else None,
        category=category if isinstance(category, str) else None,
        source="info_plist",
    )


def read_desktop_entry(path: Path) -> AppRecord | None:
    """Name, Categories and StartupWMClass of a freedesktop .desktop file. The bundle id is the
    StartupWMClass when given (what window observers report), else the desktop file id."""
    parser = configparser.RawConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, configparser.Error):
        return None
    if not parser.has_section("Desktop Entry"):
        return None
    entry = parser["Desktop Entry"]
    if entry.get("Type", "Application") != "Application":
        return None
    categories = [c for c in entry.get("Categories", "").split(";") if c]
    return AppRecord(
        bundle_id=entry.get("StartupWMClass") or path.stem,
        bundle_name=entry.get("Name"),
        category=";".join(categories) or None,
        source="desktop_entry",
    )


def default_app_dirs() -> list[Path]:
    if sys.platform == "darwin":
        return [Path("/Applications"), Path.home() / "Applications"]
    data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local/share")
    data_dirs = os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share"
    return [data_home / "applications"] + [
        Path(d) / "applications" for d in data_dirs.split(":") if d
    ]


def scan_apps(dirs: Iterable[Path]) -> Iterator[AppRecord]:
    """Every app found below the given directories: *.app bundles and *.desktop entries."""
    for base in dirs:
        if not base.is_dir():
            continue
        for root, subdirs, files in os.walk(base):
            here = Path(root)
            for d in list(subdirs):
                if d.endswith(".app"):
                    subdirs.remove(d)  # a bundle's insides are not searched for more apps
                    record = read_info_plist(here / d / "Contents" / "Info.plist")
                    if record:
                        yield record
            for f in files:
                if f.endswith(".desktop"):
                    record = read_desktop_entry(here / f)
                    if record:
                        yield record
