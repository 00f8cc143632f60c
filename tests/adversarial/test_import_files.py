"""Bad files cost only themselves (app metadata included): an endless
line, a FIFO, a device, an unreadable file or directory, a malformed plist or .desktop file is
one line on stderr naming it, never a hang, a traceback or memory without bound; the rest is
imported."""

from __future__ import annotations

import json
import os
import plistlib
import resource
import shutil
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.adversarial.importing import (
    candidate_texts,
    cc_line,
    idle_config,
    import_transcripts,
    jsonl_line,
    only_skipped_at,
    requests_seen,
    run_import,
    where,
)
from tests.support.cli import assert_one_line_error, cli_env, run_cli, without_root_powers
from tests.support.jobs import make_ctx
from yzos_jobs.db.models import AppMetadataRow
from yzos_jobs.importers.reading import MAX_LINE_BYTES

pytestmark = pytest.mark.adversarial

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _long_jsonl_line() -> bytes:
    return (
        b'{"record_id": "long", "session_id": "s1", "type": "candidate", "raw_text": "'
        + b"x" * MAX_LINE_BYTES
        + b'"}\n'
    )


# --- 15. lines past the bound --------------------------------------------------------------------


def test_jsonl_line_past_the_bound_is_one_line_and_the_rest_imported(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "long.jsonl"
    path.write_bytes(
        jsonl_line("r1", "Before the long line").encode()
        + _long_jsonl_line()
        + jsonl_line("r3", "After the long line").encode()
    )
    imported = run_import("jsonl", path, db_url=db_url, cwd=tmp_path)
    assert imported.returncode == 0
    only_skipped_at(imported, where(path, 2))
    assert f"line longer than {MAX_LINE_BYTES} bytes" in imported.skipped[0]
    assert candidate_texts(db_url) == ["Before the long line", "After the long line"]


def test_file_of_1_gib_without_a_newline_is_one_line_read_once_in_bounded_memory(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "endless.jsonl"
    with path.open("wb") as fh:
        fh.truncate(1 << 30)  # 1 GiB of NUL bytes and no newline (sparse: no disk space)
    # In a child process: its peak resident set is what is measured.
    first = run_import("jsonl", path, db_url=db_url, cwd=tmp_path, timeout=300, process=True)
    assert first.returncode == 0
    only_skipped_at(first, where(path, 1))
    # The largest resident set of any import this test process has run so far: far below the
    # file (it is never held), whatever imports ran before in this process.
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak_mb < 400, peak_mb
    again = run_import("jsonl", path, db_url=db_url, cwd=tmp_path)
    assert again.returncode == 0 and again.skipped == [] and again.counts["files_unchanged"] == 1
    # The writer ends the line and goes on: the rest of the line is passed over without a
    # second report, the next record is imported.
    with path.open("ab") as fh:
        fh.write(b"the end of the endless line\n" + jsonl_line("r2", "After the end").encode())
    third = run_import("jsonl", path, db_url=db_url, cwd=tmp_path)
    assert third.returncode == 0 and third.skipped == [], third.skipped
    assert candidate_texts(db_url) == ["After the end"]


def test_claude_code_and_aider_lines_past_the_bound_are_one_line_each(
    db_url: str, tmp_path: Path
) -> None:
    transcript = tmp_path / "projects" / "-home-me" / "sess-1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(
        cc_line("u1", "add the cache layer").encode()
        + b'{"uuid": "u2", "sessionId": "sess-1", "message": "'
        + b"y" * MAX_LINE_BYTES
        + b'"}\n'
        + cc_line("u3", "measure the cache layer").encode()
    )
    cc = import_transcripts(tmp_path, db_url)
    assert cc.returncode == 0
    only_skipped_at(cc, where(transcript, 2))
    assert {"add the cache layer", "measure the cache layer"} <= set(requests_seen(db_url))

    history = tmp_path / "repo" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_bytes(
        b"# aider chat started at 2026-11-04 10:00:00\n\n#### add the export button\n\n"
        + b"z" * (MAX_LINE_BYTES + 1)
        + b"\n\n#### export as csv too\n"
    )
    aider = run_import("aider", history, db_url=db_url, cwd=tmp_path, config=idle_config(tmp_path))
    assert aider.returncode == 0
    only_skipped_at(aider, where(history, 5))
    texts = requests_seen(db_url)
    assert "add the export button" in texts and "export as csv too" in texts


# --- 16. only regular files, with a size bound --------------------------------------------------


def _fifo_and_device(directory: Path, suffix: str) -> tuple[Path, Path]:
    fifo = directory / f"pipe{suffix}"
    os.mkfifo(fifo)
    zero = directory / f"zero{suffix}"
    zero.symlink_to("/dev/zero")
    return fifo, zero


def test_apps_scan_reports_fifo_device_and_oversized_file_and_stores_the_rest(
    db_url: str, tmp_path: Path
) -> None:
    apps = tmp_path / "apps"
    shutil.copytree(FIXTURES / "apps", apps, symlinks=True)
    entries = apps / "share" / "applications"
    (entries / "broken.desktop").unlink()
    fifo, zero = _fifo_and_device(entries, ".desktop")
    big = entries / "big.desktop"
    big.write_text("[Desktop Entry]\nName=Big\nComment=" + "x" * (2 << 20) + "\n")
    result = run_cli("apps", "scan", str(apps), db_url=db_url, cwd=tmp_path, timeout=60)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped ")]
    assert sorted(skipped) == sorted(
        [
            f"skipped {fifo}: not a regular file",
            f"skipped {zero}: not a regular file",
            f"skipped {big}: larger than {1 << 20} bytes",
        ]
    )
    with make_ctx(db_url).sessions() as s:
        stored = set(s.scalars(select(AppMetadataRow.bundle_id)))
    assert stored == {"com.tdesktop.Telegram", "com.microsoft.VSCode", "org.gnome.Nautilus"}


def test_importer_walking_a_directory_reports_fifo_and_device_and_imports_the_rest(
    db_url: str, tmp_path: Path
) -> None:
    feeds = tmp_path / "feeds"
    feeds.mkdir()
    (feeds / "good.jsonl").write_text(jsonl_line("r1", "The one good feed"))
    fifo, zero = _fifo_and_device(feeds, ".jsonl")
    imported = run_import("jsonl", feeds, db_url=db_url, cwd=tmp_path, timeout=60)
    assert imported.returncode == 0
    assert sorted(imported.skipped) == sorted(
        [f"skipped {fifo}: not a regular file", f"skipped {zero}: not a regular file"]
    )
    assert candidate_texts(db_url) == ["The one good feed"]


def test_importer_named_a_fifo_or_a_device_says_so_in_one_line(tmp_path: Path) -> None:
    fifo, zero = _fifo_and_device(tmp_path, ".jsonl")
    missing = tmp_path / "gone.jsonl"
    refused = [(fifo, "not a regular file"), (zero, "not a regular file")]
    for path, why in [*refused, (missing, "no such file or directory")]:
        result = run_cli("import", "jsonl", str(path), cwd=tmp_path, timeout=60)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert lines == [f"yzos-jobs: error: {path}: {why}"]
        # refused before the database is opened: no empty SQLite file is left behind
        assert not (tmp_path / "yzos.db").exists()


# --- 17. unreadable files and directories ---------------------------------------------------


@pytest.mark.skipif(sys.platform != "linux", reason="setpriv and /dev/zero semantics")
@pytest.mark.parametrize("importer", ["jsonl", "claude-code"])
def test_unreadable_file_and_directory_are_one_line_each_and_the_rest_imported(
    importer: str, db_url: str, tmp_path: Path
) -> None:
    root = tmp_path / "tree"
    (root / "project").mkdir(parents=True)
    good = root / "project" / "good.jsonl"
    line = jsonl_line if importer == "jsonl" else cc_line
    good.write_text(line("r1", "import the readable one"))
    unreadable = root / "project" / "secret.jsonl"
    unreadable.write_text(line("r2", "never read"))
    unreadable.chmod(0)
    locked = root / "locked"
    locked.mkdir()
    (locked / "inside.jsonl").write_text(line("r3", "never listed"))
    locked.chmod(0)
    dangling = root / "project" / "gone.jsonl"
    dangling.symlink_to(root / "deleted.jsonl")
    try:
        imported = run_import(
            importer,
            root,
            db_url=db_url,
            cwd=tmp_path,
            config=idle_config(tmp_path),
            prefix=without_root_powers(),
        )
    finally:
        locked.chmod(0o755)
        unreadable.chmod(0o644)
    assert imported.returncode == 0
    assert sorted(imported.skipped) == sorted(
        [
            f"skipped {unreadable}: cannot read (Permission denied)",
            f"skipped {locked}: cannot read (Permission denied)",
            f"skipped {dangling}: cannot read (No such file or directory)",
        ]
    )
    texts = requests_seen(db_url)
    assert "import the readable one" in texts
    assert "never read" not in texts and "never listed" not in texts


@pytest.mark.skipif(sys.platform != "linux", reason="setpriv")
def test_a_source_folder_that_cannot_be_entered_costs_only_itself(
    db_url: str, tmp_path: Path
) -> None:
    # the daemon's sources: aider histories below ~/Code, where a database's data folder
    # (mode 700, another owner's) cannot be entered; a JSONL file below such a folder; and a
    # JSONL folder that can be read
    code = tmp_path / "Code"
    (code / "app").mkdir(parents=True)
    locked = code / "app" / "pgdata"
    locked.mkdir()
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "x.jsonl").write_text(jsonl_line("r0", "never read"))
    observer = tmp_path / "observer"
    observer.mkdir()
    (observer / "out.jsonl").write_text(jsonl_line("r1", "Import the readable one"))
    config = tmp_path / "config.toml"
    config.write_text(
        "[sources]\nclaude_code = []\napps = false\n"
        f"aider = [{str(code)!r}]\njsonl = [{str(closed / 'x.jsonl')!r}, {str(observer)!r}]\n"
    )
    env = cli_env(db_url, YZOS_CONFIG=str(config), YZOS_RUNTIME_DIR=str(tmp_path / "run"))
    locked.chmod(0)
    closed.chmod(0)
    try:
        ran = run_cli("once", "import_sources", env=env, cwd=tmp_path, prefix=without_root_powers())
    finally:
        locked.chmod(0o755)
        closed.chmod(0o755)
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr
    skipped = [
        json.loads(line) for line in ran.stderr.splitlines() if "source file skipped" in line
    ]
    assert sorted(line["path"] for line in skipped) == [str(locked), str(closed / "x.jsonl")]
    assert "Import the readable one" in candidate_texts(db_url)


