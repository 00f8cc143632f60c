"""Where import_sources looks: aider histories below the roots, depth-limited and never inside
tool or dependency directories; a host-wide lock per file between processes."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from yzos_jobs.sources import file_locks
from yzos_jobs.sources.discovery import AIDER_HISTORY, aider_histories, expand_paths, files_below
from yzos_jobs.sources.file_locks import file_lock


def _history(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / AIDER_HISTORY).write_text("# aider chat started at 2025-01-01 10:00:00\n")
    return (path / AIDER_HISTORY).resolve()


def test_histories_are_found_in_repositories_not_in_tools_or_dependencies(tmp_path: Path) -> None:
    wanted = [_history(tmp_path / "Code" / "app"), _history(tmp_path / "Code" / "org" / "lib")]
    _history(tmp_path / "Code" / "app" / "node_modules" / "pkg")
    _history(tmp_path / "Code" / "app" / ".git" / "x")
    venv = tmp_path / "Code" / "app" / "env"
    _history(venv / "lib")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    _history(tmp_path / "Code" / "a" / "b" / "c" / "d")  # four levels below the root
    errors: list[tuple[Path, OSError]] = []
    found = aider_histories([tmp_path / "Code"], 3, lambda p, e: errors.append((p, e)))
    assert found == sorted(wanted) and errors == []
    deeper = aider_histories([tmp_path / "Code"], 4, lambda p, e: errors.append((p, e)))
    assert len(deeper) == 3


def test_a_repository_linked_from_another_disk_is_searched_once_and_links_up_are_not(
    tmp_path: Path,
) -> None:
    # `~/Code/app -> /mnt/ssd/app`: the history there is found; a second link to it, a link to
    # the home folder and one to `/` lead nowhere new
    elsewhere = _history(tmp_path / "ssd" / "app")
    code = tmp_path / "home" / "Code"
    code.mkdir(parents=True)
    (code / "app").symlink_to(tmp_path / "ssd" / "app")
    (code / "same-app").symlink_to(tmp_path / "ssd" / "app")
    (code / "home").symlink_to(tmp_path / "home")
    (code / "root").symlink_to("/")
    _history(tmp_path / "home" / "notes")  # in the home folder, outside the roots
    errors: list[tuple[Path, OSError]] = []
    found = aider_histories([code], 3, lambda p, e: errors.append((p, e)))
    assert found == [elsewhere] and errors == []
    # a link to a folder inside the roots leaves that folder to be searched where it is, at
    # its own depth
    inside = _history(code / "proj" / "app")
    (code / "x").mkdir()
    (code / "x" / "link").symlink_to(code / "proj")
    found = aider_histories([code], 2, lambda p, e: errors.append((p, e)))
    assert found == sorted([elsewhere, inside])
    # the roots kept on another disk, reached through a link: a link from there up to the home
    # folder is still not followed
    home = tmp_path / "home2"
    _history(home / "notes")
    on_ssd = tmp_path / "ssd-code"
    tool = _history(on_ssd / "tool")
    (on_ssd / "home").symlink_to(home)
    (home / "Code").symlink_to(on_ssd)
    assert aider_histories([home / "Code"], 3, lambda p, e: errors.append((p, e))) == [tool]
    assert errors == []
    # Claude Code's project folders the same way
    projects = tmp_path / "claude" / "projects"
    projects.mkdir(parents=True)
    transcript = tmp_path / "ssd" / "-home-me-app" / "s1.jsonl"
    transcript.parent.mkdir()
    transcript.write_text("{}\n")
    (projects / "-home-me-app").symlink_to(transcript.parent)
    assert files_below([projects], "*.jsonl", lambda p, e: errors.append((p, e))) == [transcript]


def test_configured_paths_expand_the_home_and_tell_the_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "Code").mkdir()
    found, missing = expand_paths(["~/Code", "~/.claude/projects"])
    assert found == [tmp_path / "Code"] and missing == [tmp_path / ".claude" / "projects"]
    # below a file, or through a loop of links: not there either
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    found, missing = expand_paths(["~/notes.txt/x", "~/loop/x"])
    assert found == [] and missing == [tmp_path / "notes.txt" / "x", tmp_path / "loop" / "x"]


def test_configured_paths_expand_variables_and_pass_over_unset_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (tmp_path / ".claude" / "projects").mkdir(parents=True)
    default = ["$CLAUDE_CONFIG_DIR/projects", "~/.claude/projects", "~/.config/claude/projects"]
    found, missing = expand_paths(default)
    assert found == [tmp_path / ".claude" / "projects"]
    assert missing == [tmp_path / ".config" / "claude" / "projects"]  # the unset one: not counted
    # Claude Code's folder moved onto the default one is read once
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    found, _ = expand_paths(default)
    assert found == [tmp_path / ".claude" / "projects"]
    found, _ = expand_paths(["${CLAUDE_CONFIG_DIR}/projects"])
    assert found == [tmp_path / ".claude" / "projects"]
    # an empty variable names nothing; a folder whose own name holds a `$` is that folder
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")
    (tmp_path / "my$stuff").mkdir()
    found, missing = expand_paths(["$CLAUDE_CONFIG_DIR/projects", "~/my$stuff"])
    assert found == [tmp_path / "my$stuff"] and missing == []


HOLD = """
import sys, time
from pathlib import Path
from yzos_jobs.sources.file_locks import file_lock
with file_lock(Path(sys.argv[1]), sys.argv[2]) as held:
    print("held" if held else "refused", flush=True)
    sys.stdin.readline()
