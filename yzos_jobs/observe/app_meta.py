"""App metadata as the machine shows it: macOS bundles (Info.plist) and freedesktop .desktop
entries, read into AppRecords. Storing them is db/apps.py's upsert; the classifier reads them
back through the app_lookup that runtime.build_classifier wires to db/apps.py, for inputs that
carry a bundle id and no metadata.

Only regular files of at most MAX_APP_FILE_BYTES are read. A file that cannot be read or parsed
(malformed or truncated XML or binary plist, a .desktop file with no [Desktop Entry] group, a
FIFO or device by that name) is an AppFileError naming the file; the scan goes on.
"""

from __future__ import annotations

import configparser
import os
import plistlib
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from yzos_jobs.db.apps import AppRecord
from yzos_jobs.files import describe, read_bounded, walk
from yzos_jobs.text import clean_text

MAX_APP_FILE_BYTES = 1 << 20  # an Info.plist or .desktop file is a few KB; 1 MiB is generous
FIELD_CHARS = 256


class AppFileError(Exception):
    """One Info.plist or .desktop file that could not be read; reported as one line."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def _read(path: Path) -> bytes:
    try:
        return read_bounded(path, MAX_APP_FILE_BYTES)
    except OSError as exc:
        raise AppFileError(path, describe(exc)) from None


def _field(value: object) -> str | None:
    return clean_text(value, FIELD_CHARS) if isinstance(value, str) else None


def read_info_plist(path: Path) -> AppRecord:
    """CFBundleIdentifier, CFBundleName and LSApplicationCategoryType of one Info.plist (XML or
    binary)."""
    data = _read(path)
    try:
        plist = plistlib.loads(data)
    except Exception as exc:  # plistlib fails on corrupt input in many ways (expat, struct, …)
        detail = str(exc).splitlines()[0][:120] if str(exc) else exc.__class__.__name__
        raise AppFileError(path, f"not a valid plist ({detail})") from None
    if not isinstance(plist, dict):
        raise AppFileError(path, "not a valid Info.plist (not a dictionary)")
    bundle_id = _field(plist.get("CFBundleIdentifier"))
    if not bundle_id:
        raise AppFileError(path, "no CFBundleIdentifier")
    return AppRecord(
        bundle_id=bundle_id,
        bundle_name=_field(plist.get("CFBundleName")) or _field(plist.get("CFBundleDisplayName")),
        category=_field(plist.get("LSApplicationCategoryType")),
        source="info_plist",
    )


def read_desktop_entry(path: Path) -> AppRecord | None:
    """Name, Categories and StartupWMClass of a freedesktop .desktop file. The bundle id is the
    StartupWMClass when given (what window observers report), else the desktop file id. None
    for an entry that is not an application (a link, a directory)."""
    parser = configparser.RawConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        # a byte order mark first (some editors write one) is no part of the first line
        parser.read_string(_read(path).decode("utf-8-sig", errors="replace"))
    except configparser.Error as exc:
        detail = str(exc).splitlines()[0][:120]
        raise AppFileError(path, f"not a valid .desktop file ({detail})") from None
    if not parser.has_section("Desktop Entry"):
        raise AppFileError(path, "not a valid .desktop file (no [Desktop Entry] group)")
    entry = parser["Desktop Entry"]
    if entry.get("Type", "Application") != "Application":
        return None
    categories = [c for c in entry.get("Categories", "").split(";") if c]
    bundle_id = _field(entry.get("StartupWMClass")) or _field(path.stem)
    if not bundle_id:
        raise AppFileError(path, "no StartupWMClass and no file name to identify the app")
    return _Entry(
        bundle_id=bundle_id,
        bundle_name=_field(entry.get("Name")),
        category=_field(";".join(categories)),
        source="desktop_entry",
        rank=_rank(entry, path, bundle_id),
    )


@dataclass(frozen=True)
class _Entry(AppRecord):
    """A desktop entry, with how well it stands for its window class among the entries that
    share it (an app's URL handler or helper names the app's class too)."""

    rank: tuple[bool, bool] = (True, True)


def _rank(entry: configparser.SectionProxy, path: Path, bundle_id: str) -> tuple[bool, bool]:
    """Lower first: shown in menus (not NoDisplay or Hidden), then named as its class is
    (`code.desktop` for the class `code`, before `code-url-handler.desktop`)."""
    hidden = any(entry.get(k, "").strip().lower() == "true" for k in ("NoDisplay", "Hidden"))
    return (hidden, path.stem.casefold() != bundle_id.casefold())


def default_app_dirs() -> list[Path]:
    if sys.platform == "darwin":
        return [Path("/Applications"), Path.home() / "Applications"]
    data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local/share")
    data_dirs = os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share"
    return [data_home / "applications"] + [
        Path(d) / "applications" for d in data_dirs.split(":") if d
    ]


def scan_apps(dirs: Iterable[Path]) -> Iterator[AppRecord | AppFileError]:
    """Every app found below the given directories (*.app bundles and *.desktop entries), and
    an AppFileError for each file or directory that could not be read."""
    entries: dict[str, _Entry] = {}
    for base in dirs:
        if not base.is_dir():
            continue
        errors: list[AppFileError] = []

        def listing_failed(path: Path, exc: OSError, errors: list[AppFileError] = errors) -> None:
            errors.append(AppFileError(path, describe(exc)))

        for here, subdirs, files in walk(base, listing_failed):
            yield from errors
            errors.clear()
            for d in list(subdirs):
                if d.endswith(".app"):
                    subdirs.remove(d)  # a bundle's insides are not searched for more apps
                    found = _try(read_info_plist, here / d / "Contents" / "Info.plist")
                    if found is not None:
                        yield found
            for f in sorted(files):
                if f.endswith(".desktop"):
                    found = _try(read_desktop_entry, here / f)
                    if isinstance(found, _Entry):
                        best = entries.get(found.bundle_id)
                        if best is None or found.rank < best.rank:
                            entries[found.bundle_id] = found
                    elif found is not None:
                        yield found
        yield from errors
    # one record per window class: the entry that stands for it best
    for found in entries.values():
        yield AppRecord(found.bundle_id, found.bundle_name, found.category, found.source)


def _try(read: Callable[[Path], AppRecord | None], path: Path) -> AppRecord | AppFileError | None:
    try:
        return read(path)
    except AppFileError as exc:
        return exc
