"""An embedded database this user may read but not write (a service account's, in a folder of
its own): the commands that only read show it, as it stands and with what a running writer has
logged beside it, and leave the folder as it was; what needs a write, or a log no one folded
in, is refused in one line."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.adversarial.database_021 import database_at_021
from tests.support.cli import assert_one_line_error, cli_env, run_cli, without_root_powers
from yzos_jobs.db import migrate
from yzos_jobs.db.connection import create_db_engine
from yzos_jobs.db.schema_state import head_revision

pytestmark = [
    pytest.mark.adversarial,
    pytest.mark.skipif(sys.platform != "linux", reason="setpriv"),
]

# A writer that adds a person, keeps its log unfolded (no checkpoint) and waits to be killed.
WRITER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute(
    "INSERT INTO entities (kind, display_name, normalized_name, status, verdict_source,"
    " sighting_count, first_seen_at, last_seen_at, created_at, updated_at) VALUES ('person',"
    " 'Wendy Writer', 'wendy writer', 'active', 'dry_run', 0, '2026-11-02', '2026-11-02',"
    " '2026-11-02', '2026-11-02')"
)
print("written", flush=True)
time.sleep(600)
"""


def _populated(folder: Path, revision: str | None = None) -> Path:
    folder.mkdir()
    path = folder / "yzos.db"
    database_at_021(f"sqlite:///{path}")
    engine = create_db_engine(f"sqlite:///{path}")
    try:
        migrate.upgrade(engine, revision or head_revision())
    finally:
        engine.dispose()
    return path


