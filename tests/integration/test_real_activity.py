"""Real aider histories and Claude Code transcripts in, candidates, sessions and entities out,
on both backends: each candidate on the line it rests on, with its project and the
context the judge reads; each session with its own repository, start and end; tasks tied to
their project."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select

from tests.support.cli import run_cli
from tests.support.corpus import (
    AQUATICAT,
    AUTOMATAII,
    FLASK,
    HEALTH,
    KEVINMATZ,
    MOZGOSLAV,
    REAL,
    REVIEW,
    WORKTREE,
    at_rest,
    history,
    transcript,
)
from tests.support.jobs import candidates, entities, make_ctx
from yzos_jobs.db.models import ActivitySession, EntityCandidate
from yzos_jobs.importers.aider import AiderImporter
from yzos_jobs.importers.claude_code import ClaudeCodeImporter
from yzos_jobs.importers.records import ImportStats
from yzos_jobs.jobcontext import JobContext


def import_aider(ctx: JobContext, *paths: Path) -> ImportStats:
    return AiderImporter(ctx).import_paths(list(paths))


def project_paths(ctx: JobContext) -> dict[str, str | None]:
    """Session start (as the header writes it, compacted) → the session's repository."""
    with ctx.sessions() as s:
        rows = s.scalars(select(ActivitySession).where(ActivitySession.source_kind == "aider"))
        return {a.external_id.split(":")[0]: a.project_path for a in rows}


def tasks(ctx: JobContext) -> dict[int, EntityCandidate]:
    return {c.source_line: c for c in candidates(ctx) if c.suggested_kind == "task"}


def test_candidates_rest_on_their_lines_with_the_context_the_judge_reads(
    db_url: str, tmp_path: Path
) -> None:
    path = history(tmp_path, HEALTH)
    ctx = make_ctx(db_url)
    stats = import_aider(ctx, path)
    assert (stats.sessions, stats.sessions_ended, stats.errors) == (2, 2, 0)
    found = tasks(ctx)
    # One candidate per work item, named by its commit: the requests that led to it are its
    # evidence, not candidates of their own.
    assert sorted(found) == [281, 590, 868, 1151]
    commit = found[281]
    assert commit.raw_text == "add script to check repository metrics via GitHub GraphQL API"
    repository = str(tmp_path / "health-analyzer-poc")
    assert commit.project_path == repository and commit.source_id.startswith("20250922T120400:")
    context = commit.surrounding_text or ""
    assert context.startswith(f"aider session in {repository} (project health-analyzer-poc)")
    assert "evidence lines: 31, 142, 281" in context  # the requests that led to the commit
    assert "request (line 142): Please write a .sh file" in context
    assert "commit e14ab36 (feat) (line 281)" in context  # the prefix is kept as metadata
    assert "files: metrics_check.sh" in context
    [project] = {c.raw_text for c in candidates(ctx) if c.suggested_kind == "project"}
    assert project == "health-analyzer-poc"
    ends = {
        a.external_id.split(":")[0]: a.ended_at
        for a in _sessions(ctx)  # the session's own end: the next header, or the file's time
    }
    assert ends["20250922T120400"] == datetime(2025, 9, 22, 14, 55, tzinfo=UTC)
    mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    assert abs((ends["20250922T145500"] - mtime).total_seconds()) < 1


def _sessions(ctx: JobContext) -> list[ActivitySession]:
    with ctx.sessions() as s:
        return list(s.scalars(select(ActivitySession)))


def test_every_header_variant_starts_a_session_and_a_file_without_one_says_so(
    db_url: str, tmp_path: Path
) -> None:
    flask = history(tmp_path, FLASK)
    bom = history(tmp_path / "bom", MOZGOSLAV)
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())
    at_rest(bom)
    notes = tmp_path / "notes.md"
    notes.write_bytes((REAL / "README.md").read_bytes())
    result = run_cli("import", "aider", str(flask), str(bom), str(notes), db_url=db_url)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"note: no aider session found in {notes}" in result.stdout
    # a header whose time cannot be read is skipped, and the note says what was missing
    garbled = tmp_path / "garbled.md"
    garbled.write_text("# aider chat started at 2026-99-99 99:99:99\n\n#### add a login page\n")
    result = run_cli("import", "aider", str(garbled), db_url=db_url)
    assert f"skipped {garbled}:1" in result.stderr
    assert "(no '# aider chat started at' line with a date and time it can read)" in result.stdout
    # a history saved as UTF-16 (an editor's "Unicode", a PowerShell 5 redirect) says so
    wide = tmp_path / "wide" / ".aider.chat.history.md"
    wide.parent.mkdir()
    wide.write_bytes((REAL / FLASK).read_text(encoding="utf-8").encode("utf-16"))
    at_rest(wide)
    result = run_cli("import", "aider", str(wide), db_url=db_url)
    assert "it is UTF-16; aider writes UTF-8" in result.stdout, result.stdout
    ctx = make_ctx(db_url)
    assert sorted(project_paths(ctx)) == [
        "20230512T152326",  # `# Aider chat started at`, the first versions' format
        "20260422T224012",  # after a BOM
        "20260422T224047",
        "20260422T231303",
    ]
    hello = 'Added a /hello endpoint that returns "Hello, World!" when accessed.'
    assert {c.source_line: c.raw_text for c in candidates(ctx) if c.raw_text == hello} == {
        35: hello  # the first versions' `_d8dab4e aider: …_` commit line, its prefix dropped
    }


