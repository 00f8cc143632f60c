"""The import_sources job run in-process (`once import_sources` runs the same): application
folders are read when their listing changes; a JSONL source is read on from where it stopped;
a configured path that does not exist is counted, not an error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.support.jobs import make_ctx
from yzos_jobs.db.models import AppMetadataRow
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.sources.feed import run_import_sources

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXAMPLE = FIXTURES.parents[1] / "examples" / "observations.jsonl"
DESKTOP = FIXTURES / "real" / "apps" / "share" / "applications"


def _bundle_ids(ctx: JobContext) -> set[str]:
    with ctx.sessions() as s:
        return set(s.scalars(select(AppMetadataRow.bundle_id)))


@pytest.fixture
def app_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The XDG application folder the job scans, holding one real .desktop entry."""
    folder = tmp_path / "data" / "applications"
    folder.mkdir(parents=True)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "none"))
    monkeypatch.setenv("YZOS_RUNTIME_DIR", str(tmp_path / "run"))
    return folder


def test_application_folders_are_read_when_they_change(db_url: str, app_folder: Path) -> None:
    entries = sorted(DESKTOP.glob("*.desktop"))
    shutil.copy(entries[0], app_folder)
    ctx = make_ctx(db_url, sources={"claude_code": [], "apps": True})
    first = run_import_sources(ctx)
    assert first["apps"] == 1 and first["sources"]["apps"]["files"] == 1
    stored = _bundle_ids(ctx)
    assert len(stored) == 1
    again = run_import_sources(ctx)
    assert again["apps"] == 0 and again["sources"]["apps"] == {"files_unchanged": 1}
    shutil.copy(entries[1], app_folder)
    later = run_import_sources(ctx)
    assert later["apps"] == 2  # the folder is read again whole; its entries are upserted
    assert len(_bundle_ids(ctx)) == 2 and stored < _bundle_ids(ctx)


def test_jsonl_sources_are_read_on_and_missing_paths_counted(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YZOS_RUNTIME_DIR", str(tmp_path / "run"))
    feed = tmp_path / "observer"
    feed.mkdir()
    lines = (EXAMPLE).read_text().splitlines(keepends=True)
    half = len(lines) // 2
    (feed / "out.jsonl").write_text("".join(lines[:half]))
    ctx = make_ctx(
        db_url,
        sources={"claude_code": [], "apps": False, "jsonl": [str(feed), str(tmp_path / "gone")]},
    )
    first = run_import_sources(ctx)
    assert first["records"] == half and first["sources"]["jsonl"]["missing_paths"] == 1
    with (feed / "out.jsonl").open("a") as fh:
        fh.write("".join(lines[half:]))
    second = run_import_sources(ctx)
    assert second["records"] == len(lines) - half
    third = run_import_sources(ctx)
    assert third["records"] == 0 and third["sources"]["jsonl"]["files_unchanged"] == 1
