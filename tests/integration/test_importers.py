"""Importers on fixtures in the real formats: what they produce; a second run adds nothing."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.support.jobs import candidates, entities, make_ctx
from tests.support.tables import row_counts
from yzos_jobs.db.models import ActivitySession, AppMetadataRow, ImporterFile
from yzos_jobs.importers.aider import AiderImporter
from yzos_jobs.importers.claude_code import ClaudeCodeImporter
from yzos_jobs.importers.jsonl import JsonlImporter
from yzos_jobs.importers.transcript_groups import transcript_groups
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.jobs import run_entity_promote

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    if (FIXTURES / name).is_dir():
        shutil.copytree(FIXTURES / name, target)
    else:
        shutil.copy(FIXTURES / name, target)
    return target


def test_aider_history_sessions_candidates_and_no_rows_on_reimport(
    db_url: str, tmp_path: Path
) -> None:
    root = _copy(tmp_path, "aider")
    ctx = make_ctx(db_url, importers={"session_idle_s": 0})
    stats = AiderImporter(ctx).import_paths([root])
    assert (stats.sessions, stats.sessions_ended, stats.errors) == (3, 3, 0)
    raw = [(c.raw_text, c.suggested_kind) for c in candidates(ctx)]
    assert ("yzos-core", "project") in raw and ("billing-service", "project") in raw
    assert ("Refactor classifier prompt into rules", "task") in raw
    assert ("Fix N+1 query in invoices list", "task") in raw
    # the CRLF session with invalid UTF-8 bytes is read too
    assert ("Add retry with backoff to webhook sender", "task") in raw
    # `/ask X` is logged twice by aider: one request, a question after which nothing was
    # edited, so evidence of its session (the project candidate's context), not a task
    asked = "\n".join(c.surrounding_text or "" for c in candidates(ctx))
    assert asked.count("how does the verdict cache key work?") == 1
    assert not any(r == "how does the verdict cache key work?" for r, _ in raw)
    # blank `####` lines and single tokens ("yes") are not requests
    assert not any(r in ("yes", "") for r, _ in raw)
    with ctx.sessions() as s:
        paths = sorted(s.scalars(select(ActivitySession.project_path)))
    # `Git repo: .git` and `Git repo: none` sessions are in the history's directory; the second
    # session ran in billing-service with --chat-history-file pointing here.
    here = str(root / "yzos-core")
    assert paths == ["/Users/me/Code/billing-service", here, here]
    # dry_run promoted them inline at session end
    assert {c.status for c in candidates(ctx)} == {"promoted"}
    before = row_counts(ctx.sessions)
    again = AiderImporter(ctx).import_paths([root])
    assert again.files_unchanged == 1 and again.sessions == 0
    assert row_counts(ctx.sessions) == before


def test_aider_open_session_waits_until_closed(db_url: str, tmp_path: Path) -> None:
    history = _copy(tmp_path, "aider") / "yzos-core" / ".aider.chat.history.md"
    os.utime(history)  # written just now: its last session may still be going on
    ctx = make_ctx(db_url, importers={"session_idle_s": 3600})
    first = AiderImporter(ctx).import_paths([history])
    assert first.sessions == 2  # the last session may still be going on
    assert first.sessions_open == 1
    # read again with nothing new: the session is still open, and counted so (`status`)
    again = AiderImporter(ctx).import_paths([history])
    assert (again.files_unchanged, again.sessions, again.sessions_open) == (1, 0, 1)
    with history.open("ab") as fh:
        fh.write(b"# aider chat started at 2026-11-04 10:00:00\n\n#### bump version\n")
    second = AiderImporter(ctx).import_paths([history])
    assert second.sessions == 1  # the third closed by the new header; the new one still open
    assert (
        sum(c.raw_text == "Add retry with backoff to webhook sender" for c in candidates(ctx)) == 1
    )


def test_aider_history_read_once_idle_is_not_read_again_until_it_changes(
    db_url: str, tmp_path: Path
) -> None:
    # its last session can only be closed as idle (no header after it): once read so, an
    # unchanged file has nothing new, however large that session is
    history = _copy(tmp_path, "aider") / "yzos-core" / ".aider.chat.history.md"
    ctx = make_ctx(db_url, importers={"session_idle_s": 60})
    then = time.time() - 120  # idle for two minutes
    os.utime(history, (then, then))
    first = AiderImporter(ctx).import_paths([history])
    assert first.sessions == 3 and first.bytes_read > 0
    with ctx.sessions() as s:
        [marked] = s.scalars(select(ImporterFile.updated_at))
    again = AiderImporter(ctx).import_paths([history])
    assert (again.files_unchanged, again.bytes_read, again.sessions_open) == (1, 0, 0)
    with ctx.sessions() as s:  # `status` shows when something was last imported
        assert list(s.scalars(select(ImporterFile.updated_at))) == [marked]
    # text appended to that session is read, as a segment of it
    with history.open("ab") as fh:
        fh.write(b"\n#### add a changelog entry\n\n> Applied edit to CHANGELOG.md\n")
    os.utime(history, (then + 1, then + 1))
    later = AiderImporter(ctx).import_paths([history])
    assert later.bytes_read > 0 and later.sessions_ended == 1


def test_aider_session_left_open_is_read_once_idle_whatever_the_idle_setting(
    db_url: str, tmp_path: Path
) -> None:
    # read while its last session could still go on (not idle for an hour), then by a daemon
    # whose `session_idle_s` is shorter: that session has not been imported, and is now
    history = _copy(tmp_path, "aider") / "yzos-core" / ".aider.chat.history.md"
    then = time.time() - 120
    os.utime(history, (then, then))
    patient = AiderImporter(make_ctx(db_url, importers={"session_idle_s": 3600}))
    first = patient.import_paths([history])
    assert (first.sessions, first.sessions_open) == (2, 1)
    brisk = make_ctx(db_url, importers={"session_idle_s": 60})
    second = AiderImporter(brisk).import_paths([history])
    assert second.sessions == 1 and second.sessions_open == 0
    assert AiderImporter(brisk).import_paths([history]).bytes_read == 0  # and not again


def test_claude_code_project_from_cwd_and_uuid_dedup(db_url: str, tmp_path: Path) -> None:
    root = _copy(tmp_path, "claude-code")
    ctx = make_ctx(db_url, importers={"session_idle_s": 0})
    stats = ClaudeCodeImporter(ctx).import_paths([root])
    assert stats.errors == 1 and "sess-A.jsonl:7" in stats.error_messages[0]
    raw = [c.raw_text for c in candidates(ctx) if c.suggested_kind == "task"]
    # work asked for and never carried out (nothing edited after it): one task candidate per
    # session, its first request naming it, the others its evidence; u1 and u4, in both files,
    # count once, in the session that wrote them first (the resumed one repeats them, and adds
    # a request of its own a day later)
    assert raw == [
        "add graceful SIGTERM handling to the daemon",
        "document the systemd unit in the README",
    ]
    requests = "\n".join(c.surrounding_text or "" for c in candidates(ctx))
    assert requests.count(": write a test that kills the daemon with SIGKILL") == 1
    assert requests.count(": document the systemd unit in the README") == 1
    assert "/clear" not in raw and "ok" not in raw  # commands and tool results are not requests
    projects = {c.raw_text for c in candidates(ctx) if c.suggested_kind == "project"}
    assert projects == {"yzos-jobs"}  # from cwd, not "-Users-me-Code-yzos-jobs"
    with ctx.sessions() as s:
        sessions = {
            a.external_id: (a.project_path, a.status) for a in s.scalars(select(ActivitySession))
        }
    assert sessions == {
        "sess-A": ("/Users/me/Code/yzos-jobs", "ended"),
        "sess-B": ("/Users/me/Code/yzos-jobs", "ended"),
    }
    assert {e.display_name for e in entities(ctx)} >= {"yzos-jobs"}
    before = row_counts(ctx.sessions)
    ClaudeCodeImporter(ctx).import_paths([root])
    assert row_counts(ctx.sessions) == before


NATORI = FIXTURES / "real" / "claude-code" / "-Users-natori-work-mysite"
NATORI_SESSION = "f7885ed9-6627-4dbe-b5c4-93d79fe0c5d5"


def _laid_flat(tmp_path: Path, main: bool = True) -> tuple[Path, list[str]]:
    """A real session's files as 2.0 versions wrote them: each subagent's transcript
    (agent-<id>.jsonl: a "Warmup" probe at the session's start, an Explore run) in the project
    directory beside the session's own, only its records naming the session."""
    project = tmp_path / NATORI.name
    project.mkdir(exist_ok=True)
    if main:
        shutil.copy(NATORI / f"{NATORI_SESSION}.jsonl", project)
    subagents = NATORI / NATORI_SESSION / "subagents"
    agents = sorted(p.name for p in subagents.glob("agent-*.jsonl"))
    for agent in agents:
        shutil.copy(subagents / agent, project)
    return project, agents


def _only_session(ctx: JobContext) -> ActivitySession:
    with ctx.sessions() as s:
        [session] = s.scalars(select(ActivitySession))
    return session


def test_claude_code_subagent_transcripts_beside_the_session_file_are_read_with_it(
    db_url: str, tmp_path: Path
) -> None:
    project, agents = _laid_flat(tmp_path)
    ctx = make_ctx(db_url, importers={"session_idle_s": 0})
    stats = ClaudeCodeImporter(ctx).import_paths([project])
    assert (stats.files, stats.sessions, stats.sessions_ended, stats.errors) == (6, 1, 1, 0)
    # one session, begun by its first subagent's probe, as where the files sit in a subfolder
    session = _only_session(ctx)
    assert session.external_id == NATORI_SESSION
    assert session.started_at is not None and session.started_at.isoformat().startswith(
        "2026-01-10T08:26:27"
    )
    tasks = sorted(c.raw_text for c in candidates(ctx) if c.suggested_kind == "task")
    assert len(tasks) == 3 and "Warmup" not in tasks
    # named alone, either file brings the whole group, the session's own first
    for named in (f"{NATORI_SESSION}.jsonl", "agent-abbfd04.jsonl"):
        [group] = transcript_groups([(project / named).resolve()])
        assert [p.name for p in group] == [f"{NATORI_SESSION}.jsonl", *agents]


def test_claude_code_subagent_transcripts_wait_for_their_sessions(
    db_url: str, tmp_path: Path
) -> None:
    project, agents = _laid_flat(tmp_path, main=False)
    ctx = make_ctx(db_url, importers={"session_idle_s": 0})
    alone = ClaudeCodeImporter(ctx).import_paths([project])
    assert (alone.sessions, alone.candidates, alone.errors) == (0, 0, 0)
    # the summary says they wait, and for what
    assert alone.files_waiting == len(agents)
    [note] = alone.notes
    assert note.startswith(str(project / agents[0]))
    session_file = project / f"{NATORI_SESSION}.jsonl"
    assert note.endswith(
        f"waiting for its session's, {session_file}; read with it once it is there"
    )
    shutil.copy(NATORI / f"{NATORI_SESSION}.jsonl", project)
    read = ClaudeCodeImporter(ctx).import_paths([project])
    assert (read.files_waiting, read.notes) == (0, [])
    session = _only_session(ctx)
    assert session.external_id == NATORI_SESSION  # the first segment, its subagents' start in it
    assert session.started_at is not None and session.started_at.isoformat().startswith(
        "2026-01-10T08:26:27"
    )


@pytest.mark.parametrize(
    "named",
    ["..", "../../etc/passwd", "/tmp/x", "x" * 10_000, 12345, {"a": 1}, None, "", "orphan"],
)
def test_claude_code_subagent_transcript_naming_no_session_beside_it_is_no_session(
    db_url: str, tmp_path: Path, named: object
) -> None:
    project, _ = _laid_flat(tmp_path)
    agent = project / "agent-abbfd04.jsonl"
    records = [json.loads(line) for line in agent.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["sessionId"] = "0b1d7e52-3c55-4f0e-9a51-7d2c9e0f4a11" if named == "orphan" else named
    agent.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    ctx = make_ctx(db_url, importers={"session_idle_s": 0})
    stats = ClaudeCodeImporter(ctx).import_paths([project])
    assert stats.sessions == 1 and _only_session(ctx).external_id == NATORI_SESSION
    projects = [c for c in candidates(ctx) if c.suggested_kind == "project"]
    assert len(projects) == 1
    # said once: one naming a session not there waits for it, one naming none never is read
    [note] = stats.notes
    if named == "orphan":
        assert stats.files_waiting == 1 and "waiting for its session's" in note
        expected = project / "0b1d7e52-3c55-4f0e-9a51-7d2c9e0f4a11.jsonl"
        assert note.endswith(f"{expected}; read with it once it is there")
    else:
        assert (
            stats.files_waiting == 0
            and note == f"{agent}: a subagent's transcript that names no session; not read"
        )


def test_claude_code_subagent_transcript_naming_its_session_late_in_its_first_record(
    db_url: str, tmp_path: Path
) -> None:
    # newer versions write `sessionId` after the message: a long prompt puts it past the
    # first bytes
    project, agents = _laid_flat(tmp_path)
    agent = project / "agent-abbfd04.jsonl"
    records = [json.loads(line) for line in agent.read_text(encoding="utf-8").splitlines()]
    records[0]["message"]["content"] = "Look through the templates. " * 400
    late = [
        {k: v for k, v in r.items() if k != "sessionId"} | {"sessionId": r["sessionId"]}
        for r in records
    ]
    agent.write_text("".join(json.dumps(r) + "\n" for r in late), encoding="utf-8")
    assert agent.read_bytes().index(b'"sessionId"') > 8192
    ctx = make_ctx(db_url, importers={"session_idle_s": 0})
    assert ClaudeCodeImporter(ctx).import_paths([project]).sessions == 1
    assert _only_session(ctx).external_id == NATORI_SESSION
    [group] = transcript_groups([agent.resolve()])
    assert [p.name for p in group] == [f"{NATORI_SESSION}.jsonl", *agents]


def test_claude_code_transcript_read_again_whole_makes_no_segment_of_its_copies(
    db_url: str, tmp_path: Path
) -> None:
    session_id = NATORI_SESSION
    project = tmp_path / NATORI.name
    project.mkdir()
    transcript = project / f"{session_id}.jsonl"
    shutil.copy(NATORI / transcript.name, transcript)
    ctx = make_ctx(db_url, importers={"session_idle_s": 0})
    first = ClaudeCodeImporter(ctx).import_paths([project])
    # the summary counts the transcript's records (each a line with an id), not segments
    in_file = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    assert first.sessions == 1 and first.records == sum(1 for r in in_file if r.get("uuid"))
    # its first bytes edited (a sync tool, another version's mark): read again from the start,
    # every record a copy of one imported
    lines = transcript.read_bytes().splitlines(keepends=True)
    lines[0] = lines[0].replace(b"08:27:28.234Z", b"08:27:28.235Z")
    transcript.write_bytes(b"".join(lines))
    again = ClaudeCodeImporter(ctx).import_paths([project])
    assert (again.sessions, again.candidates, again.records) == (0, 0, 0)
    assert again.skipped == first.records
    before = {c.id for c in candidates(ctx)}
    # the session resumed a day later: its next segment is the second
    later = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/Users/natori/work/mysite",
        "sessionId": session_id,
        "type": "user",
        "message": {"role": "user", "content": "Add a footer with the copyright year"},
        "uuid": "0b1d7e52-3c55-4f0e-9a51-7d2c9e0f4a11",
        "timestamp": "2026-01-11T09:00:00.000Z",
    }
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(later) + "\n")
    assert ClaudeCodeImporter(ctx).import_paths([project]).records == 1
    added = {c.source_id for c in candidates(ctx) if c.id not in before}
    assert added == {f"{session_id}#2"}


