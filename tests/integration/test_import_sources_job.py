"""The import_sources job run in-process (`once import_sources` runs the same): application
folders are read when their listing changes; a JSONL source is read on from where it stopped;
a configured path that does not exist is counted, not an error."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from sqlalchemy import select
from structlog.testing import capture_logs

from tests.support.cli import cli_env, run_cli
from tests.support.jobs import make_ctx
from yzos_jobs.db.column_types import utcnow
from yzos_jobs.db.models import AppMetadataRow, JobRun
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.runner import run_job
from yzos_jobs.sources import feed
from yzos_jobs.sources.feed import run_import_sources
from yzos_jobs.status import render_sources, sources_status

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


# A transcript Claude Code wrote to ~/.config/claude/projects (it was committed from there).
XDG_TRANSCRIPT = (
    FIXTURES
    / "real"
    / "claude-code"
    / "-Users-eric-haru-md"
    / "3288a74e-8e4c-4264-9227-40a4496abd9e.jsonl"
)


def _place(transcript: Path, projects: Path) -> None:
    target = projects / transcript.parent.name / transcript.name
    target.parent.mkdir(parents=True)
    shutil.copy(transcript, target)


@pytest.mark.parametrize("where", ["xdg", "claude_config_dir"])
def test_claude_code_transcripts_are_found_wherever_claude_code_keeps_them(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("YZOS_RUNTIME_DIR", str(tmp_path / "run"))
    if where == "xdg":
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        _place(XDG_TRANSCRIPT, home / ".config" / "claude" / "projects")
    else:
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-work"))
        _place(XDG_TRANSCRIPT, tmp_path / "claude-work" / "projects")
    # [sources] claude_code left at its default
    ctx = make_ctx(db_url, sources={"apps": False}, importers={"session_idle_s": 0})
    found = run_import_sources(ctx)["sources"]["claude_code"]
    assert found["files"] == 1 and found["sessions"] == 1 and found["candidates"] > 0
    # the other places are absent: counted, never an error; an unset variable names none
    assert found["missing_paths"] == (1 if where == "xdg" else 2)


def test_import_claude_code_with_no_directory_reads_where_claude_code_keeps_them(
    db_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _place(XDG_TRANSCRIPT, home / ".config" / "claude" / "projects")
    env = cli_env(db_url, HOME=str(home), YZOS_RUNTIME_DIR=str(tmp_path / "run"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    done = run_cli("import", "claude-code", "--json", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"] == 1
    # nowhere Claude Code keeps transcripts: its own folder is named as missing
    empty = cli_env(db_url, HOME=str(tmp_path / "nobody"), YZOS_RUNTIME_DIR=str(tmp_path / "run"))
    empty.pop("CLAUDE_CONFIG_DIR", None)
    missing = run_cli("import", "claude-code", env=empty, cwd=tmp_path)
    assert missing.returncode != 0 and ".claude/projects" in missing.stderr


def test_a_source_path_that_cannot_be_read_is_logged_once_not_every_run(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a FIFO among an observer's files stays one from run to run: its line is logged the first
    # time, and the daemon's log is not filled with it at every interval
    monkeypatch.setenv("YZOS_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setattr(feed, "_reported", set())
    folder = tmp_path / "observer"
    folder.mkdir()
    os.mkfifo(folder / "pipe.jsonl")
    ctx = make_ctx(db_url, sources={"claude_code": [], "apps": False, "jsonl": [str(folder)]})
    with capture_logs() as logged:
        run_import_sources(ctx)
        run_import_sources(ctx)
    skipped = [e for e in logged if e["event"] == "source file skipped"]
    assert [e["path"] for e in skipped] == [str(folder / "pipe.jsonl")]


def test_a_history_that_cannot_be_read_counts_as_met_again_not_as_new_work(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an aider history that is a FIFO fails to be read at every run: the first run reports it;
    # the later ones count it apart (`errors_again`), so the daemon logs them as idle, at debug
    monkeypatch.setenv("YZOS_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setattr(feed, "_reported", set())
    repository = tmp_path / "Code" / "app"
    repository.mkdir(parents=True)
    os.mkfifo(repository / ".aider.chat.history.md")
    ctx = make_ctx(
        db_url, sources={"claude_code": [], "apps": False, "aider": [str(tmp_path / "Code")]}
    )
    with capture_logs() as logged:
        first = run_import_sources(ctx)
        again = run_import_sources(ctx)
    assert first["errors"] == 1 and "errors_again" not in first["sources"]["aider"]
    assert again["errors"] == 0 and again["sources"]["aider"]["errors_again"] == 1
    assert sum(e["event"] == "source record skipped" for e in logged) == 1


NATORI = FIXTURES / "real" / "claude-code" / "-Users-natori-work-mysite"
NATORI_SESSION = "f7885ed9-6627-4dbe-b5c4-93d79fe0c5d5"


def _laid_flat(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, with_session: bool
) -> tuple[JobContext, list[Path]]:
    """A daemon's context reading ~/.claude/projects where a real session's subagent transcripts
    sit beside the session's own, as 2.0 versions wrote them (or without it); its agents."""
    monkeypatch.setenv("YZOS_RUNTIME_DIR", str(tmp_path / "run"))
    project = tmp_path / "projects" / NATORI.name
    project.mkdir(parents=True)
    if with_session:
        shutil.copy(NATORI / f"{NATORI_SESSION}.jsonl", project)
    agents = list((NATORI / NATORI_SESSION / "subagents").glob("agent-*.jsonl"))
    for agent in agents:
        shutil.copy(agent, project)
    ctx = make_ctx(
        db_url,
        sources={"claude_code": [str(tmp_path / "projects")], "apps": False},
        importers={"session_idle_s": 0},
    )
    return ctx, agents


