"""How requests, edits and commits of a session make work items, on events built by hand: the
forms the real transcripts show rarely, or only mixed with others."""

from __future__ import annotations

import pytest

from yzos_jobs.importers.closed_session import is_candidate_title
from yzos_jobs.importers.session_events import (
    Commit,
    FileTouched,
    Request,
    ShellChange,
    ToolCall,
)
from yzos_jobs.importers.work_items import WorkItem, work_items


def _typed(line: int, title: str) -> Request:
    return Request(line, title, title)


def _command(line: int, message: str) -> Request:
    return Request(
        line, "Please analyze this codebase and create a CLAUDE.md file.", message, command=True
    )


def test_a_question_the_work_went_on_from_names_it_only_where_nothing_else_does() -> None:
    # a greeting asked first, then the project described, then "start with the schema", then
    # the edits: the item is the schema, named by the first request that asks for something
    events = [
        _typed(1, "Hello, who are you?"),
        _typed(3, "I want a system that writes OSCE lessons, how should I design it?"),
        _typed(16, "OK, start with the database schema and the base API"),
        FileTouched(17, "schema.sql"),
    ]
    [item], _ = work_items(events, runs_end_at_request=True)
    assert item.name(is_candidate_title) == (16, events[2].title, events[2])
    # questions alone: the first names it, before a short reply to it
    [asked], _ = work_items(
        [*events[:2], _typed(5, "yes please"), events[3]], runs_end_at_request=True
    )
    assert asked.name(is_candidate_title) == (1, events[0].title, events[0])


def test_a_slash_command_after_edits_joins_the_work_they_are() -> None:
    events = [
        _typed(1, "add a login form"),
        FileTouched(2, "login.py"),
        _command(3, "commit it"),
        Commit(4, "a1b2c3d", "Add the login form"),
    ]
    items, _ = work_items(events, runs_end_at_request=True)
    assert [[r.line for r in i.requests] for i in items] == [[1, 3]]


def test_a_slash_command_after_a_commit_starts_the_next_item() -> None:
    events = [
        _typed(1, "add a login form"),
        FileTouched(2, "login.py"),
        Commit(3, "a1b2c3d", "Add the login form"),
        _command(4, "init is analyzing"),
        FileTouched(5, "CLAUDE.md"),
    ]
    items, _ = work_items(events, runs_end_at_request=True)
    assert [[r.line for r in i.requests] for i in items] == [[1], [4]]


def test_a_slash_command_names_an_item_only_where_nothing_typed_does() -> None:
    events = [
        _command(1, "init is analyzing your codebase"),
        _typed(2, "then add a login form"),
        FileTouched(3, "CLAUDE.md"),
    ]
    [item], _ = work_items(events, runs_end_at_request=True)
    assert item.name(is_candidate_title) is not None
    assert item.name(is_candidate_title)[1] == "then add a login form"  # type: ignore[index]
    [alone], _ = work_items(events[:1] + events[2:], runs_end_at_request=True)
    assert alone.name(is_candidate_title)[1] == "init is analyzing your codebase"  # type: ignore[index]


def test_a_request_that_opens_with_a_question_and_then_orders_is_no_question() -> None:
    asked = ["where is the config?", "hi!\nwhy does it crash?", "Can it be faster?\nand smaller?"]
    ordered = [
        "fix the crash",
        "Is this open source?\nIt crashes sometimes: find out why and fix it.",
        "Where is the flag set? Add --skip to it.\n\nThe .envrc file is the place.",
    ]
    assert all(_typed(1, text).question for text in asked)
    assert not any(_typed(1, text).question for text in ordered)
    # an order left undone is a work item; a question left unanswered by work is not
    items, idle = work_items([_typed(1, ordered[1]), _typed(2, asked[0])])
    assert [[r.line for r in i.requests] for i in items] == [[1]]
    assert [r.line for r in idle] == [2]


def test_a_commit_of_the_one_run_of_edits_before_it_is_that_runs() -> None:
    form = [_typed(1, "add a login form"), FileTouched(2, "login.py")]
    commit = [_typed(3, "now commit it"), Commit(4, "a1b2c3d", "Add the login form")]
    items, _ = work_items([*form, *commit], runs_end_at_request=True)
    assert [([r.line for r in i.requests], [c.line for c in i.commits]) for i in items] == [
        ([1, 3], [4])
    ]
    # two runs of edits before it: a commit of them all is an item of its own
    page = [_typed(5, "add a reset page"), FileTouched(6, "reset.py")]
    items, _ = work_items([*form, *page, *commit], runs_end_at_request=True)
    assert [[r.line for r in i.requests] for i in items] == [[1], [5], [3]]
    # a run that only filed issues on the code host left nothing to commit; one that edited a
    # file with the shell did
    filed = [_typed(1, "file each finding as an issue"), ShellChange(2, "gh issue create", True)]
    items, _ = work_items([*filed, *commit], runs_end_at_request=True)
    assert [[r.line for r in i.requests] for i in items] == [[1], [3]]
    typo = [_typed(1, "fix the typo in README"), ShellChange(2, "sed -i 's/teh/the/' README.md")]
    items, _ = work_items([*typo, *commit], runs_end_at_request=True)
    assert [[r.line for r in i.requests] for i in items] == [[1, 3]]