# --- malformed app metadata -------------------------------------------------------------------


def _bundle(apps: Path, name: str, plist: bytes) -> Path:
    path = apps / f"{name}.app" / "Contents" / "Info.plist"
    path.parent.mkdir(parents=True)
    path.write_bytes(plist)
    return path


def test_apps_scan_malformed_or_truncated_files_are_one_line_each_and_the_rest_stored(
    db_url: str, tmp_path: Path
) -> None:
    apps = tmp_path / "apps"
    shutil.copytree(FIXTURES / "apps", apps)
    xml = (apps / "Telegram.app" / "Contents" / "Info.plist").read_bytes()
    binary = (apps / "Visual Studio Code.app" / "Contents" / "Info.plist").read_bytes()
    truncated_xml = _bundle(apps, "CutXml", xml[: len(xml) // 2])
    truncated_binary = _bundle(apps, "CutBinary", binary[: len(binary) // 2])
    not_a_plist = _bundle(apps, "Garbage", b"\x00\x01 not a plist at all")
    no_id = _bundle(apps, "NoId", plistlib.dumps({"CFBundleName": "Nameless"}))
    # A binary plist can carry a NUL, which PostgreSQL refuses in text: stored without it.
    _bundle(
        apps,
        "Nul",
        plistlib.dumps(
            {"CFBundleIdentifier": "com.example.nul\x00byte", "CFBundleName": "Nul"},
            fmt=plistlib.FMT_BINARY,
        ),
    )
    bad_desktop = apps / "share" / "applications" / "broken.desktop"
    no_group = apps / "share" / "applications" / "nogroup.desktop"
    no_group.write_text("[Something Else]\nName=Nope\n")
    # a byte order mark first, as some editors write: an entry like any other
    marked = apps / "share" / "applications" / "marked.desktop"
    marked.write_bytes(b"\xef\xbb\xbf[Desktop Entry]\nType=Application\nName=Marked\n")
    result = run_cli("apps", "scan", str(apps), db_url=db_url, cwd=tmp_path, timeout=60)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped ")]
    named = [truncated_xml, truncated_binary, not_a_plist, no_id, bad_desktop, no_group]
    assert len(skipped) == len(named), skipped
    for path in named:
        assert sum(line.startswith(f"skipped {path}: ") for line in skipped) == 1, path
    with make_ctx(db_url).sessions() as s:
        stored = set(s.scalars(select(AppMetadataRow.bundle_id)))
    assert stored == {
        "com.tdesktop.Telegram",
        "com.microsoft.VSCode",
        "org.gnome.Nautilus",
        "com.example.nulbyte",
        "marked",
    }


def test_apps_scan_of_a_file_or_a_missing_folder_says_which(db_url: str, tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("")
    for path, why in ((file, "not a directory"), (tmp_path / "gone", "no such directory")):
        result = run_cli("apps", "scan", str(path), db_url=db_url, cwd=tmp_path)
        assert_one_line_error(result, 1, f"{path}: {why}")


@pytest.mark.parametrize("helper_first", [True, False])
def test_an_apps_helper_entry_does_not_take_its_window_class(
    db_url: str, tmp_path: Path, helper_first: bool
) -> None:
    # an editor's URL handler (hidden from menus) and a second entry name the editor's window
    # class too: the entry shown in menus, named as the class, is the one kept, in either order
    # of the folders they are in
    folders = [tmp_path / "a" / "applications", tmp_path / "b" / "applications"]
    for folder in folders:
        folder.mkdir(parents=True)
    helper, app = (folders[0], folders[1]) if helper_first else (folders[1], folders[0])
    (helper / "code-url-handler.desktop").write_text(
        "[Desktop Entry]\nName=Visual Studio Code - URL Handler\nNoDisplay=true\n"
        "Categories=Utility;TextEditor;\nStartupWMClass=Code\n"
    )
    (helper / "code-new-window.desktop").write_text(
        "[Desktop Entry]\nName=New Window\nCategories=Utility;\nStartupWMClass=Code\n"
    )
    (app / "code.desktop").write_text(
        "[Desktop Entry]\nName=Visual Studio Code\nCategories=Development;IDE;\n"
        "StartupWMClass=Code\n"
    )
    result = run_cli("apps", "scan", *map(str, folders), db_url=db_url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with make_ctx(db_url).sessions() as s:
        [row] = s.scalars(select(AppMetadataRow))
    assert (row.bundle_id, row.bundle_name, row.category) == (
        "Code",
        "Visual Studio Code",
        "Development;IDE",
    )


@pytest.mark.parametrize("rotated", ["records.jsonl.1", "records.jsonl-20261207", "copytruncate"])
def test_a_jsonl_file_rotated_by_renaming_loses_nothing_written_before(
    db_url: str, tmp_path: Path, rotated: str
) -> None:
    # an observer's log rotated as logrotate does: what was written after the last read is in
    # the renamed file now, and the file under the old name starts anew
    folder = tmp_path / "observer"
    folder.mkdir()
    log = folder / "records.jsonl"
    log.write_text(jsonl_line("r1", "Alpha Board", "s1"))
    assert run_import("jsonl", folder, db_url=db_url, cwd=tmp_path).counts["candidates"] == 1
    # a copy the person kept of the file as it was then, named after it too
    shutil.copy(log, folder / "records.jsonl-backup")
    with log.open("a") as fh:
        fh.write(jsonl_line("r2", "Beta Board", "s2"))
    if rotated == "copytruncate":  # logrotate's other way: copied, then emptied in place
        shutil.copy(log, folder / "records.jsonl.1")
    else:
        log.rename(folder / rotated)
    log.write_text(jsonl_line("r3", "Gamma Board", "s3"))
    again = run_import("jsonl", folder, db_url=db_url, cwd=tmp_path)
    assert again.counts["candidates"] == 2 and candidate_texts(db_url) == [
        "Alpha Board",
        "Beta Board",
        "Gamma Board",
    ]
    # read once: a third import finds nothing new, in either file
    third = run_import("jsonl", folder, db_url=db_url, cwd=tmp_path)
    assert third.counts.get("candidates", 0) == 0 and len(candidate_texts(db_url)) == 3