def test_jsonl_every_type_bad_records_reported_and_rest_imported(
    db_url: str, tmp_path: Path
) -> None:
    path = _copy(tmp_path, "observations.jsonl")
    ctx = make_ctx(db_url, importers={"max_field_chars": 200})
    stats = JsonlImporter(ctx).import_paths([path])
    assert stats.errors == 3
    errors = "\n".join(stats.error_messages)
    assert f"{path}:7: not JSON" in errors
    assert f"{path}:8: candidate needs raw_text" in errors
    assert f"{path}:11: record_id and session_id are required" in errors
    by_text = {c.raw_text: c for c in candidates(ctx)}
    assert "Alice Chen" in by_text  # the NUL byte is gone
    assert len(by_text["Project Phoenix"].surrounding_text) == 200  # cut to max_field_chars
    # session_end promoted that session's candidates; the other session's wait for entity_promote
    assert (
        by_text["YZOS Core"].status == "promoted" and by_text["Project Phoenix"].status == "pending"
    )
    names = {(e.kind, e.display_name) for e in entities(ctx)}
    assert {
        ("project", "yzos-jobs"),
        ("task", "Write the ingest benchmark"),
        ("person", "陈晓明"),
    } <= names
    with ctx.sessions() as s:
        app = s.get(AppMetadataRow, "com.tdesktop.Telegram")
    assert app.category == "public.app-category.social-networking"
    before = row_counts(ctx.sessions)
    again = JsonlImporter(ctx).import_paths([path])
    assert again.files_unchanged == 1
    assert row_counts(ctx.sessions) == before