def _lines(items: list[WorkItem]) -> list[list[int]]:
    return [[r.line for r in i.requests] for i in items]


def test_a_request_answered_after_work_on_it_is_an_item_once_the_next_asks_for_more() -> None:
    review = [_typed(1, "review the payment module for races"), ToolCall(2)]
    fix = [_typed(3, "now add a lock around the refund path"), FileTouched(4, "refund.py")]
    items, idle = work_items([*review, *fix], runs_end_at_request=True)
    assert _lines(items) == [[1], [3]] and not idle
    # a short reply ("yes do it") goes on with what it answers
    reply = [_typed(3, "yes do it"), FileTouched(4, "refund.py")]
    items, _ = work_items([*review, *reply], runs_end_at_request=True)
    assert _lines(items) == [[1, 3]]
    # nothing worked on: the request is asked for again by the next, as before
    items, _ = work_items([review[0], *fix], runs_end_at_request=True)
    assert _lines(items) == [[1, 3]]
    # aider runs no tools of its own; its requests go on until edits are applied
    items, _ = work_items([*review, *fix])
    assert _lines(items) == [[1, 3]]


def test_a_failed_start_goes_on_with_the_request_that_corrects_it() -> None:
    # the tool read, then tried an edit the person rejected (no FileTouched): the correction
    # typed after it carries the same work out
    tried = [_typed(1, "add a settings page"), ToolCall(2), ToolCall(3, True)]
    again = [_typed(4, "I rejected it by mistake, add it again"), FileTouched(5, "settings.py")]
    items, _ = work_items([*tried, *again], runs_end_at_request=True)
    assert _lines(items) == [[1, 4]]


def test_a_question_answered_after_a_look_goes_on_with_the_work_after_it() -> None:
    events = [
        _typed(1, "where is the retry policy set?"),
        ToolCall(2),
        _typed(3, "raise the retry limit to five"),
        FileTouched(4, "retry.py"),
    ]
    items, idle = work_items(events, runs_end_at_request=True)
    assert _lines(items) == [[1, 3]] and not idle
    # a question the session ends on is evidence of the session
    items, idle = work_items(events[:2], runs_end_at_request=True)
    assert not items and [q.line for q in idle] == [1]


def test_a_reply_of_four_word_units_asks_for_something_else() -> None:
    review = [_typed(1, "review the payment module for races"), ToolCall(2)]
    for reply, parted in (
        ("ok go ahead", False),
        ("now lock the refunds", True),
        ("开发继", False),  # a word unit per character of a script written without spaces
        ("加个测试", True),
    ):
        events = [*review, _typed(3, reply), FileTouched(4, "refund.py")]
        items, _ = work_items(events, runs_end_at_request=True)
        assert _lines(items) == ([[1], [3]] if parted else [[1, 3]]), reply


def test_a_request_queued_during_the_work_goes_on_with_it() -> None:
    queued = Request(3, "and check the refund module the same way", "and check…", queued=True)
    events = [
        _typed(1, "review the payment module for races"),
        ToolCall(2),
        queued,
        _typed(5, "now add a lock around the refund path"),
        FileTouched(6, "refund.py"),
    ]
    items, _ = work_items(events, runs_end_at_request=True)
    assert _lines(items) == [[1, 3], [5]]


def test_a_commit_after_a_check_of_the_work_holds_the_run_it_checked() -> None:
    events = [
        _typed(1, "add a dark mode toggle to the settings page"),
        FileTouched(2, "settings.tsx"),
        _typed(3, "run the tests and check everything passes"),
        ToolCall(4),
        _typed(5, "great, commit and push it"),
        Commit(6, "a1b2c3d", "Add a dark mode toggle"),
    ]
    [item], _ = work_items(events, runs_end_at_request=True)
    assert [r.line for r in item.requests] == [1, 3, 5] and item.commits


