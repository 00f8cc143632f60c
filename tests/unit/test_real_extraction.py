"""What the importers' parsing makes of real aider histories and Claude Code transcripts (issue
10), read through `session_digests`: the digest lines are the requests, commits and files the
importer recognised, on the lines of the file they rest on. No database: the importers' write
path is tested in tests/integration/test_real_activity.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.corpus import (
    AQUATICAT,
    COMMITS,
    DEMO,
    FLASK,
    HEALTH,
    INTERRUPTED,
    KARACHI,
    MOZGOSLAV,
    NANCY,
    PLAN,
    REAL,
    REVIEW,
    SUPPLYCHAIN,
    TRADEPIRATES,
    WORCESTER,
    ZEN,
    history,
    transcript,
)
from yzos_jobs.importers.digests import SessionDigest, session_digests


def lines_of(digests: list[SessionDigest], kind: str) -> dict[int, str]:
    return {
        entry["line"]: entry["text"]
        for d in digests
        for entry in d.payload["lines"]
        if entry["kind"] == kind
    }


def aider(source: str) -> list[SessionDigest]:
    return session_digests(REAL / source, "aider")


def claude(source: str) -> list[SessionDigest]:
    return session_digests(REAL / source, "claude-code")


# --- aider -----------------------------------------------------------------------------------


def test_the_capitalised_header_of_the_first_aider_versions_starts_a_session() -> None:
    [session] = aider(FLASK)
    assert session.key == "2023-05-12 15:23:26"
    # `#### >  text` requests and `_<sha> aider: …_` commits of that format
    assert sorted(lines_of([session], "request")) == [14, 38, 66, 108]
    assert sorted(lines_of([session], "commit")) == [35, 63, 105, 168]
    assert session.payload["project_path"] == "/Users/gauthier/tmp/flask"


def test_a_bom_before_the_first_header_changes_nothing(tmp_path: Path) -> None:
    plain = history(tmp_path / "plain", HEALTH)
    bom = history(tmp_path / "bom", HEALTH)
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())
    without, with_bom = session_digests(plain, "aider"), session_digests(bom, "aider")
    assert (
        [d.key for d in with_bom]
        == [d.key for d in without]
        == [
            "2025-09-22 12:04:00",
            "2025-09-22 14:55:00",
        ]
    )
    assert [d.payload["lines"] for d in with_bom] == [d.payload["lines"] for d in without]


def test_a_bom_before_a_transcripts_first_record_changes_nothing(tmp_path: Path) -> None:
    # the first record is the session's first request
    first_request = (
        "claude-code/-Users-tmeister-Code-Personal-jwt-auth-pro/"
        "6305b4e6-4ebb-449c-bf14-bf55ec571185.jsonl"
    )
    plain = transcript(tmp_path / "plain", first_request)
    bom = transcript(tmp_path / "bom", first_request)
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())
    without, with_bom = session_digests(plain, "claude-code"), session_digests(bom, "claude-code")
    assert with_bom and [d.key for d in with_bom] == [d.key for d in without]
    assert 1 in [line["line"] for d in with_bom for line in d.payload["lines"]]
    assert [d.payload["lines"] for d in with_bom] == [d.payload["lines"] for d in without]


def test_architect_echoes_are_not_requests() -> None:
    requests = lines_of(aider(TRADEPIRATES), "request")
    assert {161, 298} <= requests.keys()
    assert not {197, 341} & requests.keys()  # the architect's reply, logged again as ####
    requests = lines_of(aider(SUPPLYCHAIN), "request")
    assert {2337, 3876, 5141, 5153} <= requests.keys()
    assert not {2370, 2448, 2801, 3072, 3975, 4210, 5147, 5159} & requests.keys()


def test_answers_to_aider_and_its_watch_files_prompt_are_not_requests() -> None:
    requests = lines_of(aider(MOZGOSLAV), "request")
    assert not {459, 541, 3494, 3662} & requests.keys()  # "Add file to the chat? … [Yes]: all"
    requests = lines_of(aider(AQUATICAT), "request")
    assert {503, 765} <= requests.keys()
    assert not {513, 517} & requests.keys()
    assert not {1071, 1108, 1145} & requests.keys()  # "Find the "AI" comments below (█ …)"


def test_mode_commands_keep_their_request_and_aider_logging_it_again_is_one() -> None:
    requests = lines_of(aider(HEALTH), "request")
    # `#### /code` alone, the request on the next `####` line, then logged again at 145
    assert requests[142].startswith("Please write a .sh file that runs these commands")
    assert 145 not in requests
    assert 14 not in requests and 288 not in requests  # `/ask`, `/code` without a request
    zen = lines_of(aider(ZEN), "request")
    assert zen[73].startswith("请你分析一下我这列的处理")  # /copy-context carries a request
    assert 54 not in zen  # /add


def test_commit_lines_keep_their_subject_and_snapshots_stay_in_the_digest() -> None:
    commits = lines_of(aider(AQUATICAT), "commit")
    # the snapshot of the user's own edits is evidence, the next commit is the work
    assert commits[1010] == "chore: Clean up comments in index"
    assert commits[1012] == "refactor: Reorganize exports in index.ts"
    commits = lines_of(aider(SUPPLYCHAIN), "commit")
    assert 224 in commits and 3249 not in commits  # a subject that is only a fence is dropped


def test_a_session_ends_at_the_next_header_and_the_last_at_the_files_time(
    tmp_path: Path,
) -> None:
    path = history(tmp_path, HEALTH)
    first, last = session_digests(path, "aider")
    assert first.payload["ended_at"] == "2025-09-22T14:55:00+00:00"
    assert last.payload["ended_at"] != last.payload["started_at"]
    assert last.payload["ended_at"][:10] == _mtime_day(path)


def _mtime_day(path: Path) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(path.stat().st_mtime, UTC).date().isoformat()


# --- Claude Code -----------------------------------------------------------------------------


def test_machine_written_user_turns_are_not_requests() -> None:
    # task notifications (34, 40, 46, 52), an interruption marker (89), the continuation
    # summary (101), command output and caveats: only what the person typed
    assert sorted(lines_of(claude(REVIEW), "request")) == [3, 59, 78]
    # "[Request interrupted by user]" twice, a /model command with its caveat
    assert sorted(lines_of(claude(INTERRUPTED), "request")) == [7, 18]


def test_a_slash_commands_arguments_are_its_request_and_expansions_are_not() -> None:
    requests = lines_of(claude(DEMO), "request")
    # /orchestrator with <command-args>; its isMeta expansion (3) and the v1 inline subagent
    # prompt (16, isSidechain) are not requests
    assert requests == {2: "create TODO app by Next.js"}


def test_requests_in_a_script_without_spaces_are_requests() -> None:
    requests = lines_of(claude(NANCY), "request")
    assert {3, 27, 72} <= requests.keys()
    assert requests[27] == "採用推奨のルールを追加して。"


def test_a_plan_handed_over_is_titled_by_its_heading(tmp_path: Path) -> None:
    from yzos_jobs.importers.transcript_session import transcript_sessions

    [session] = transcript_sessions([REAL / PLAN])
    [request, *_] = [e for e in session.events if getattr(e, "title", None)]
    assert request.line == 3
    assert request.title == "Plan: TRI-19 — Register auth and adminpanel apps in INSTALLED_APPS"


def test_commits_through_the_bash_tool_with_m_or_a_heredoc_once_git_confirms_them() -> None:
    assert lines_of(claude(WORCESTER), "commit") == {
        28: "fix: add return before redirect in adminlogin superuser path"  # git commit -m
    }
    assert lines_of(claude(KARACHI), "commit") == {
        101: "test: add integration tests for login view"  # a heredoc
    }
    assert lines_of(claude(NANCY), "commit") == {135: "feat: textlintルールを追加"}  # after hooks
    assert sorted(lines_of(claude(COMMITS), "commit")) == [56, 58, 60, 62, 64, 103]


@pytest.mark.parametrize(
    ("output", "made"),
    [
        # the hook refused it: git printed no commit
        ("pre-commit hook failed: flake8 found 3 errors", False),
        # made, then the push after it was rejected: the call failed, the commit stands
        (None, True),
    ],
)
def test_a_failed_call_made_only_the_commits_git_printed(
    tmp_path: Path, output: str | None, made: bool
) -> None:
    path = transcript(tmp_path, WORCESTER)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    result = records[28]["message"]["content"][0]  # the tool result of the commit on line 28
    result["is_error"] = True
    if output is None:
        result["content"] = f"{result['content']}\n! [rejected] main -> main (fetch first)"
    else:
        result["content"] = output
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    commits = lines_of(session_digests(path, "claude-code"), "commit")
    assert commits == (
        {28: "fix: add return before redirect in adminlogin superuser path"} if made else {}
    )


def test_subagents_belong_to_their_session(tmp_path: Path) -> None:
    main = transcript(tmp_path, REVIEW)
    subagents = main.with_suffix("") / "subagents"
    subagents.mkdir(parents=True)
    session_id = main.stem
    prompt = _record(session_id, "user", "Review the code quality of the project.", "05:00:00")
    reply = _record(session_id, "assistant", [{"type": "text", "text": "Done."}], "05:10:00")
    (subagents / "agent-a1c4dc4.jsonl").write_text(f"{json.dumps(prompt)}\n{json.dumps(reply)}\n")
    [with_subagent] = session_digests(main, "claude-code")
    [without] = claude(REVIEW)
    # one session: the subagent's prompt is no request; the session ends at its last record
    assert with_subagent.payload["lines"] == without.payload["lines"]
    assert with_subagent.payload["ended_at"] == "2026-02-12T05:10:00+00:00"


def _record(session_id: str, kind: str, content: Any, clock: str) -> dict[str, Any]:
    return {
        "uuid": f"sub-{kind}-{clock}",
        "sessionId": session_id,
        "isSidechain": True,
        "agentId": "a1c4dc4",
        "cwd": "/Users/himankdave/Documents/code/personal-gh/trivivo",
        "type": kind,
        "message": {"role": kind, "content": content},
        "timestamp": f"2026-02-12T{clock}.000Z",
    }


def test_a_worktree_maps_to_its_main_repository_where_the_transcript_shows_it(
    tmp_path: Path,
) -> None:
    main_repository = "/Users/himankdave/Documents/code/personal-gh/trivivo"
    path = transcript(tmp_path, WORCESTER)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    # the `.git` file of the worktree, as `cat .git` shows it in a tool result
    records[25]["message"]["content"][0]["content"] += (
        f"\ngitdir: {main_repository}/.git/worktrees/worcester"
    )
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    [digest] = session_digests(path, "claude-code")
    assert (digest.payload["project"], digest.payload["project_path"]) == (
        "trivivo",
        main_repository,
    )
    # Claude Code's own worktrees: <repo>/.claude/worktrees/<name>
    moved = transcript(tmp_path / "own", KARACHI)
    text = moved.read_text().replace(
        "/Users/himankdave/conductor/workspaces/trivivo/karachi",
        "/Users/himankdave/code/trivivo/.claude/worktrees/karachi",
    )
    moved.write_text(text)
    [digest] = session_digests(moved, "claude-code")
    assert digest.payload["project_path"] == "/Users/himankdave/code/trivivo"


def test_a_conductor_workspace_is_its_repository() -> None:
    # Conductor's worktrees sit at `conductor/workspaces/<repository>/<workspace>`, and this
    # transcript shows no other path of the repository
    [digest] = claude(KARACHI)
    assert (digest.payload["project"], digest.payload["project_path"]) == (
        "trivivo",
        "/Users/himankdave/conductor/workspaces/trivivo",
    )


def test_session_digests_keys_match_the_labels() -> None:
    labels = [
        json.loads(line)
        for name in ("labels.jsonl", "labels-claude-code.jsonl")
        for line in (REAL / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    for label in labels:
        fmt = label["format"]
        keys = {d.key for d in session_digests(REAL / label["source"], fmt)}
        wanted = label["session_start"] if fmt == "aider" else label["session_id"]
        assert wanted in keys, (label["source"], wanted)


def test_a_copy_is_read_like_the_original(tmp_path: Path) -> None:
    copy = tmp_path / "copy.md"
    shutil.copyfile(REAL / FLASK, copy)
    assert [d.payload["lines"] for d in session_digests(copy, "aider")] == [
        d.payload["lines"] for d in aider(FLASK)
    ]


def test_a_home_directory_that_holds_a_repository_keeps_it_where_git_commits(
    tmp_path: Path,
) -> None:
    # the work moved to a dotfiles repository kept in the home directory: edits in `~/.config`,
    # then the commit on line 28
    workspace = "/Users/himankdave/conductor/workspaces/trivivo/worcester"
    path = transcript(tmp_path, WORCESTER)
    text = path.read_text().replace(f"{workspace}/auth/", "/Users/himankdave/.config/auth/")
    path.write_text(text.replace(workspace, "/Users/himankdave"))
    [digest] = session_digests(path, "claude-code")
    assert digest.payload["project_path"] == "/Users/himankdave"
    # no commit git made: the home directory is no project (the folder in it the session read
    # most is)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    refused = {"is_error": True, "content": "pre-commit hook failed: flake8 found 3 errors"}
    records[28]["message"]["content"][0].update(refused)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    [digest] = session_digests(path, "claude-code")
    assert digest.payload["project_path"] == "/Users/himankdave/tests"
