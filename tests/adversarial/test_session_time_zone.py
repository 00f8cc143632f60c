"""PostgreSQL hands timestamps back in the session's time zone, which a server or a database
may set to anything (`initdb` takes the machine's zone, `ALTER DATABASE … SET timezone`, `PGTZ`):
a time the importer accepts near either end of the calendar must still come back, so one record
stamped with a zero time cannot stop the queue or the review commands."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text

from tests.adversarial.importing import jsonl_line
from tests.support.cli import run_cli

pytestmark = [pytest.mark.adversarial, pytest.mark.postgres]


@contextmanager
def _database_zone(pg_url: str, zone: str) -> Iterator[None]:
    """New sessions of the database start in `zone`, as an operator's setting makes them."""
    name = make_url(pg_url).database
    engine = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f"ALTER DATABASE \"{name}\" SET timezone TO '{zone}'"))
    try:
        yield
    finally:
        with engine.connect() as conn:  # the database goes back to the pool for other tests
            conn.execute(text(f'ALTER DATABASE "{name}" RESET timezone'))
        engine.dispose()


@pytest.mark.parametrize(
    ("zone", "stamp"),
    [
        ("America/New_York", "0001-01-01T00:00:00Z"),  # a Go observer's zero time, west of UTC
        ("Asia/Tokyo", "9999-12-31T23:00:00Z"),  # the far end, east of UTC
    ],
)
def test_a_time_at_the_calendars_end_comes_back_in_any_session_zone(
    pg_url: str, tmp_path: Path, zone: str, stamp: str
) -> None:
    with _database_zone(pg_url, zone):
        _edge_record_is_reviewed(pg_url, tmp_path, stamp)


def _edge_record_is_reviewed(pg_url: str, tmp_path: Path, stamp: str) -> None:
    records = tmp_path / "observed.jsonl"
    records.write_text(
        jsonl_line("r1", "Normal Project", suggested_kind="project")
        + jsonl_line("r2", "Edge Project", suggested_kind="project", observed_at=stamp)
    )
    imported = run_cli("import", "jsonl", str(records), db_url=pg_url, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr[-2000:]
    promoted = run_cli("once", "entity_promote", db_url=pg_url, cwd=tmp_path)
    assert promoted.returncode == 0, promoted.stderr[-2000:]
    listed = run_cli("entities", "--json", db_url=pg_url, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "Normal Project" in listed.stdout and "Edge Project" in listed.stdout
    exported = run_cli("export", "--format", "csv", db_url=pg_url, cwd=tmp_path)
    assert exported.returncode == 0 and "Edge Project" in exported.stdout, exported.stderr[-2000:]
    shown = run_cli("explain", "Edge Project", db_url=pg_url, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr[-2000:]