def test_a_command_or_output_pasted_as_the_answer_goes_on_with_the_work() -> None:
    # the tool found no such program and asked how to get it; the person answers with the
    # install command, and the work goes on
    ask = [_typed(1, "sync my settings to this machine with cc-sync"), ToolCall(2)]
    answer = _typed(3, "curl -fsSL https://example.com/cc-sync/install.sh | bash")
    events = [*ask, answer, FileTouched(4, "sync.conf")]

    def pasted(request: Request) -> bool:
        return request is answer

    items, _ = work_items(events, runs_end_at_request=True, is_answer=pasted)
    assert _lines(items) == [[1, 3]]
    # the failure the person pastes after the edits goes on with them too
    log = _typed(5, "[ERROR] sync.conf: unknown key KEEP")
    events = [*ask[:1], FileTouched(2, "sync.conf"), log, FileTouched(6, "sync.conf")]
    items, _ = work_items(events, runs_end_at_request=True, is_answer=lambda r: r is log)
    assert _lines(items) == [[1, 5]]
    # a request of the person's own asks for the next thing
    items, _ = work_items(events, runs_end_at_request=True)
    assert _lines(items) == [[1], [5]]
    items, _ = work_items([*ask, answer, FileTouched(4, "sync.conf")], runs_end_at_request=True)
    assert _lines(items) == [[1], [3]]


def test_a_commit_right_after_one_on_the_same_thing_goes_on_with_it() -> None:
    # one request, then commits in a row: the second names the derivative the first added (its
    # docs), the third names a thing of its own
    events = [
        _typed(1, "Work through the review list"),
        FileTouched(2, "R/deriv.R"),
        Commit(3, "a1", "feat: add generic derivative interface"),
        Commit(4, "b2", "docs: regenerate documentation for derivative methods"),
        Commit(5, "c3", "feat: add package citation file"),
        Commit(6, "d4", "Update tests"),  # names no one thing: an item of its own
    ]
    items, _ = work_items(events, runs_end_at_request=True)
    assert [[c.line for c in item.commits] for item in items] == [[3, 4], [5], [6]]
    # aider's watch mode the same way, where each commit follows edits of its own
    watched = [
        _typed(1, "Work through the review list"),
        FileTouched(2, "R/deriv.R"),
        Commit(3, "a1", "feat: add generic derivative interface"),
        FileTouched(4, "man/deriv.Rd"),
        Commit(5, "b2", "docs: regenerate documentation for derivative methods"),
        FileTouched(6, "CITATION.cff"),
        Commit(7, "c3", "feat: add package citation file"),
        FileTouched(8, "tests/test_deriv.R"),
        Commit(9, "d4", "Update tests"),
    ]
    items, _ = work_items(watched)
    assert [[c.line for c in item.commits] for item in items] == [[3, 5], [7], [9]]


def test_an_aider_commit_with_nothing_edited_since_the_one_before_goes_on_with_it() -> None:
    # aider commits its linter's fixes right after the reply's own commit: no edit of the
    # model's between them, so one piece of work; Claude Code commits in a row are commits the
    # person asked for one by one
    events = [
        _typed(1, "Add a variable that defines DM020"),
        FileTouched(2, "dataset_definition.py"),
        Commit(3, "a1", "feat: add QOF indicator DM020"),
        Commit(4, "b2", "style: apply linter fixes"),
        _typed(5, "Use the + operator to combine codelists"),
        FileTouched(6, "dataset_definition.py"),
        Commit(7, "c3", "refactor: combine codelists with +"),
    ]
    items, _ = work_items(events)
    assert [[c.line for c in item.commits] for item in items] == [[3, 4], [7]]
    items, _ = work_items(events, runs_end_at_request=True)
    assert [[c.line for c in item.commits] for item in items] == [[3], [4], [7]]


@pytest.mark.parametrize(
    ("before", "after", "same"),
    [
        ("add generic derivative interface", "regenerate docs for derivative methods", True),
        ("Derivative interface", "Derivative docs", True),
        ("feat: timeline rewind", "fix: keep the timeline scrolled to the end", True),
        # a kind of change, a step of a plan, a branch merged: no one thing named
        ("Implement user model", "Implement login view", False),
        ("Phase 1: the parser", "Phase 2: the printer", False),
        ("Merge branch main", "Merge branch dev", False),
        ("Update documentation", "Update dependencies", False),
        # a trailer that tags every subject alike
        ("Add timeline rewind - claude", "Add prettier as a dev dependency - claude", False),
        ("fix the parser (spotter-gqc)", "add a printer (spotter-gqc)", False),
    ],
)
def test_a_commit_after_a_commit_goes_on_only_where_it_names_the_same_thing(
    before: str, after: str, same: bool
) -> None:
    events = [Commit(1, "a1", before), Commit(2, "b2", after)]
    items, _ = work_items(events, runs_end_at_request=True)
    assert len(items) == (1 if same else 2)


def test_the_edits_between_two_commits_are_the_second_ones() -> None:
    # watch mode: a.py edited and committed, then b.py edited and committed
    events = [
        _typed(1, "Add the parser and the printer"),
        FileTouched(2, "a.py"),
        Commit(3, "a1", "Add the parser"),
        FileTouched(4, "b.py"),
        Commit(5, "b2", "Add the printer"),
    ]
    for runs_end_at_request in (False, True):
        items, _ = work_items(events, runs_end_at_request=runs_end_at_request)
        assert [[f.path for f in item.files] for item in items] == [["a.py"], ["b.py"]]
