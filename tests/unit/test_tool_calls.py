"""What a Claude Code transcript's tool calls say of the work on a request: that the tool worked
on it (read, searched, ran commands) or tried to change something, one event standing for the
calls after a request; its own bookkeeping is no work, nor is anything a subagent did."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from yzos_jobs.importers.closed_session import ClosedSession
from yzos_jobs.importers.session_events import (
    Commit,
    FileTouched,
    Request,
    ShellChange,
    ToolCall,
)
from yzos_jobs.importers.transcript_session import transcript_sessions

CWD = "/home/me/shop"


def _record(n: int, kind: str, content: Any) -> dict[str, Any]:
    return {
        "uuid": f"u{n}",
        "sessionId": "s1",
        "cwd": CWD,
        "gitBranch": "main",
        "type": kind,
        "message": {"role": kind, "content": content},
        "timestamp": f"2026-11-04T10:00:{n:02d}Z",
    }


def _call(n: int, name: str, tool_input: dict[str, Any], result: str) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": f"t{n}", "name": name, "input": tool_input}
    done = {"type": "tool_result", "tool_use_id": f"t{n}", "content": result}
    return [_record(n, "assistant", [use]), _record(n + 1, "user", [done])]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _events(*files: Path) -> list[Any]:
    [session] = transcript_sessions(list(files))
    return session.events


LOCK = "now add a lock around the refund path"
REVIEW = [
    _record(1, "user", "review the checkout module for race conditions"),
    *_call(2, "TodoWrite", {"todos": []}, "ok"),
    *_call(4, "Read", {"file_path": f"{CWD}/checkout.py"}, "def pay(): ..."),
    *_call(6, "Grep", {"pattern": "lock", "path": CWD}, "no matches"),
    _record(8, "assistant", [{"type": "text", "text": "Two races: the refund path and ..."}]),
    _record(9, "user", LOCK),
    *_call(10, "Edit", {"file_path": f"{CWD}/refund.py"}, "The file has been updated."),
]


def test_the_first_call_after_a_request_stands_for_the_work_on_it(tmp_path: Path) -> None:
    events = _events(_write(tmp_path / "s1.jsonl", REVIEW))
    kinds = [(type(e).__name__, e.line) for e in events if not isinstance(e, Request)]
    # the to-do list (line 2) is bookkeeping; the read (4) stands for the search (6) after it;
    # the edit (10) tried a change, and is the edit it made
    assert kinds == [("ToolCall", 4), ("ToolCall", 10), ("FileTouched", 10)]
    assert [e.tried for e in events if isinstance(e, ToolCall)] == [False, True]
    [session] = transcript_sessions([tmp_path / "s1.jsonl"])
    # the review answered in text is an item of its own, the lock another
    assert [[r.line for r in t.item.requests] for t in session.tasks()] == [[1], [9]]


def test_bookkeeping_alone_is_no_work_on_a_request(tmp_path: Path) -> None:
    only_books = [
        REVIEW[0],
        *_call(2, "TodoWrite", {"todos": []}, "ok"),
        *_call(4, "AskUserQuestion", {"questions": []}, "the refund path"),
        *REVIEW[7:],
    ]
    path = _write(tmp_path / "s1.jsonl", only_books)
    assert not [e for e in _events(path) if isinstance(e, ToolCall) and not e.tried]
    [session] = transcript_sessions([path])
    # nothing worked on the review: the request after it carries it on, as one item
    [task] = session.tasks()
    assert [r.title for r in task.item.requests] == [REVIEW[0]["message"]["content"], LOCK]


def test_a_subagents_calls_are_not_the_sessions(tmp_path: Path) -> None:
    asked = [REVIEW[0], _record(2, "assistant", [{"type": "text", "text": "Looking."}])]
    main = _write(tmp_path / "s1.jsonl", [*asked, *REVIEW[7:]])
    helper = [{**r, "isSidechain": True} for r in _call(50, "Read", {"file_path": "x"}, "…")]
    side = _write(tmp_path / "s1" / "subagents" / "agent-a1.jsonl", helper)
    assert not [e for e in _events(main, side) if isinstance(e, ToolCall) and not e.tried]


def _later_segment(
    events: list[Any],
    number: int = 2,
    earlier: list[Any] | None = None,
    named_before: dict[int, str] | None = None,
) -> ClosedSession:
    """Segment `number` of a session closed as idle before it, with the events of the ones
    before and the task names they stored, by line."""
    at = datetime(2026, 11, 4, 10, tzinfo=UTC)
    return ClosedSession(
        "claude_code",
        "s1",
        "s1.jsonl",
        CWD,
        "shop",
        at,
        at,
        1,
        events,
        number,
        earlier or [],
        named_before or {},
    )


def test_a_later_segment_of_tool_calls_alone_proposes_nothing() -> None:
    # the tool went on reading for a request of the segment before: nothing new to judge
    assert _later_segment([ToolCall(40)]).candidates(limit=500) == []
    asked = Request(41, "add a refund test", "add a refund test")
    assert [
        c.suggested_kind for c in _later_segment([ToolCall(40), asked]).candidates(limit=500)
    ] == [
        "project",
        "task",
    ]


def test_a_later_segment_proposes_only_its_own_work_and_names_what_began_before_as_then() -> None:
    earlier = [
        Request(3, "add a refund test", "add a refund test"),
        FileTouched(4, "tests/test_refund.py"),
        Request(9, "now document the refund flow", "now document the refund flow"),
        ToolCall(10, tried=True),  # the edit waiting for leave when the session was closed
    ]
    ours = [
        FileTouched(10, "docs/refunds.md"),  # let through after the close
        Commit(10, "a1b2c3d", "docs: the refund flow"),
        Request(14, "what does the refund job log?", "what does the refund job log?"),
        Request(20, "add a refund reason field", "add a refund reason field"),
    ]
    segment = _later_segment(ours, earlier=earlier)
    tasks = segment.tasks()
    # the refund test (earlier alone) is not proposed again; the documentation, begun before
    # and committed now, keeps the name it was proposed under, with the commit as its evidence
    assert [t.title for t in tasks] == ["now document the refund flow", "add a refund reason field"]
    assert [c.subject for c in tasks[0].item.commits] == ["docs: the refund flow"]
    assert [t.line for t in tasks] == [10, 20]  # lines of the segment, as its digest lists them
    assert [q.line for q in segment.idle_questions()] == [14]


def test_a_change_made_with_the_shell_after_an_idle_close_is_a_sighting_of_its_work() -> None:
    earlier = [Request(3, "delete the stale release branches", "delete the stale release branches")]
    ours = [ShellChange(4, "git push origin --delete release-1.2", hosted=True)]
    assert [(t.title, t.line) for t in _later_segment(ours, earlier=earlier).tasks()] == [
        ("delete the stale release branches", 4)
    ]


def _tool_calls(path: Path) -> list[tuple[int, bool]]:
    return [(e.line, e.tried) for e in _events(path) if isinstance(e, ToolCall)]


def test_git_alone_is_no_work_on_a_request_and_a_commit_tries_a_change(tmp_path: Path) -> None:
    def calls(command: str, result: str) -> list[tuple[int, bool]]:
        records = [REVIEW[0], *_call(2, "Bash", {"command": command}, result)]
        return _tool_calls(_write(tmp_path / "s1.jsonl", records))

    assert calls("git status && git log --oneline | head -5", "nothing to commit") == []
    assert calls("git add -A && git push origin main", "main -> main") == []
    assert calls("git tag v0.1.0 && git push --tags", "new tag") == [(2, False)]
    assert calls("npm test", "12 passing") == [(2, False)]
    # a commit tried: where git refused it (a hook failed) the work came to nothing
    assert calls("git commit -m 'Lock refunds'", "pre-commit hook failed") == [(2, True)]


def test_a_start_the_person_stopped_is_a_failed_start(tmp_path: Path) -> None:
    read = _call(2, "Read", {"file_path": f"{CWD}/checkout.py"}, "def pay(): ...")
    rejected = {
        "type": "tool_result",
        "tool_use_id": "t2",
        "is_error": True,
        "content": "The user doesn't want to proceed with this tool use. The tool use was rejected",
    }
    stopped = [read[0], _record(3, "user", [rejected])]
    path = _write(tmp_path / "s1.jsonl", [REVIEW[0], *stopped])
    assert _tool_calls(path) == [(2, False), (3, True)]
    interrupted = _record(4, "user", [{"type": "text", "text": "[Request interrupted by user]"}])
    path = _write(tmp_path / "s1.jsonl", [REVIEW[0], *read, interrupted])
    assert _tool_calls(path) == [(2, False), (4, True)]
    # the correction typed after it carries the same work on: one item
    correction = _record(5, "user", "wait, only the refund function, leave pay alone")
    edit = _call(6, "Edit", {"file_path": f"{CWD}/refund.py"}, "The file has been updated.")
    path = _write(tmp_path / "s1.jsonl", [REVIEW[0], *read, interrupted, correction, *edit])
    [session] = transcript_sessions([path])
    [task] = session.tasks()
    assert [r.line for r in task.item.requests] == [1, 5]


def test_a_change_on_an_mcp_server_is_a_change_tried(tmp_path: Path) -> None:
    made = _call(2, "mcp__github__create_issue", {"owner": "me", "repo": "shop"}, "#12 created")
    assert _tool_calls(_write(tmp_path / "s1.jsonl", [REVIEW[0], *made])) == [(2, True)]


def test_work_carried_over_two_idle_closes_keeps_the_name_it_was_first_proposed_under() -> None:
    # asked for in the first segment, committed in the second, edited again in the third: the
    # third proposes it under the name the first stored, not the commit's subject
    earlier = [
        Request(3, "add a refund test", "add a refund test"),
        FileTouched(4, "tests/test_refund.py"),
        Commit(10, "a1b2c3d", "test: cover partial refunds"),
    ]
    ours = [FileTouched(15, "tests/test_refund.py")]

    def third(named_before: dict[int, str]) -> list[tuple[str, int]]:
        segment = _later_segment(ours, 3, earlier, named_before)
        return [(t.title, t.line) for t in segment.tasks()]

    # the first segment proposed the request; the second a sighting of it on the commit's line
    assert third({3: "add a refund test", 10: "add a refund test"}) == [("add a refund test", 15)]
    # nothing stored on its lines (its candidate was refused): named as one reading names it
    assert third({}) == [("cover partial refunds", 15)]


def test_a_name_stored_for_the_work_an_unnamed_item_went_on_with_is_not_that_items_name() -> None:
    # "continue" (4) named nothing: the second segment proposed its edit as a sighting of the
    # refund test, on line 4; committed in the third, it is the commit's work, as one reading has it
    earlier = [
        Request(1, "add a refund test", "add a refund test"),
        FileTouched(2, "tests/test_refund.py"),
        Request(4, "continue", "continue"),
        FileTouched(5, "app/invoices.py"),
    ]
    ours = [FileTouched(8, "app/invoices.py"), Commit(9, "a1b2c3d", "feat: export invoices as csv")]
    named_before = {1: "add a refund test", 4: "add a refund test"}
    segment = _later_segment(ours, 3, earlier, named_before)
    assert [(t.title, t.line) for t in segment.tasks()] == [("export invoices as csv", 9)]
    assert segment.gathered_before() == []  # the refund test is not this work


def test_a_later_commit_gathers_what_the_segment_before_proposed_as_two_tasks() -> None:
    # the refund test was edited (4), then shipping it asked for (6) and a commit started (7);
    # the commit's result comes after the idle close: one work item, as one reading has it, that
    # keeps the first name and gathers the second
    earlier = [
        Request(3, "add a refund test", "add a refund test"),
        FileTouched(4, "tests/test_refund.py"),
        Request(6, "ship it to main on github", "ship it to main on github"),
        ToolCall(7),
    ]
    ours = [Commit(9, "a1b2c3d", "test: cover partial refunds")]
    named = {3: "add a refund test", 6: "ship it to main on github"}
    segment = _later_segment(ours, 2, earlier, named)
    assert [(t.title, t.line) for t in segment.tasks()] == [("add a refund test", 9)]
    assert segment.gathered_before() == [[3, 6]]
    # nothing stored for the shipping request (its candidate refused): nothing to gather
    assert _later_segment(ours, 2, earlier, {3: "add a refund test"}).gathered_before() == []