def test_the_repository_from_relative_windows_and_worktree_paths(
    db_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(db_url)
    files = [history(tmp_path, s) for s in (AQUATICAT, KEVINMATZ, AUTOMATAII, WORKTREE)]
    assert import_aider(ctx, *files).errors == 0
    by_start = project_paths(ctx)
    monochromatic = r"C:\Users\user\Text\Projects\Aquaticat\monochromatic2025MAY24-pnpmTest"
    # `..\..\..\.git` started below the root, `.git` at the root, failed starts showing
    # nothing: all the repository the history sits at the root of
    assert {by_start[k] for k in ("20250602T114934", "20250602T130834", "20250602T114749")} == {
        monochromatic
    }
    assert by_start["20231001T230604"] == r"C:\GitRepos\AiderExperiments"  # `..\.git`
    assert by_start["20250603T135056"] == "/Users/alansynn/Workspace/src/Research/automataii"
    # a worktree `../../../git/simple_test_project/.git/worktrees/<name>`: the main repository
    assert by_start["20250318T102847"] == "/home/tom/git/simple_test_project"
    names = {e.display_name for e in entities(ctx) if e.kind == "project"}
    assert names == {
        "monochromatic2025MAY24-pnpmTest",
        "AiderExperiments",
        "automataii",
        "simple_test_project",
    }


def test_a_task_belongs_to_its_project(db_url: str, tmp_path: Path) -> None:
    files = [history(tmp_path, s) for s in (HEALTH, KEVINMATZ)]
    imported = run_cli("import", "aider", *map(str, files), db_url=db_url)
    assert imported.returncode == 0, imported.stderr[-2000:]
    promoted = run_cli("once", "entity_promote", db_url=db_url)
    assert promoted.returncode == 0, promoted.stderr[-2000:]
    ctx = make_ctx(db_url)
    everything = entities(ctx)
    projects = {e.id: e for e in everything if e.kind == "project"}
    found = [e for e in everything if e.kind == "task"]
    assert len(projects) == 2 and len(found) >= 12
    for task in found:
        assert task.project_id in projects, task.display_name
        assert projects[task.project_id].project_key == task.project_key
    by_name = {p.display_name: p.id for p in projects.values()}
    titles = {t.display_name: t.project_id for t in found}
    assert (
        titles["add script to check repository metrics via GitHub GraphQL API"]
        == by_name["health-analyzer-poc"]
    )
    assert (
        titles["Added inventory system to the text adventure game."] == by_name["AiderExperiments"]
    )


def test_two_repositories_with_one_name_are_two_projects(db_url: str, tmp_path: Path) -> None:
    one = history(tmp_path / "work", HEALTH, directory="api")
    two = history(tmp_path / "clients", MOZGOSLAV, directory="api")
    ctx = make_ctx(db_url)
    import_aider(ctx, one, two)
    projects = [e for e in entities(ctx) if e.kind == "project"]
    assert sorted((p.display_name, p.project_path) for p in projects) == [
        ("api", str(tmp_path / "clients" / "api")),
        ("api", str(tmp_path / "work" / "api")),
    ]
    keys = {p.project_key: p.id for p in projects}
    tasks = [e for e in entities(ctx) if e.kind == "task"]
    assert {t.project_id for t in tasks} == set(keys.values())  # each project has its tasks
    assert all(t.project_id == keys[t.project_key] for t in tasks)


def test_one_repository_seen_through_another_relative_path_or_a_moved_history(
    db_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(db_url)
    import_aider(ctx, history(tmp_path, AQUATICAT))
    [project] = [e for e in entities(ctx) if e.kind == "project"]
    # The history moved elsewhere and aider run again at the repository's root: its new
    # session shows only `Git repo: .git`, and is still that repository.
    moved = history(tmp_path / "elsewhere", AQUATICAT, directory="checkout")
    with moved.open("a", encoding="utf-8") as fh:
        fh.write(
            "\n# aider chat started at 2025-06-03 09:00:00\n\n> C:\\Users\\user\\.local\\bin\\aider"
            "\n> Git repo: .git with 480 files\n\n#### add a TSDoc example to unionIterables\n"
            "\n> Applied edit to src/index.ts\n"
        )
    at_rest(moved)
    assert import_aider(ctx, moved).sessions == 1  # the others were imported before
    assert [e.id for e in entities(ctx) if e.kind == "project"] == [project.id]
    [new] = [c for c in candidates(ctx) if c.raw_text == "add a TSDoc example to unionIterables"]
    assert new.project_path == project.project_path


def test_claude_code_corpus_imports_without_errors_each_session_ended_once(
    db_url: str, tmp_path: Path
) -> None:
    # the tuning split's transcripts and their subagents' (the held-out split is only scored)
    tuning = [
        row["source"]
        for row in map(json.loads, (REAL / "labels-claude-code.jsonl").read_text().splitlines())
        if row["split"] == "tune"
    ]
    sources = sorted(
        str(p.relative_to(REAL))
        for main in tuning
        for p in [REAL / main, *(REAL / main).with_suffix("").rglob("*.jsonl")]
    )
    for source in sources:
        transcript(tmp_path, source)
    main = transcript(tmp_path, REVIEW)
    subagents = main.with_suffix("") / "subagents"
    subagents.mkdir(parents=True)
    record = {
        "uuid": "subagent-prompt",
        "sessionId": main.stem,
        "isSidechain": True,
        "cwd": "/Users/himankdave/Documents/code/personal-gh/trivivo",
        "type": "user",
        "message": {"role": "user", "content": "Review the code quality of the project."},
        "timestamp": "2026-02-12T05:10:00.000Z",
    }
    (subagents / "agent-a1c4dc4.jsonl").write_text(json.dumps(record) + "\n")
    at_rest(subagents / "agent-a1c4dc4.jsonl")
    broken = tmp_path / "projects" / sources[0].split("/", 1)[1]
    with broken.open("a") as fh:
        fh.write("{not json\n")
    at_rest(broken)
    ctx = make_ctx(db_url)
    stats = ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
    # Records without a message (snapshots, queue operations, summaries, titles) are skipped
    # without a word; the one malformed line is the one error.
    lines = len(broken.read_bytes().splitlines())
    assert stats.error_messages == [
        f"{broken}:{lines}: not JSON (Expecting property name enclosed in double quotes)"
    ]
    # one session per labelled one: the subagent's is its session's
    assert (stats.sessions, stats.sessions_ended) == (len(tuning), len(tuning))
    with ctx.sessions() as s:
        review = s.scalars(
            select(ActivitySession).where(ActivitySession.external_id == main.stem)
        ).one()
    assert review.ended_at == datetime(2026, 2, 12, 5, 10, tzinfo=UTC)  # after all its files
    texts = {c.raw_text for c in candidates(ctx)}
    assert "Review the code quality of the project." not in texts
    assert "create TODO app by Next.js" in texts  # a slash command's arguments
    assert "Show full first sentence in README skill descriptions" in texts  # a heredoc commit
    again = ClaudeCodeImporter(ctx).import_paths([tmp_path / "projects"])
    assert (again.sessions, again.candidates, again.files_unchanged) == (0, 0, again.files)


def test_a_request_asked_again_after_each_attempt_is_one_task_candidate(
    db_url: str, tmp_path: Path
) -> None:
    # four "fix AxiosError in node_modules" in a row, each answered by a commit worded otherwise
    path = history(tmp_path, "aider/abhi55gp__AI-Augmented-assessment/aider.chat.history.md")
    attempts = {3659, 3693, 3701, 3724, 3732, 3755, 3763, 3786}
    ctx = make_ctx(db_url)
    import_aider(ctx, path)
    [named] = [c for line, c in tasks(ctx).items() if line in attempts]
    evidence = named.surrounding_text or ""
    assert all(str(n) in evidence for n in (3724, 3755, 3786))  # the later attempts' commits