@contextmanager
def _closed_to_writes(folder: Path) -> Iterator[None]:
    modes = {p: p.stat().st_mode for p in [folder, *folder.iterdir()]}
    for p in folder.iterdir():
        p.chmod(0o444)
    folder.chmod(0o555)
    try:
        yield
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def _reader(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(
        *args,
        env=cli_env(f"sqlite:///{path}"),
        cwd=path.parent.parent,
        prefix=without_root_powers(),
    )


def test_the_reading_commands_show_it_and_leave_its_folder_as_it_was(tmp_path: Path) -> None:
    path = _populated(tmp_path / "service")
    before = sorted(p.name for p in path.parent.iterdir())
    with _closed_to_writes(path.parent):
        listed = _reader(path, "entities")
        current = _reader(path, "db", "current")
        exported = _reader(path, "export")
        shown = _reader(path, "show", "harbor-sync")
        status = _reader(path, "status")
        promote = _reader(path, "once", "entity_promote")
        after = sorted(p.name for p in path.parent.iterdir())
    for ran in (listed, current, exported, shown, status):
        assert ran.returncode == 0, ran.stderr
    assert "harbor-sync" in listed.stdout and "Alice Chen" in listed.stdout
    assert current.stdout.strip() == f"sqlite:///{path} (read-only): 028 (head 028, up to date)"
    assert "Add release notes draft" in exported.stdout
    assert "Add release notes draft" in shown.stdout
    assert "promoted 5" in status.stdout
    assert after == before  # no index or log made beside it
    # a command that writes says so in one line
    assert_one_line_error(promote, 1, f"cannot write the database {path}", "may not write it")


def test_what_a_running_writer_logged_is_read_beside_it(tmp_path: Path) -> None:
    path = _populated(tmp_path / "service")
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "written\n"
        with _closed_to_writes(path.parent):
            listed = _reader(path, "entities", "--kind", "person")
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert listed.returncode == 0, listed.stderr
    assert "Wendy Writer" in listed.stdout and "Alice Chen" in listed.stdout


def test_a_log_left_without_its_index_is_refused_in_one_line(tmp_path: Path) -> None:
    path = _populated(tmp_path / "service")
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None and writer.stdout.readline() == "written\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    Path(f"{path}-shm").unlink()  # the log alone: its index gone with the machine's restart
    with _closed_to_writes(path.parent):
        listed = _reader(path, "entities")
    assert_one_line_error(
        listed, 1, f"cannot read {path}", "yzos.db-wal", "a user who may write the database"
    )
    # whoever may write it folds the log in, and then anyone may read it
    assert run_cli("entities", env=cli_env(f"sqlite:///{path}"), cwd=tmp_path).returncode == 0
    assert not os.path.exists(f"{path}-wal")
    with _closed_to_writes(path.parent):
        listed = _reader(path, "entities", "--kind", "person")
    assert "Wendy Writer" in listed.stdout


def test_a_file_read_only_in_a_folder_this_user_may_write_gets_nothing_made_beside_it(
    tmp_path: Path,
) -> None:
    # a folder shared with the service's group: an index and a log made by the reader would be
    # the reader's, and the service could no longer write its own database
    path = _populated(tmp_path / "shared")
    before = sorted(p.name for p in path.parent.iterdir())
    path.chmod(0o444)
    try:
        listed = _reader(path, "entities")
        after = sorted(p.name for p in path.parent.iterdir())
    finally:
        path.chmod(0o644)
    assert listed.returncode == 0, listed.stderr
    assert "harbor-sync" in listed.stdout
    assert after == before


def test_a_link_to_the_database_is_read_where_the_file_is(tmp_path: Path) -> None:
    path = _populated(tmp_path / "service")
    (tmp_path / "mine").mkdir()
    link = tmp_path / "mine" / "yzos.db"
    link.symlink_to(path)
    with _closed_to_writes(path.parent):
        listed = _reader(link, "entities")
        current = _reader(link, "db", "current")
    assert listed.returncode == 0, listed.stderr
    assert "harbor-sync" in listed.stdout
    assert current.stdout.startswith(f"sqlite:///{path} (read-only): 028")


def test_an_older_schema_is_not_migrated_but_named(tmp_path: Path) -> None:
    path = _populated(tmp_path / "service", "021")
    with _closed_to_writes(path.parent):
        listed = _reader(path, "entities")
    assert_one_line_error(
        listed, 1, "at revision 021", "needs 028", "run `yzos-jobs db upgrade` as one who may"
    )
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchone() == ("021",)


def test_a_file_uri_of_the_users_is_read_read_only_and_refused_where_missing(
    tmp_path: Path,
) -> None:
    path = _populated(tmp_path / "service")
    given = f"sqlite:///file:{path}?mode=ro&uri=true"
    with _closed_to_writes(path.parent):
        listed = run_cli("entities", env=cli_env(given), cwd=tmp_path, prefix=without_root_powers())
    assert listed.returncode == 0, listed.stderr
    assert "harbor-sync" in listed.stdout
    missing = tmp_path / "nowhere" / "yzos.db"
    refused = run_cli("pause", "prune", env=cli_env(f"sqlite:///file:{missing}?uri=true"))
    assert_one_line_error(refused, 1, f"no database at {missing}")
    assert not missing.parent.exists()


def test_a_rollback_journal_a_killed_writer_left_is_refused_not_read_past(
    tmp_path: Path,
) -> None:
    # a database some other tool took out of WAL mode, whose writer died mid-transaction: its
    # journal holds the pages as they were, which only a writer puts back
    path = _populated(tmp_path / "service")
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=DELETE")
    Path(f"{path}-journal").write_bytes(b"\0" * 4096)
    with _closed_to_writes(path.parent):
        listed = _reader(path, "entities")
    assert_one_line_error(listed, 1, f"cannot read {path}", "yzos.db-journal")


def test_a_relative_url_in_a_removed_working_directory_is_one_line(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    command = (
        "import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
        "from yzos_jobs.cli import cli; cli(['status'])"
    )
    ran = subprocess.run(
        [sys.executable, "-c", command, str(gone)],
        env=cli_env("sqlite:///yzos.db"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_one_line_error(ran, 1, "no database at yzos.db", "working directory, which was removed")


def test_a_write_to_a_read_only_file_is_refused_before_anything_is_made_beside_it(
    tmp_path: Path,
) -> None:
    # the folder is this user's, the file read-only: SQLite would fail at its first write and
    # leave an index with the file's read-only mode, which then refuses even its owner
    path = _populated(tmp_path / "shared")
    folder = path.parent
    before = sorted(p.name for p in folder.iterdir())
    path.chmod(0o444)
    try:
        imported = _reader(path, "once", "import_sources")
        paused = _reader(path, "pause", "prune")
        after = sorted(p.name for p in folder.iterdir())
    finally:
        path.chmod(0o644)
    for refused in (imported, paused):
        assert_one_line_error(refused, 1, f"cannot write the database {path}", "may not write it")
    assert after == before
    # an index left read-only beside it is named, not taken for the database
    index = Path(f"{path}-shm")
    index.write_bytes(b"")
    index.chmod(0o444)
    refused = _reader(path, "pause", "prune")
    assert_one_line_error(refused, 1, f"cannot write the database {path}", "yzos.db-shm")


@pytest.mark.parametrize("device", ["/dev/null", "folder"])
def test_a_database_url_naming_no_regular_file_is_refused(tmp_path: Path, device: str) -> None:
    target = device if device.startswith("/") else str(tmp_path)
    journal_before = os.path.exists("/dev/null-journal")
    for args in (("status",), ("once", "import_sources")):
        refused = run_cli(*args, env=cli_env(f"sqlite:///{target}"), cwd=tmp_path)
        assert_one_line_error(refused, 1, f"cannot use {target} as the database", "not a regular")
    assert os.path.exists("/dev/null-journal") == journal_before
