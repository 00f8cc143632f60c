"""A closed coding session handed over, on both backends: with a model, its candidates held and
its digest queued for triage; in dry_run, promoted inline as with triage off. Text appended to a
session after it was closed as idle is a new segment of it, whose lines are named as the file
numbers them; a killed import goes on at once."""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from tests.support.cli import cli_env, run_cli, spawn_cli
from tests.support.corpus import HEALTH, REAL, WORCESTER, WORKTREE, at_rest, history, transcript
from tests.support.daemons import wait_for
from tests.support.jobs import candidates, decisions, entities, make_ctx
from tests.support.tables import row_counts
from yzos_jobs.cli import cli
from yzos_jobs.db.entities import EntityDraft, project_key, upsert_entities
from yzos_jobs.db.models import ActivitySession, Entity, ImporterSeen, SessionTriage
from yzos_jobs.db.sighting_rows import Sighting, add_sightings
from yzos_jobs.entity.corrections import correct
from yzos_jobs.importers.aider import AiderImporter
from yzos_jobs.importers.claude_code import ClaudeCodeImporter
from yzos_jobs.importers.digests import session_digests
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.maintain.jobs import run_entity_promote
from yzos_jobs.testing import OpenAIDouble, accept_suggested, session_of, task, triage_reply

APPENDED = (
    "\n#### add a --json flag to the metrics script\n\n"
    "> Applied edit to metrics_check.py\n"
    "> Commit abc1234 feat: add json output to the metrics script\n"
)
FIRST, LAST = "20250922T120400", "20250922T145500"  # the two sessions of the history
PERMISSIONS = (
    "claude-code/-Users-dumitruvulpe-uw-kubernetes-manifests/"
    "1c066e59-e52f-4c36-a16d-995355aff606.jsonl"
)

# Claude Code's `git commit` (line 38) waited 44 minutes for leave to run: its result (40) comes
# after the session was closed as idle
BASTION = (
    "claude-code/-home-zidan-zidan-superbrain-bastion/3065c678-2605-4707-9a03-a9c2b0cf758e.jsonl"
)
# The Write of experiment_brief.md (line 337) was let through an hour later (338)
BRIEF = "claude-code/-home-yingbohao-llm-train/4b0ee9c6-20bd-4ff0-8465-c984c7d9032a.jsonl"
# Started in a buildroot download folder, it showed later that the work is in ~/WORK/SNMP_50ms
SNMP = (
    "claude-code/-home-moxa-sdc1-home-moxa-mds4xgl3-buildroot-dl/"
    "bb66d2eb-0269-43fb-b568-8d66312a90ed.jsonl"
)


def external_ids(ctx: JobContext) -> dict[str, str]:
    with ctx.sessions() as s:
        return {e.split(":")[0]: e for e in s.scalars(select(ActivitySession.external_id))}


def triages(ctx: JobContext) -> list[SessionTriage]:
    with ctx.sessions() as s:
        return list(s.scalars(select(SessionTriage).order_by(SessionTriage.id)))


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)
    at_rest(path, seconds_ago=3600)


def test_text_appended_after_an_idle_close_is_a_new_segment(db_url: str, tmp_path: Path) -> None:
    path = history(tmp_path, HEALTH)
    ctx = make_ctx(db_url)
    AiderImporter(ctx).import_paths([path])
    last = external_ids(ctx)[LAST]
    before = {c.id: (c.source_id, c.raw_text, c.status) for c in candidates(ctx)}
    size = path.stat().st_size
    append(path, APPENDED)
    stats = AiderImporter(ctx).import_paths([path])
    assert (stats.sessions, stats.sessions_ended, stats.candidates) == (0, 1, 2)
    after = candidates(ctx)
    assert {c.id: (c.source_id, c.raw_text, c.status) for c in after if c.id in before} == before
    new = [(c.source_id, c.source_line, c.raw_text, c.status) for c in after if c.id not in before]
    assert new == [
        (f"{last}#2", 871, "health-analyzer-poc", "promoted"),
        (f"{last}#2", 1175, "add json output to the metrics script", "promoted"),
    ]
    with ctx.sessions() as s:
        rows = set(s.scalars(select(ImporterSeen.record_id).where(ImporterSeen.session_id == last)))
        ended = s.scalar(
            select(ActivitySession.ended_at).where(ActivitySession.external_id == last)
        )
    start = size - 10435  # where the last session starts
    assert rows == {"segment", "segment 0-10435", f"segment 10435-{path.stat().st_size - start}"}
    assert ended is not None and abs(ended.timestamp() - path.stat().st_mtime) < 1
    counts = row_counts(ctx.sessions)
    again = AiderImporter(ctx).import_paths([path])
    assert (again.files_unchanged, again.sessions_ended, again.skipped) == (1, 0, 0)
    assert row_counts(ctx.sessions) == counts