def test_jsonl_appended_file_is_read_on_from_where_it_stopped(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "feed.jsonl"
    line = (
        '{{"record_id": "r{i}", "session_id": "s", "type": "candidate", "raw_text": "Item {i}", '
        '"suggested_kind": "task"}}\n'
    )
    path.write_text("".join(line.format(i=i) for i in range(3)) + '{"record_id": "partial"')
    ctx = make_ctx(db_url)
    first = JsonlImporter(ctx).import_paths([path])
    assert first.records == 3  # the unfinished last line waits, and the summary says so
    assert first.notes == [f"{path}: its last line has no newline yet; it is read once it ends"]
    with path.open("a") as fh:
        fh.write(', "session_id": "s", "type": "candidate", "raw_text": "Item P", ')
        fh.write('"suggested_kind": "task"}\n')
        fh.write(line.format(i=3))
    second = JsonlImporter(ctx).import_paths([path])
    assert second.records == 2 and second.skipped == 0 and second.notes == []
    assert sorted(c.raw_text for c in candidates(ctx)) == [
        "Item 0",
        "Item 1",
        "Item 2",
        "Item 3",
        "Item P",
    ]


def test_jsonl_edited_before_where_it_was_read_then_appended_loses_no_record(
    db_url: str, tmp_path: Path
) -> None:
    # a line deleted past the first kilobytes (a pasted secret taken out), then records appended:
    # reading on from the old offset would start inside a record and drop it
    path = tmp_path / "feed.jsonl"
    line = (
        '{{"record_id": "r{i}", "session_id": "s", "type": "candidate", "raw_text": "Item {i}", '
        '"suggested_kind": "task"}}\n'
    )
    lines = [line.format(i=i) for i in range(1, 81)]
    path.write_text("".join(lines))
    ctx = make_ctx(db_url)
    assert JsonlImporter(ctx).import_paths([path]).records == 80
    del lines[59]  # past the first 4 KiB
    assert sum(map(len, lines[:59])) > 4096
    path.write_text("".join(lines) + "".join(line.format(i=i) for i in range(81, 87)))
    again = JsonlImporter(ctx).import_paths([path])
    assert again.records == 6 and again.errors == 0  # read again: those seen are repeats
    texts = {c.raw_text for c in candidates(ctx)}
    assert {f"Item {i}" for i in range(81, 87)} <= texts and len(texts) == 86


def test_jsonl_session_is_one_activity_session_opened_then_ended(
    db_url: str, tmp_path: Path
) -> None:
    path = _copy(tmp_path, "observations.jsonl")
    ctx = make_ctx(db_url)
    JsonlImporter(ctx).import_paths([path])
    with ctx.sessions() as s:
        rows = {
            (a.source_kind, a.external_id): a.status for a in s.scalars(select(ActivitySession))
        }
    assert rows == {("jsonl", "win-2026-11-06"): "ended", ("jsonl", "win-2026-11-07"): "open"}


def test_aider_history_moved_or_copied_is_not_imported_twice(db_url: str, tmp_path: Path) -> None:
    root = _copy(tmp_path, "aider")
    ctx = make_ctx(db_url, importers={"session_idle_s": 0})
    AiderImporter(ctx).import_paths([root])
    before = len(candidates(ctx))
    moved = tmp_path / "elsewhere" / ".aider.chat.history.md"
    moved.parent.mkdir()
    shutil.copy(root / "yzos-core" / ".aider.chat.history.md", moved)
    again = AiderImporter(ctx).import_paths([moved])
    assert (again.sessions, again.skipped) == (0, 3)
    assert len(candidates(ctx)) == before


@pytest.mark.parametrize("idle_s", [0, 3600])
def test_an_import_of_folders_tells_its_bar_the_bytes_to_go(
    db_url: str, tmp_path: Path, idle_s: int
) -> None:
    # the bar of `import DIR` has a total (the files found, each once) and reaches it: also
    # when the files were read before, when their sessions are still going on (not read), and
    # for subagents' transcripts that wait for their session's
    (tmp_path / "waiting").mkdir()
    project, _ = _laid_flat(tmp_path / "waiting", main=False)
    root = _copy(tmp_path, "claude-code")
    files = [p for p in [*root.rglob("*.jsonl"), *project.iterdir()] if p.is_file()]
    ctx = make_ctx(db_url, importers={"session_idle_s": idle_s})
    for named in ([root, project], [root, root, project]):
        totals: list[int] = []
        done: list[int] = []
        ClaudeCodeImporter(ctx, progress=done.append, total=totals.append).import_paths(named)
        assert totals == [sum(p.stat().st_size for p in files)]
        assert sum(done) == totals[0]
    # one session's transcript named alone brings its subagents' along: they count too
    main = project / f"{NATORI_SESSION}.jsonl"
    shutil.copy(NATORI / main.name, main)
    totals, done = [], []
    ClaudeCodeImporter(ctx, progress=done.append, total=totals.append).import_paths([main])
    assert totals == [sum(p.stat().st_size for p in project.iterdir())] == [sum(done)]


def test_claude_code_records_counted_are_the_transcript_lines_with_an_id(
    db_url: str, tmp_path: Path
) -> None:
    # prompts typed while Claude Code worked come through its queue's records, which carry no
    # id and are not counted
    real = FIXTURES / "real" / "claude-code" / "-Users-jschuss-Brightline-reef"
    [transcript] = list(real.glob("*.jsonl"))
    project = tmp_path / real.name
    project.mkdir()
    shutil.copy(transcript, project)
    lines = transcript.read_text(encoding="utf-8").splitlines()
    assert any('"operation":"remove"' in line for line in lines)
    ctx = make_ctx(db_url, importers={"session_idle_s": 0})
    stats = ClaudeCodeImporter(ctx).import_paths([project])
    assert stats.records == sum(1 for line in lines if json.loads(line).get("uuid"))


def test_an_import_counts_the_sightings_of_entities_its_sessions_made_or_knew(
    db_url: str, tmp_path: Path
) -> None:
    # three sightings of one name in an ended session: one entity made, two merged into it,
    # as `status` counts three candidates promoted
    path = tmp_path / "feed.jsonl"
    records = [
        {"record_id": f"r{i}", "session_id": "s", "type": "candidate", "raw_text": "Harbor"}
        for i in range(3)
    ]
    records.append({"record_id": "end", "session_id": "s", "type": "session_end"})
    path.write_text("".join(json.dumps({**r, "suggested_kind": "project"}) + "\n" for r in records))
    stats = JsonlImporter(make_ctx(db_url)).import_paths([path])
    assert (stats.candidates, stats.promoted, stats.merged) == (3, 1, 2)


def test_jsonl_ids_are_strings_or_numbers(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "feed.jsonl"
    base = {"type": "candidate", "raw_text": "Harbor", "suggested_kind": "project"}
    ids = [("r1", 7), (2, "s"), ("r3", ["s"]), ({"a": 1}, "s"), ("r5", True), (2**70, "s")]
    path.write_text(
        "".join(json.dumps({**base, "record_id": r, "session_id": s}) + "\n" for r, s in ids)
    )
    ctx = make_ctx(db_url)
    stats = JsonlImporter(ctx).import_paths([path])
    assert stats.records == 2 and stats.errors == 4
    said = "must be a string or an integer (a long number: as a string)"
    assert [m.split(": ", 1)[1] for m in stats.error_messages] == [
        f"session_id {said}",
        f"record_id {said}",
        f"session_id {said}",
        f"record_id {said}",  # past 64 bits: read as a float, its last digits lost
    ]
    assert sorted(c.source_id for c in candidates(ctx)) == ["7", "s"]


def test_jsonl_bytes_that_are_not_utf8_are_read_and_said(db_url: str, tmp_path: Path) -> None:
    # an observer writing Latin-1: the records are imported, their odd bytes as U+FFFD, and the
    # summary says where
    path = tmp_path / "feed.jsonl"
    lines = [
        b'{"record_id": "a", "session_id": "s", "type": "candidate", "raw_text": "Caf\xe9"}',
        b'{"record_id": "b", "session_id": "s", "type": "candidate", "raw_text": "Caf\xc3\xa9"}',
        b'{"record_id": "c", "session_id": "s", "type": "candidate", "raw_text": "Na\xefve"}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    ctx = make_ctx(db_url)
    stats = JsonlImporter(ctx).import_paths([path])
    assert stats.records == 3 and stats.errors == 0
    assert stats.notes == [
        f"{path}:1: 2 records (this the first) hold bytes that are not UTF-8, read as U+FFFD"
    ]
    assert {c.raw_text for c in candidates(ctx)} == {"Caf\ufffd", "Café", "Na\ufffdve"}


# when a window title was seen: the latest is neither the first nor the last
HARBOR_TIMES = ("2026-11-01T09:00:00Z", "2026-11-20T17:30:00Z", "2026-11-05T08:00:00Z")


def _harbor_seen(n: int, at: str) -> str:
    """A JSONL line: the window title "Harbor — main.py" seen in session s at `at`."""
    record = {"record_id": f"r{n}", "session_id": "s", "type": "candidate", "raw_text": "Harbor"}
    record |= {"suggested_kind": "project", "surrounding_text": "Harbor — main.py"}
    return json.dumps({**record, "observed_at": at}) + "\n"


def test_a_sighting_seen_again_later_moves_its_entity_last_seen(
    db_url: str, tmp_path: Path
) -> None:
    # a window title back in view later in the same session: one sighting (the same one), and
    # the entity was last seen then; one seen again earlier moves nothing
    ctx = make_ctx(db_url)
    for n, at in enumerate(HARBOR_TIMES):
        path = tmp_path / f"day{n}.jsonl"
        path.write_text(_harbor_seen(n, at))
        JsonlImporter(ctx).import_paths([path])
        run_entity_promote(ctx)
        [harbor] = entities(ctx)
        assert harbor.sighting_count == 1
        assert harbor.last_seen_at is not None
        assert harbor.last_seen_at.isoformat().startswith("2026-11-20" if n else "2026-11-01")


def test_a_sighting_repeated_in_one_batch_moves_last_seen_to_its_latest(
    db_url: str, tmp_path: Path
) -> None:
    # the same title three times in one session, promoted together: the latest is not the first
    ctx = make_ctx(db_url)
    path = tmp_path / "day.jsonl"
    path.write_text("".join(_harbor_seen(n, at) for n, at in enumerate(HARBOR_TIMES)))
    JsonlImporter(ctx).import_paths([path])
    run_entity_promote(ctx)
    [harbor] = entities(ctx)
    assert harbor.sighting_count == 1
    assert harbor.last_seen_at is not None and harbor.first_seen_at is not None
    assert harbor.last_seen_at.isoformat().startswith("2026-11-20T17:30")