"""


def test_one_process_at_a_time_holds_a_files_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YZOS_RUNTIME_DIR", str(tmp_path / "run"))
    target = tmp_path / "history.md"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(target), "sqlite:/srv/a.db"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with file_lock(target, "sqlite:/srv/a.db") as held:
            assert not held  # the other process has it
        with file_lock(tmp_path / "another.md", "sqlite:/srv/a.db") as held:
            assert held  # another file's lock is its own
        with file_lock(target, "sqlite:/srv/b.db") as held:
            assert held  # and so is the file's for another database, which needs it too
    finally:
        holder.communicate("\n", timeout=30)
    with file_lock(target, "sqlite:/srv/a.db") as held:
        assert held  # released when its holder let go


@pytest.fixture
def shared_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The lock folder in the shared temporary folder (no runtime directory set), in a fresh
    temporary folder of this test's."""
    monkeypatch.delenv("YZOS_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path / f"yzos-jobs-{os.getuid()}"


def test_a_lock_folder_made_by_someone_else_in_the_shared_tmp_is_refused(shared_tmp: Path) -> None:
    # another user (or a link to elsewhere) got `/tmp/yzos-jobs-<uid>` first
    elsewhere = shared_tmp.parent / "elsewhere"
    elsewhere.mkdir()
    shared_tmp.symlink_to(elsewhere)
    refused = pytest.raises(file_locks.ForeignLockFolder, match="YZOS_RUNTIME_DIR")
    with refused, file_lock(shared_tmp.parent / "history.md"):
        pass
    assert list(elsewhere.iterdir()) == []  # nothing made through the link


def test_a_lock_folder_of_ours_left_open_is_closed_to_others(shared_tmp: Path) -> None:
    shared_tmp.mkdir(mode=0o777)
    os.chmod(shared_tmp, 0o777)
    with file_lock(shared_tmp.parent / "history.md") as held:
        assert held
    assert stat.S_IMODE(shared_tmp.stat().st_mode) == 0o700
    assert stat.S_IMODE((shared_tmp / "locks").stat().st_mode) == 0o700


def test_a_lock_file_is_never_opened_through_a_link(shared_tmp: Path) -> None:
    target = shared_tmp.parent / "history.md"
    with file_lock(target):
        pass
    planted = file_locks.lock_path(target)
    planted.unlink()
    planted.symlink_to(shared_tmp.parent / "PWNED")
    with pytest.raises(OSError), file_lock(target):
        pass
    assert not (shared_tmp.parent / "PWNED").exists()


def test_a_lock_folder_removed_and_made_again_by_someone_else_is_refused(shared_tmp: Path) -> None:
    # a cleaner of the shared temporary folder removed it while the daemon ran, and another
    # user made it again, its `locks` a link to a folder of theirs
    target = shared_tmp.parent / "history.md"
    with file_lock(target) as held:
        assert held
    shutil.rmtree(shared_tmp)
    theirs = shared_tmp.parent / "theirs"
    theirs.mkdir()
    shared_tmp.mkdir()
    (shared_tmp / "locks").symlink_to(theirs)
    refused = pytest.raises(file_locks.ForeignLockFolder)
    with refused, file_lock(target):
        pass
    assert list(theirs.iterdir()) == []
    shutil.rmtree(shared_tmp)
    with file_lock(target) as held:  # removed: made again
        assert held


def test_one_database_has_one_identity_however_its_url_is_spelt(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the file locks are per database: two daemons on one database must share them
    from sqlalchemy.engine import make_url

    from yzos_jobs.db.connection import create_db_engine, database_identity

    def identity(url: str) -> str:
        engine = create_db_engine(url)
        try:
            return database_identity(engine)
        finally:
            engine.dispose()

    spelt = make_url(pg_url)
    other = spelt.set(host="localhost" if spelt.host != "localhost" else "127.0.0.1", port=None)
    assert identity(pg_url) == identity(other.render_as_string(hide_password=False))
    (tmp_path / "data").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "data")
    monkeypatch.chdir(tmp_path / "data")
    same = {
        identity("sqlite:///yzos.db"),
        identity(f"sqlite:///{tmp_path / 'link' / 'yzos.db'}"),
        identity(f"sqlite:///file:{tmp_path / 'data' / 'yzos.db'}?uri=true"),
    }
    assert len(same) == 1
    assert identity(f"sqlite:///{tmp_path / 'other.db'}") not in same