def test_a_later_claude_code_segment_names_lines_as_the_file_numbers_them(
    db_url: str, tmp_path: Path
) -> None:
    # "look at stuart dalls' perms" (3) and its answer make the first segment, closed as idle;
    # the reply "yes" (30), the change it leads to and the question at the end come later
    path = transcript(tmp_path, PERMISSIONS)
    whole = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(whole[:25]))
    at_rest(path, seconds_ago=3 * 3600)
    ctx = make_ctx(db_url)
    ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
    first = {c.id for c in candidates(ctx)}
    path.write_bytes(b"".join(whole))
    at_rest(path, seconds_ago=3600)
    stats = ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
    assert stats.sessions_ended == 1
    later = [c for c in candidates(ctx) if c.id not in first and c.source_line is not None]
    # what the second segment rests on is named by the file's lines, not counted from line 26;
    # the change "yes" (30) led to goes on with the request it answered (3), whose task it is a
    # sighting of, and rests on the reply, a line of the segment
    assert sorted((c.suggested_kind, c.source_line) for c in later) == [
        ("project", 26),
        ("task", 30),
    ]
    (task,) = [c for c in later if c.suggested_kind == "task"]
    shown = re.search(r"^evidence lines: ([\d, ]+)$", task.surrounding_text or "", re.MULTILINE)
    assert shown is not None
    lines = [int(n) for n in shown.group(1).split(", ")]
    assert {3, 30} <= set(lines) and max(lines) <= len(whole)


def one_task_per_commit(body: dict[str, Any]) -> Any:
    """The scripted judge: a triage names one task per commit line of the digest."""
    digest = session_of(body)
    if digest is None:
        return accept_suggested(body)
    commits = [(n, text) for n, kind, text in digest["lines"] if kind == "commit"]
    return triage_reply(digest["project"], [task(text, [n]) for n, text in commits])


def test_with_a_model_closed_sessions_are_held_and_their_digest_queued(
    db_url: str, tmp_path: Path
) -> None:
    path = history(tmp_path, HEALTH)
    with OpenAIDouble(one_task_per_commit) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        stats = AiderImporter(ctx).import_paths([path])
        assert (stats.digests, stats.promoted, llm.calls) == (2, 0, 0)  # no inline promote
        assert {c.status for c in candidates(ctx)} == {"held"} and entities(ctx) == []
        queued = triages(ctx)
        # the payload db/triage_queue.py documents, built by the parsing session_digests uses
        assert [(t.kind, t.part) for t in queued] == [("digest", ""), ("digest", "")]
        assert [t.payload for t in queued] == [d.payload for d in session_digests(path, "aider")]
        last = external_ids(ctx)[LAST]
        append(path, APPENDED)
        segment = AiderImporter(ctx).import_paths([path])
        assert segment.digests == 1
        third = triages(ctx)[-1]
        assert third.part == f"{last}#2" and third.payload["source_id"] == f"{last}#2"
        assert [(e["line"], e["kind"]) for e in third.payload["lines"]] == [
            (1172, "request"),  # only what the segment added (metrics_check.py was before)
            (1175, "commit"),
        ]
        promoted = run_entity_promote(ctx)
    assert promoted["triage_triaged"] == 3 and promoted["promoted"] == 0
    assert {t.status for t in triages(ctx)} == {"done"}
    found = candidates(ctx)
    assert "held" not in {c.status for c in found}
    [project] = [e for e in entities(ctx) if e.kind == "project"]
    tasks = {e.display_name: e for e in entities(ctx) if e.kind == "task"}
    assert "feat: add json output to the metrics script" in tasks
    assert {t.project_id for t in tasks.values()} == {project.id}
    # each commit candidate is kept as evidence of the task that rests on its line
    commit = next(c for c in found if c.source_line == 1175)
    assert commit.entity_id == tasks["feat: add json output to the metrics script"].id


