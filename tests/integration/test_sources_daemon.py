"""The daemon feeds itself from [sources]: real processes, a temporary home holding real Claude
Code transcripts and aider histories from the corpus. What appears later (a segment appended to
a history, a new file) is picked up by the next runs; two daemons on one host import each file
once."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tests.support.cli import cli_env, run_cli, spawn_cli
from tests.support.daemons import stop, wait_for, write_config
from tests.support.jobs import make_ctx
from tests.support.tables import row_counts
from yzos_jobs.db.models import ActivitySession, EntityCandidate, ImporterSeen, JobRun
from yzos_jobs.importers.jsonl import BATCH

pytestmark = pytest.mark.slow

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
CLAUDE = REAL / "claude-code"
AIDER = REAL / "aider"
# Each pick within a generous deadline: the daemon runs import_sources every second.
DEADLINE_S = 60
APPENDED = "\n#### Add a test for the date parser\n\nHere is a test for the parser.\n"


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    (home / "Code").mkdir()
    return home


def _add_transcripts(home: Path, *project_dirs: str) -> None:
    for name in project_dirs:
        shutil.copytree(CLAUDE / name, home / ".claude" / "projects" / name)


def _add_history(home: Path, repo: str) -> Path:
    target = home / "Code" / repo / ".aider.chat.history.md"
    target.parent.mkdir(parents=True)
    shutil.copy(AIDER / repo / ".aider.chat.history.md", target)
    return target


def _config(tmp_path: Path) -> Path:
    return write_config(
        tmp_path / "c.toml",
        None,
        # claude_code is left at its default, ~/.claude/projects
        sources={"aider": ["~/Code"], "apps": False, "interval_s": 1},
        importers={"session_idle_s": 0},  # every session whose file is written counts as closed
    )


def _env(db_url: str, home: Path, tmp_path: Path, config: Path) -> dict[str, str]:
    return cli_env(
        db_url,
        HOME=str(home),
        YZOS_CONFIG=str(config),
        YZOS_RUNTIME_DIR=str(tmp_path / "run"),
    )


def _sessions(ctx, source: str) -> int:
    with ctx.sessions() as s:
        return int(
            s.scalar(
                select(func.count())
                .select_from(ActivitySession)
                .where(ActivitySession.source_kind == source)
            )
        )


def _appended_segments(ctx) -> int:
    with ctx.sessions() as s:
        return int(
            s.scalar(
                select(func.count())
                .select_from(ImporterSeen)
                .where(
                    ImporterSeen.importer_name == "aider",
                    ImporterSeen.record_id.like("segment %-%"),
                    ~ImporterSeen.record_id.like("segment 0-%"),
                )
            )
        )


def test_the_daemon_picks_up_sessions_segments_and_new_files(db_url: str, tmp_path: Path) -> None:
    home = _home(tmp_path)
    _add_transcripts(home, "-Users-himankdave-conductor-workspaces-trivivo-worcester")
    history = _add_history(home, "0xf1e__health-analyzer-poc")
    env = _env(db_url, home, tmp_path, _config(tmp_path))
    ctx = make_ctx(db_url)
    daemon = spawn_cli("run", env=env)
    try:
        wait_for(lambda: _sessions(ctx, "claude_code") == 1, DEADLINE_S, "the Claude Code session")
        wait_for(lambda: _sessions(ctx, "aider") == 2, DEADLINE_S, "the aider history's sessions")
        assert _appended_segments(ctx) == 0
        with history.open("a", encoding="utf-8") as fh:
            fh.write(APPENDED)
        wait_for(lambda: _appended_segments(ctx) == 1, DEADLINE_S, "the appended segment")
        _add_transcripts(home, "-Users-tslater-dev-cli-duet")
        _add_history(home, "AspireOne__laura-backend")
        wait_for(lambda: _sessions(ctx, "claude_code") > 1, DEADLINE_S, "the new transcript")
        wait_for(lambda: _sessions(ctx, "aider") > 2, DEADLINE_S, "the new history")
    finally:
        code, err = stop(daemon)
    assert code == 0, err[-3000:]
    assert "Traceback" not in err
    status = run_cli("status", "--json", env=env, cwd=tmp_path)
    sources = json.loads(status.stdout)["sources"]
    assert sources["aider"]["files_seen"] == 2 and sources["claude_code"]["files_seen"] >= 2
    assert sources["aider"]["last_import"] is not None


def _import_runs_by_owner(ctx) -> dict[str, int]:
    with ctx.sessions() as s:
        rows = s.execute(
            select(JobRun.owner, func.count())
            .where(JobRun.job_name == "import_sources", JobRun.status == "succeeded")
            .group_by(JobRun.owner)
        )
        return {owner: int(n) for owner, n in rows}


COUNTED = ("activity_sessions", "entity_candidates", "importer_seen", "importer_files")


@pytest.mark.postgres
def test_two_daemons_on_one_host_import_each_file_once(pg_url: str, tmp_path: Path) -> None:
    home = _home(tmp_path)
    _add_transcripts(
        home,
        "-Users-himankdave-conductor-workspaces-trivivo-worcester",
        "-Users-tslater-dev-cli-duet",
        "-path-to-Demo",
    )
    for repo in ("0xf1e__health-analyzer-poc", "AspireOne__laura-backend", "Awhitter__pgstndtrprt"):
        _add_history(home, repo)
    config = _config(tmp_path)

    # One process, by hand, into a database of its own: what importing every file once gives.
    db_url = f"sqlite:///{tmp_path / 'alone.db'}"
    alone = run_cli("once", "import_sources", env=_env(db_url, home, tmp_path, config))
    assert alone.returncode == 0, alone.stderr
    expected = {k: v for k, v in row_counts(make_ctx(db_url).sessions).items() if k in COUNTED}

    ctx = make_ctx(pg_url)
    env = _env(pg_url, home, tmp_path, config)
    daemons = [spawn_cli("run", env=env) for _ in range(2)]
    try:
        wait_for(
            lambda: (
                sorted(_import_runs_by_owner(ctx).values())[:1] >= [3]
                and len(_import_runs_by_owner(ctx)) == 2
            ),
            DEADLINE_S * 2,
            "three import runs by each daemon",
        )
    finally:
        results = [stop(d) for d in daemons]
    assert [code for code, _ in results] == [0, 0], results[0][1][-3000:]
    together = {k: v for k, v in row_counts(ctx.sessions).items() if k in COUNTED}
    assert together == expected
    assert expected["activity_sessions"] >= 5


def _candidates(ctx) -> tuple[int, int]:
    """(candidates, distinct names among them)."""
    with ctx.sessions() as s:
        return (
            int(s.scalar(select(func.count()).select_from(EntityCandidate)) or 0),
            int(s.scalar(select(func.count(func.distinct(EntityCandidate.raw_text)))) or 0),
        )


def test_sigterm_stops_a_long_import_after_the_batch_in_hand(db_url: str, tmp_path: Path) -> None:
    # an observer's file of many records: asked to stop, the daemon writes the batch it is on
    # and exits; the next run reads on from there, and every record is imported once
    records = 100 * BATCH
    feed = tmp_path / "observer.jsonl"
    feed.write_text(
        "".join(
            json.dumps(
                {
                    "record_id": f"r{i}",
                    "session_id": f"s{i // 1000}",
                    "type": "candidate",
                    "raw_text": f"Ticket {i}",
                    "suggested_kind": "task",
                }
            )
            + "\n"
            for i in range(records)
        )
    )
    config = write_config(
        tmp_path / "c.toml",
        None,
        sources={"claude_code": [], "jsonl": [str(feed)], "apps": False, "interval_s": 1},
    )
    env = _env(db_url, _home(tmp_path), tmp_path, config)
    ctx = make_ctx(db_url)
    daemon = spawn_cli("run", env=env)
    try:
        wait_for(lambda: _candidates(ctx)[0] >= BATCH, DEADLINE_S, "the first batch written")
    finally:
        code, err = stop(daemon)
    assert code == 0, err[-3000:]
    stopped_at, _ = _candidates(ctx)
    assert stopped_at < records  # it did not read the file to its end first
    status = run_cli("status", env=env, cwd=tmp_path)
    assert "stopped early by a signal; the next run goes on" in status.stdout, status.stdout
    # times as a person reads them, in one form: the run's and the source's
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
    assert re.search(rf"^import_sources +succeeded at {stamp} by ", status.stdout, re.M)
    assert re.search(rf"^source jsonl +files 1  last import {stamp}  ", status.stdout, re.M)
    again = run_cli("once", "import_sources", env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert _candidates(ctx) == (records, records)