def test_the_daemon_reads_subagent_transcripts_beside_the_session_file_with_it(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2.0 versions wrote each subagent's transcript beside the session's own
    ctx, _ = _laid_flat(db_url, tmp_path, monkeypatch, with_session=True)
    found = run_import_sources(ctx)["sources"]["claude_code"]
    assert (found["files"], found["sessions"], found["sessions_ended"]) == (6, 1, 1)
    again = run_import_sources(ctx)["sources"]["claude_code"]
    assert (again["files_unchanged"], again["sessions"]) == (6, 0)


def test_status_tells_the_subagent_transcripts_waiting_for_their_session(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a session's subagent transcripts copied without the session's own (a partial sync):
    # nothing of them is imported, and status says they wait
    ctx, agents = _laid_flat(db_url, tmp_path, monkeypatch, with_session=False)
    assert run_job(ctx, "import_sources").status == "succeeded"
    with ctx.sessions() as s:
        report = sources_status(s.connection(), ctx.settings)
    assert report["claude_code"]["files_waiting"] == len(agents)
    [line] = [x for x in render_sources(report) if x.startswith("source claude_code")]
    assert line.endswith(f"files waiting for their session {len(agents)}")
    shutil.copy(NATORI / f"{NATORI_SESSION}.jsonl", tmp_path / "projects" / NATORI.name)
    assert run_job(ctx, "import_sources").status == "succeeded"
    with ctx.sessions() as s:
        report = sources_status(s.connection(), ctx.settings)
    assert report["claude_code"]["files_waiting"] == 0
    assert "waiting" not in " ".join(render_sources(report))


def test_status_tells_the_open_sessions_while_the_next_import_runs(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YZOS_RUNTIME_DIR", str(tmp_path / "run"))
    history = tmp_path / "work" / "app" / ".aider.chat.history.md"
    history.parent.mkdir(parents=True)
    history.write_text("# aider chat started at 2026-11-04 10:00:00\n\n#### add a login page\n")
    ctx = make_ctx(
        db_url,
        sources={"claude_code": [], "aider": [str(tmp_path / "work")], "apps": False},
        importers={"session_idle_s": 3600},  # written just now: still going on
    )
    assert run_job(ctx, "import_sources").status == "succeeded"

    def open_sessions() -> int:
        with ctx.sessions() as s:
            return sources_status(s.connection(), ctx.settings)["aider"]["sessions_open"]

    assert open_sessions() == 1
    # the next run has begun (here, or in another daemon) and counted nothing yet
    with ctx.sessions() as s, s.begin():
        s.add(
            JobRun(
                job_name="import_sources",
                slot="run:next",
                status="running",
                owner="other",
                started_at=utcnow(),
            )
        )
    assert open_sessions() == 1


def test_an_app_folder_that_changes_leaves_the_app_another_folder_names(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the editor's entry in the user's folder, its URL handler (the same window class) in the
    # system's: a package update that changes the system folder keeps the editor's name
    home, system = tmp_path / "data" / "applications", tmp_path / "sys" / "applications"
    home.mkdir(parents=True)
    system.mkdir(parents=True)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "sys"))
    monkeypatch.setenv("YZOS_RUNTIME_DIR", str(tmp_path / "run"))
    (home / "code.desktop").write_text(
        "[Desktop Entry]\nName=Visual Studio Code\nCategories=Development;\nStartupWMClass=Code\n"
    )
    ctx = make_ctx(db_url, sources={"claude_code": [], "apps": True})
    run_import_sources(ctx)
    handler = "[Desktop Entry]\nName=URL Handler\nNoDisplay=true\nStartupWMClass=Code\n"
    (system / "code-url-handler.desktop").write_text(handler)
    os.utime(system, (1, 1))  # its listing changed (a time unlike the one scanned)
    assert run_import_sources(ctx)["sources"]["apps"]["files"] == 2
    with ctx.sessions() as s:
        [app] = s.scalars(select(AppMetadataRow))
    assert (app.bundle_id, app.bundle_name) == ("Code", "Visual Studio Code")