def test_dry_run_promotes_inline_and_queues_nothing(db_url: str, tmp_path: Path) -> None:
    path = history(tmp_path, HEALTH)
    ctx = make_ctx(db_url)
    stats = AiderImporter(ctx).import_paths([path])
    assert stats.digests == 0 and triages(ctx) == []
    assert {c.status for c in candidates(ctx)} == {"promoted"}
    assert stats.promoted == len({(e.kind, e.display_name) for e in entities(ctx)})


def _many_sessions(path: Path, n: int) -> None:
    """A long history: one real scripted session (tom-doerr's) again and again, an hour apart."""
    text = (REAL / WORKTREE).read_text(encoding="utf-8")
    start = text.index("# aider chat started at 2025-03-18 10:29:55")
    session = text[start : text.index("# aider chat started at 2025-03-18 10:30:19")]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            day, hour = divmod(i, 24)
            stamp = f"2025-{1 + day // 28:02d}-{1 + day % 28:02d} {hour:02d}:29:55"
            fh.write(re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", stamp, session, count=1))


@pytest.mark.slow
def test_a_killed_import_goes_on_at_once_without_waiting_for_the_file_to_idle(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "repo" / ".aider.chat.history.md"
    path.parent.mkdir()
    _many_sessions(path, 1000)  # written just now: only the last session may still be open
    ctx = make_ctx(db_url)
    proc = spawn_cli("import", "aider", str(path), env=cli_env(db_url), cwd=tmp_path)

    def imported() -> int:
        with ctx.sessions() as s:
            return int(s.scalar(select(func.count()).select_from(ActivitySession)) or 0)

    wait_for(lambda: imported() >= 50 or proc.poll() is not None, 120, "the first sessions")
    assert proc.poll() is None, "the import finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert 0 < imported() < 999
    rerun = run_cli("import", "aider", str(path), db_url=db_url, cwd=tmp_path, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "sessions_open 1" in rerun.stdout
    assert imported() == 999  # every closed session, once; the last one waits
    with ctx.sessions() as s:
        seen = s.scalar(
            select(func.count()).where(
                ImporterSeen.importer_name == "aider", ImporterSeen.record_id == "segment"
            )
        )
    assert seen == 999


def test_with_a_model_a_claude_code_session_is_held_and_its_digest_queued(
    db_url: str, tmp_path: Path
) -> None:
    path = transcript(tmp_path, WORCESTER)
    with OpenAIDouble(one_task_per_commit) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        stats = ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
        assert (stats.digests, stats.promoted, llm.calls) == (1, 0, 0)
        [queued] = triages(ctx)
        assert queued.payload == session_digests(path, "claude-code")[0].payload
        assert {c.status for c in candidates(ctx)} == {"held"}
        promoted = run_entity_promote(ctx)
    assert promoted["triage_triaged"] == 1
    [task_entity] = [e for e in entities(ctx) if e.kind == "task"]
    assert (
        task_entity.display_name == "fix: add return before redirect in adminlogin superuser path"
    )


def closed_before_and_after(
    db_url: str,
    tmp_path: Path,
    source: str,
    line: int,
    between: Callable[[JobContext], None] | None = None,
) -> JobContext:
    """A transcript imported as far as the line before `line`, closed as idle, then (after
    `between`) whole."""
    path = transcript(tmp_path, source)
    whole = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(whole[: line - 1]))
    at_rest(path, seconds_ago=3 * 3600)
    ctx = make_ctx(db_url)
    ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
    if between is not None:
        between(ctx)
    path.write_bytes(b"".join(whole))
    at_rest(path, seconds_ago=3600)
    ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
    return ctx


def test_a_commit_whose_result_comes_after_an_idle_close_is_of_the_work_begun_before(
    db_url: str, tmp_path: Path
) -> None:
    # the request (line 5) and the commit made for it (38) are one piece of work, as when the
    # file is read at once: the later segment's candidate is a sighting of the task proposed
    # for the request, and the commit, its subject and its line are that task's evidence
    ctx = closed_before_and_after(db_url, tmp_path, BASTION, 40)
    tasks = [e for e in entities(ctx) if e.kind == "task"]
    assert len(tasks) == 1
    proposed = [c for c in candidates(ctx) if c.suggested_kind == "task"]
    assert {c.entity_id for c in proposed} == {tasks[0].id}
    later = [c for c in proposed if c.source_id.endswith("#2")]
    # it rests on the commit's line, which the segment's digest lists for a triage to name
    assert [c.source_line for c in later] == [38]
    context = later[0].surrounding_text or ""
    assert "Add bastion-how-to-use skill to skills-lock.json" in context
    assert re.search(r"^evidence lines: 5, 38$", context, re.MULTILINE)


def _stamped(raw: bytes, uuid: str, parent: str, at: str) -> bytes:
    """A record of the transcript written again later: another uuid, parent and time."""
    record = json.loads(raw)
    record.update(uuid=uuid, parentUuid=parent, timestamp=at)
    return json.dumps(record).encode() + b"\n"


def test_work_carried_over_two_idle_closes_is_one_task(db_url: str, tmp_path: Path) -> None:
    # the request (5) and its edit (31) are closed as idle before the commit (38); the commit is
    # closed as idle in turn; an hour later the lockfile is edited again (the edit of 31 and its
    # result, recorded anew): all three segments are the one piece of work
    path = transcript(tmp_path, BASTION)
    whole = path.read_bytes().splitlines(keepends=True)
    last = json.loads(whole[-1])["uuid"]
    again = [
        _stamped(whole[30], "0b5e7c1e-0000-4000-8000-000000000001", last, "2026-05-08T09:00:00Z"),
        _stamped(
            whole[33],
            "0b5e7c1e-0000-4000-8000-000000000002",
            "0b5e7c1e-0000-4000-8000-000000000001",
            "2026-05-08T09:00:01Z",
        ),
    ]
    ctx = make_ctx(db_url)
    for written in (whole[:37], whole, whole + again):
        path.write_bytes(b"".join(written))
        at_rest(path, seconds_ago=3 * 3600)
        ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
    proposed = [c for c in candidates(ctx) if c.suggested_kind == "task"]
    assert [c.source_id.rpartition("#")[2] for c in proposed][1:] == ["2", "3"]
    assert len({c.raw_text for c in proposed}) == 1  # the third is not named by the commit
    tasks = [e for e in entities(ctx) if e.kind == "task"]
    assert len(tasks) == 1 and {c.entity_id for c in proposed} == {tasks[0].id}
    assert proposed[-1].source_line == len(whole) + 1  # the edit made in the third segment


SNMP_PATH = "/home/moxa/WORK/SNMP_50ms"


def test_work_a_later_commit_gathers_is_one_task_as_in_one_reading(
    db_url: str, tmp_path: Path
) -> None:
    # after the lockfile edit (31), the person asks for it to be shipped (a request typed anew
    # before the commit call, 38), whose result (40) comes after the idle close: the first
    # segment proposes the edit's request and the shipping request as two tasks, and the commit
    # that the second segment reads gathers them, as one reading of the file makes them one
    path = transcript(tmp_path, BASTION)
    whole = path.read_bytes().splitlines(keepends=True)
    asked = json.loads(whole[4])
    asked.update(
        uuid="0b5e7c1e-0000-4000-8000-000000000003",
        parentUuid=json.loads(whole[33])["uuid"],
        timestamp="2026-05-08T06:57:15Z",
        message={"role": "user", "content": "Ship the lockfile change to main on GitHub"},
    )
    records = [*whole[:36], json.dumps(asked).encode() + b"\n", *whole[36:]]
    ctx = make_ctx(db_url)
    first: set[int] = set()
    for written in (records[:39], records):
        path.write_bytes(b"".join(written))
        at_rest(path, seconds_ago=3 * 3600)
        ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
        if written is not records:
            first = {e.id for e in entities(ctx) if e.kind == "task"}
            assert len(first) == 2
    tasks = [e for e in entities(ctx) if e.kind == "task"]
    assert len(tasks) == 1
    assert {c.entity_id for c in candidates(ctx) if c.suggested_kind == "task"} == {tasks[0].id}
    # the id of the task gathered into the other says where it went
    [gone] = first - {tasks[0].id}
    assert f"e:{gone} was merged into e:{tasks[0].id}" in _shown(db_url, f"e:{gone}")


def _shown(db_url: str, ref: str) -> str:
    return CliRunner().invoke(cli, ["show", ref], env={"YZOS_DATABASE_URL": db_url}).output


def test_a_later_segment_places_the_session_by_all_it_recorded(db_url: str, tmp_path: Path) -> None:
    # the first 73 lines show only the folder it started in; what came after the idle close
    # shows the repository the work is in, and the session and its work move there: what the
    # first segment alone proposed (the `dl` project, its task) is in SNMP_50ms, as when the file
    # is read at once, and the task the second segment goes on with is the same task
    ctx = closed_before_and_after(db_url, tmp_path, SNMP, 74)
    with ctx.sessions() as s:
        (project_path,) = s.scalars(select(ActivitySession.project_path)).all()
    assert project_path == SNMP_PATH
    assert {c.project_path for c in candidates(ctx)} == {SNMP_PATH}
    found = entities(ctx)
    [project] = [e for e in found if e.kind == "project"]
    assert (project.display_name, project.project_path) == ("SNMP_50ms", SNMP_PATH)
    tasks = [e for e in found if e.kind == "task"]
    assert {e.project_id for e in tasks} == {project.id}
    first = [c for c in candidates(ctx) if c.suggested_kind == "task" and "#" not in c.source_id]
    assert first and {c.entity_id for c in first} <= {e.id for e in tasks}
    assert len({e.normalized_name for e in tasks}) == len(tasks) == 4
    # the trail says why: the project and the first segment's task moved, no model consulted
    moves = [d for d in decisions(ctx) if "detail" in (d.verdict or {})]
    assert {(d.entity_id, d.source) for d in moves} == {
        (project.id, "dry_run"),
        (first[0].entity_id, "dry_run"),
    }
    assert all(SNMP_PATH in d.verdict["detail"] for d in moves)


def triaged_in_snmp(ctx: JobContext) -> Entity:
    """The one project, SNMP_50ms's, once every digest is triaged: the tasks and candidates are
    all its."""
    assert {t.status for t in triages(ctx)} == {"done"}
    found = entities(ctx)
    [project] = [e for e in found if e.kind == "project"]
    assert (project.display_name, project.project_path) == ("SNMP_50ms", SNMP_PATH)
    assert {e.project_id for e in found if e.kind == "task"} == {project.id}
    assert {c.project_path for c in candidates(ctx)} == {SNMP_PATH}
    return project


@pytest.mark.parametrize("triaged_between", [False, True], ids=["waiting", "triaged"])
def test_with_a_model_a_session_moved_by_a_later_segment_is_triaged_where_it_worked(
    db_url: str, tmp_path: Path, triaged_between: bool
) -> None:
    # the first segment's digest waits for triage when the second shows the repository, or was
    # triaged before it: either way the session's project is SNMP_50ms's alone
    path = transcript(tmp_path, SNMP)
    whole = path.read_bytes().splitlines(keepends=True)
    with OpenAIDouble(one_task_per_commit) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        for written, triage in ((whole[:73], triaged_between), (whole, True)):
            path.write_bytes(b"".join(written))
            at_rest(path, seconds_ago=3600)
            ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
            if not triaged_between and triage:
                assert {t.payload["project_path"] for t in triages(ctx)} == {SNMP_PATH}
            if triage:
                run_entity_promote(ctx)
    triaged_in_snmp(ctx)


def test_with_a_model_a_session_moved_while_its_digest_is_triaged_is_written_where_it_worked(
    db_url: str, tmp_path: Path
) -> None:
    # the first segment's digest is claimed and its triage call on its way when the importer
    # reads the rest of the file and moves the session: the reply, asked about `dl`, is written
    # into SNMP_50ms
    path = transcript(tmp_path, SNMP)
    whole = path.read_bytes().splitlines(keepends=True)
    asked: list[str] = []

    def import_the_rest_meanwhile(body: dict[str, Any]) -> Any:
        digest = session_of(body)
        if digest is not None and not asked:
            asked.append(digest["project_path"])
            path.write_bytes(b"".join(whole))
            at_rest(path, seconds_ago=3600)
            ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
        return one_task_per_commit(body)

    with OpenAIDouble(import_the_rest_meanwhile) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        path.write_bytes(b"".join(whole[:73]))
        at_rest(path, seconds_ago=3600)
        ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
        run_entity_promote(ctx)
        run_entity_promote(ctx)  # the second segment's digest
    assert asked and asked[0] != SNMP_PATH  # asked while the session was still in `dl`
    project = triaged_in_snmp(ctx)
    # the trail says what the reply proposed in `dl` and where it went
    moves = [d for d in decisions(ctx) if "detail" in (d.verdict or {})]
    assert project.id in {d.entity_id for d in moves}
    assert all("buildroot/dl" in d.verdict["detail"] for d in moves)


def _another_session(raw: bytes, session_id: str) -> bytes:
    """A record as another session in the same folder would have written it."""
    record = json.loads(raw)
    for field in ("uuid", "parentUuid"):
        if isinstance(record.get(field), str):
            record[field] = "f" + record[field][1:]
    if "sessionId" in record:
        record["sessionId"] = session_id
    return json.dumps(record).encode() + b"\n"


def test_what_another_session_saw_too_stays_where_it_was_seen(db_url: str, tmp_path: Path) -> None:
    # another session in the `dl` folder proposed the same project and task: they are real
    # there, and stay; the moved session's later work is SNMP_50ms's
    path = transcript(tmp_path, SNMP)
    whole = path.read_bytes().splitlines(keepends=True)
    other = "0c0ffee0-0000-4000-8000-000000000001"
    copy = path.with_name(f"{other}.jsonl")
    copy.write_bytes(b"".join(_another_session(raw, other) for raw in whole[:73]))
    path.write_bytes(b"".join(whole[:73]))
    ctx = make_ctx(db_url)
    for written in (path, copy):
        at_rest(written, seconds_ago=3 * 3600)
    ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
    before = {e.id: (e.display_name, e.project_key) for e in entities(ctx)}
    path.write_bytes(b"".join(whole))
    at_rest(path, seconds_ago=3600)
    ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
    found = entities(ctx)
    assert {e.id: (e.display_name, e.project_key) for e in found if e.id in before} == before
    assert {e.display_name for e in found if e.kind == "project"} == {"dl", "SNMP_50ms"}
    # and the candidates they rest on still say where they were seen
    stayed = {c.project_path for c in candidates(ctx) if c.entity_id in before}
    assert stayed == {"/home/moxa/sdc1/home/moxa/mds4xgl3/buildroot/dl"}


def test_work_another_session_does_later_in_the_folder_left_behind_stays_there(
    db_url: str, tmp_path: Path
) -> None:
    # no alias is left on the `dl` keys: a session that really works in that folder later is
    # `dl`'s, not SNMP_50ms's
    ctx = closed_before_and_after(db_url, tmp_path, SNMP, 74)
    moved = {e.id for e in entities(ctx)}
    path = transcript(tmp_path, SNMP)
    other = "0c0ffee0-0000-4000-8000-000000000002"
    whole = path.read_bytes().splitlines(keepends=True)
    copy = path.with_name(f"{other}.jsonl")
    copy.write_bytes(b"".join(_another_session(raw, other) for raw in whole[:73]))
    at_rest(copy, seconds_ago=3600)
    ClaudeCodeImporter(ctx).import_paths([copy])
    later = [e for e in entities(ctx) if e.id not in moved]
    [project] = [e for e in later if e.kind == "project"]
    assert project.display_name == "dl"
    assert [e.project_id for e in later if e.kind == "task"] == [project.id]


def test_a_task_already_in_the_new_repository_takes_the_moved_one_without_its_old_project(
    db_url: str, tmp_path: Path
) -> None:
    # the first segment's task is known in SNMP_50ms already (seen there by another source,
    # before its project was): merged into it, it does not bring the `dl` project along
    moved: list[int] = []

    def seen_there(ctx: JobContext) -> None:
        [first] = [e for e in entities(ctx) if e.kind == "task"]
        moved.append(first.id)
        at = datetime(2026, 8, 13, 5, 0, tzinfo=UTC)
        draft = EntityDraft(
            "task",
            first.normalized_name,
            first.display_name,
            0.5,
            "dry_run",
            None,
            at,
            None,
            project_key(SNMP_PATH),
        )
        with ctx.sessions.begin() as s:
            [ref] = upsert_entities(s, [draft], at).values()
            add_sightings(s, [Sighting(ref.id, "window_title", "w1", None, at)])

    ctx = closed_before_and_after(db_url, tmp_path, SNMP, 74, between=seen_there)
    found = entities(ctx)
    [project] = [e for e in found if e.kind == "project"]
    assert project.display_name == "SNMP_50ms"
    assert {e.project_id for e in found if e.kind == "task"} == {project.id}
    # the first segment's task, merged away, names the one that holds it
    said = re.search(rf"e:{moved[0]} was merged into e:(\d+)", _shown(db_url, f"e:{moved[0]}"))
    assert said is not None and int(said.group(1)) in {e.id for e in found if e.kind == "task"}


def test_a_task_the_triage_proposed_on_no_line_moves_with_the_session(
    db_url: str, tmp_path: Path
) -> None:
    def reply(body: dict[str, Any]) -> Any:
        digest = session_of(body)
        if digest is None:
            return accept_suggested(body)
        return triage_reply(digest["project"], [task("Prepare the SNMP AgentX slides", [])])

    path = transcript(tmp_path, SNMP)
    whole = path.read_bytes().splitlines(keepends=True)
    with OpenAIDouble(reply) as llm:
        ctx = make_ctx(db_url, llm.base_url)
        for written in (whole[:73], whole):
            path.write_bytes(b"".join(written))
            at_rest(path, seconds_ago=3600)
            ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
            run_entity_promote(ctx)
    found = entities(ctx)
    [project] = [e for e in found if e.kind == "project"]
    assert project.display_name == "SNMP_50ms"
    [slides] = [e for e in found if e.kind == "task"]
    assert slides.project_id == project.id


def test_what_a_user_corrected_stays_where_the_earlier_segment_put_it(
    db_url: str, tmp_path: Path
) -> None:
    # a user's word is final: the task they confirmed in `dl` is not moved by the later segment
    confirmed: list[Entity] = []

    def confirm(ctx: JobContext) -> None:
        confirmed.extend(e for e in entities(ctx) if e.kind == "task")
        correct(ctx.sessions, f"e:{confirmed[0].id}", "restore")

    ctx = closed_before_and_after(db_url, tmp_path, SNMP, 74, between=confirm)
    [task] = confirmed
    found = {e.id: e for e in entities(ctx)}
    kept = found[task.id]
    assert (kept.project_key, kept.project_id) == (task.project_key, task.project_id)
    # its project stays with it, and the session's later work has a project of its own
    assert task.project_id is not None and found[task.project_id].display_name == "dl"
    projects = {e.display_name for e in found.values() if e.kind == "project"}
    assert projects == {"dl", "SNMP_50ms"}


def test_an_edit_let_through_after_an_idle_close_is_evidence_of_the_work(
    db_url: str, tmp_path: Path
) -> None:
    # the file the edit wrote shows in the later segment's candidate, on the edit's line: the
    # change goes by its result's record, not by the call's, which the first segment claimed
    ctx = closed_before_and_after(db_url, tmp_path, BRIEF, 338)
    later = [c for c in candidates(ctx) if c.suggested_kind == "task" and "#" in c.source_id]
    assert any(
        c.source_line == 337
        and "files: /home/yingbohao/llm-train/experiment_brief.md" in (c.surrounding_text or "")
        for c in later
    )
