"""Work items, not lines, on real aider histories and Claude Code transcripts: the requests that
lead to one commit or one run of applied edits are one task candidate, the rest is evidence; the
same work in a later session is a sighting of the open task. Read through the importers' own
parsing (no database: the write path is tested in tests/integration)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.corpus import (
    AQUATICAT,
    COMMITS,
    FLASK,
    HEALTH,
    MOZGOSLAV,
    REAL,
    SUPPLYCHAIN,
)
from tests.support.corpus import history as history_at
from yzos_jobs.config import load_settings
from yzos_jobs.entity import noise_filter
from yzos_jobs.importers.aider_history import history_sessions
from yzos_jobs.importers.claude_transcript import changes_on_server, typed_text, writes_file
from yzos_jobs.importers.closed_session import (
    ClosedSession,
    bounded_title,
    is_candidate_title,
    title_of,
)
from yzos_jobs.importers.same_work import OpenTaskNames
from yzos_jobs.importers.session_events import (
    Commit,
    Request,
    ShellChange,
    naming_line,
    split_prefix,
)
from yzos_jobs.importers.shell_commands import commit_subject, confirmed_commit
from yzos_jobs.importers.transcript_groups import transcript_groups
from yzos_jobs.importers.transcript_session import transcript_sessions

CONFIG = REAL.parents[2] / "config.toml"  # the shipped configuration
PGSTNDTRPRT = "aider/Awhitter__pgstndtrprt/.aider.chat.history.md"
PROTOTIPO = "aider/123pescao__Prototipo/.aider.chat.history.md"
CAR_GAME = "aider/BeauCranston__car-game/.aider.chat.history.md"
SUPPLY_CHAIN = "aider/87maxi__SupplyChainTracker2/.aider.chat.history.md"
RFP = "aider/Ahmedrali__rfp_response_platform/.aider.chat.history.md"
TAN_MAPPER = (
    "claude-code/-Users-kakarot-Self-Sandbox-tan-mapper-app/"
    "5d7c9274-0da6-40ed-a362-4f1e9e9e422a.jsonl"
)
ASSESSMENT = "aider/abhi55gp__AI-Augmented-assessment/aider.chat.history.md"
BHAVANA = "claude-code/-home-rizqymohammadz/dc7128ad-e5e3-4f3d-871e-d5e65a807546.jsonl"
RANDOM_PAGE = "claude-code/-home-da-akerud-random/a263b894-c8c2-44af-8845-663362b5a201.jsonl"
OPEN_WISPR = (
    "claude-code/-Users-mikemorgenstern-TIDR-Dropbox-TIDR-Team-Folder-RG-Collab-Admin/"
    "7d48b15d-e2d0-4b94-a40b-621ba5e8485f.jsonl"
)
QUEUE_ONLY = (
    "claude-code/-Users-ob1-projects-opus-hackathon-napoli-matcha/"
    "73c62e14-c894-4861-bf24-fb545c3739b7.jsonl"
)
TEXTLINT = (
    "claude-code/-home-nancy-src-github-com-nansystem-nancy-blog-astro/"
    "e7af5ba5-ee2f-4fa7-a3cb-843f68ff479d.jsonl"
)
GRAPH_MONITOR = (
    "claude-code/-Users-michael-Projects-oss-graph-monitor/"
    "5b539e53-47c8-4996-bc4e-3896a787c8ab.jsonl"
)
SOUND_RECORDER = (
    "claude-code/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
)
DUET = "claude-code/-Users-tslater-dev-cli-duet/7c03c5fa-7295-40f0-9dd9-ffb43edecf1f.jsonl"
MEMORY_SYNC = "claude-code/C--Users-emarquez/cc6e5a07-2800-47f0-a68e-20d094a4b5d0.jsonl"
ROUTER = "claude-code/C--Users-Mischa/ff59cfd2-09dc-4a18-8c9f-0d46c3d4e8cd.jsonl"
SKILL_LIBRARY = "claude-code/-Users-admin/bfadf251-556e-4c28-96f9-a04826eb2f82.jsonl"
AXIOM = "claude-code/-home-claude/3ded8353-4b30-42c2-b244-849aa72b2bdf.jsonl"
KAKURO = "claude-code/-tmp-test/80e27b5f-6ae5-429d-8698-523118bc4724.jsonl"
COLOSSEUM = "claude-code/-Users-reinhartsulilatu/ebb290e0-dc9b-47ec-b5a1-2c1bccc31397.jsonl"
GITHUB_ME = "claude-code/-home-ryoryo/b049dd64-f972-453e-8986-e955fee5d428.jsonl"
MOKIO = "claude-code/-Users-mokio-Project-MokioFactory/467cacaa-6d8b-4361-b30a-d1c1081e2a27.jsonl"
REJECTED_WRITES = (
    "claude-code/-Users-a111111-demo-LazyBlog-docs-posts/5df30a8e-5fb8-47cd-8227-b355aa3b4139.jsonl"
)
N8N_WORKFLOW = (
    "claude-code/-Users-user-Desktop-N8N-consultant/3d5108fd-220e-4850-9336-439aaa2e5d95.jsonl"
)
OSCE_LESSONS = "claude-code/C--Users-lu801/e11c8f12-b35d-46d2-a78b-7a2f4b9f686d.jsonl"
RUST_DATA = "claude-code/E--rust/edd84b23-72c6-469e-99b5-4ef6ece99a00.jsonl"
CC_SYNC = "claude-code/C--Users-pvp-Desktop/17aefa14-21fa-4154-b18f-c8947693ca4c.jsonl"
PERMISSIONS = (
    "claude-code/-Users-dumitruvulpe-uw-kubernetes-manifests/"
    "1c066e59-e52f-4c36-a16d-995355aff606.jsonl"
)
XCODE_TOOLS = (
    "claude-code/-Users-rashford-Library-Mobile-Documents-com-apple-CloudDocs-Developer-zoia-canvas/"
    "0377a215-8e7c-4203-ad8e-8d96e1d8f7d5.jsonl"
)


def aider(source: str) -> list[ClosedSession]:
    return history_sessions(REAL / source)


def claude(source: str) -> list[ClosedSession]:
    [group] = transcript_groups([(REAL / source).resolve()])
    return transcript_sessions(group)


def session_at(sessions: list[ClosedSession], header_line: int) -> ClosedSession:
    [found] = [s for s in sessions if s.project_line == header_line]
    return found


def test_requests_are_grouped_under_their_commit() -> None:
    first = aider(HEALTH)[0]
    [named, *_] = first.tasks()
    # two requests (the second after `/code`), one commit: one task, named by the commit
    assert named.title == "add script to check repository metrics via GitHub GraphQL API"
    assert named.item.lines() == [31, 142, 281]
    [candidate] = [c for c in first.candidates(4000) if c.source_line == 281]
    context = candidate.surrounding_text or ""
    assert "evidence lines: 31, 142, 281" in context
    assert "request (line 142): Please write a .sh file" in context
    assert "files: metrics_check.sh" in context
    assert not [c for c in first.candidates(4000) if c.source_line in (31, 142)]


def test_a_question_with_no_edit_is_evidence_of_the_session() -> None:
    [asking] = [s for s in aider(MOZGOSLAV) if any(r.line == 163 for r in s.idle_questions())]
    assert all(163 not in t.item.lines() for t in asking.tasks())
    [project] = [c for c in asking.candidates(4000) if c.suggested_kind == "project"]
    assert "asked (line 163): " in (project.surrounding_text or "")


def test_a_request_the_tool_never_carried_out_is_a_task_of_its_own() -> None:
    # the model named in the session does not exist: every request fails, nothing is edited
    failed = session_at(aider(PROTOTIPO), 26)
    [task] = failed.tasks()
    assert (task.line, task.title) == (37, "make the frontend first file with react")
    assert [r.line for r in task.item.requests] == [37, 43]  # "model" is its evidence
    assert not failed.idle_questions()


def test_a_request_in_ask_mode_with_no_edit_is_evidence() -> None:
    [asking] = [s for s in aider(CAR_GAME) if any(r.line == 34 for r in s.idle_questions())]
    [request] = [r for r in asking.idle_questions() if r.line == 34]
    assert request.asked and not request.title.endswith("?")  # `/ask what does delta …`
    assert all(34 not in t.item.lines() for t in asking.tasks())


def test_past_the_last_commit_each_request_leads_its_own_run_of_edits() -> None:
    # no commit: the plan that wrote CLAUDE.md, then a request that updated it again
    [session] = claude(TAN_MAPPER)
    assert [(t.line, [r.line for r in t.item.requests]) for t in session.tasks()] == [
        (3, [3]),
        (57, [57]),
    ]


def test_claude_code_ends_a_run_of_edits_at_the_next_request_though_a_commit_follows() -> None:
    # a pixel-art page, sound effects, then an MIT licence, committed together at the end: Claude
    # Code commits when asked, so each request that led to edits is a work item of its own
    [session] = claude(RANDOM_PAGE)
    items = [[r.line for r in t.item.requests] for t in session.tasks()]
    # 40 ("its just super beautiful / … do we need a Dockerfile?") led to no edit; the question
    # after it (46, "can you make a LICENSE file with the MIT license?") did
    assert items[:3] == [[3], [18], [40, 46]]
    # the commit closes the item it follows (the request to commit it)
    [committed] = [t for t in session.tasks() if t.item.commits]
    assert [r.line for r in committed.item.requests] == [55]
    # an edit the person rejected made nothing: the settings request (71), whose edit was
    # rejected, and "I rejected it by mistake. Add it again." (92) lead to one run of edits
    # and its commit (103), one item as labelled
    [tracked] = [s for s in claude(COMMITS) if any(e.line == 103 for e in s.events)]
    cut = {t.line: [r.line for r in t.item.requests] for t in tracked.tasks()}
    assert cut[103] == [71, 92] and 71 not in cut
    # aider commits its edits as it applies them, or its user commits a selection: four
    # requests, each followed by edits, lead to the one commit of the "Load More" button
    [more] = [t for s in aider(ASSESSMENT) for t in s.tasks() if t.line == 1770]
    assert [r.line for r in more.item.requests] == [1649, 1683, 1717, 1751]


def test_a_request_carried_out_with_shell_commands_is_a_work_item_of_its_own() -> None:
    # no file edited with the editor's tools: the dictation server restarted (`kill`), restarted
    # again (`pkill`), the app linked into /Applications (`ln -s`) and its icon set (`killall
    # Finder` to show it) are four runs of work
    [session] = claude(OPEN_WISPR)
    items = [[r.line for r in t.item.requests] for t in session.tasks()]
    assert items[:2] == [[9], [46]] and [153] in items and [168] in items
    assert items.index([168]) == items.index([153]) + 1
    # the clone into /tmp and the reading of its code changed nothing: 236 ("Is this open
    # source? Can we improve on it?" then the crashes to fix) is work asked for, not a question
    assert not session.idle_questions() and any(236 in i for i in items)
    # how the work was done is not in the digest triage reads
    assert not {e["line"] for e in session.digest_lines()} & {20, 56, 58, 156, 192}


def test_work_done_on_another_machine_over_ssh_is_a_run_of_work() -> None:
    # a router's services stopped, its packages removed and its settings changed with
    # `ssh root@… "…"`: each request that led to it is a work item of its own
    [session] = claude(ROUTER)
    requests = {t.line: [r.line for r in t.item.requests] for t in session.tasks()}
    for asked in (89, 228, 305, 406):  # modems, OpenVPN server, DDNS and others, logging
        assert requests[asked] == [asked]


def test_a_request_typed_beside_an_opened_file_is_a_request() -> None:
    # the IDE sends the opened file as a content part of its own, before the typed one
    [session] = claude(MOKIO)
    [request] = [e for e in session.events if getattr(e, "line", 0) == 3]
    assert isinstance(request, Request)
    assert request.title.startswith("我需要你把这个plan.md里的内容精简一下")


def test_a_request_typed_while_claude_code_worked_joins_the_work_in_progress() -> None:
    # "I want a cute orange style…" was typed while Claude Code planned the sticky-note app
    # (queued, line 34) and handed over within the turn as a `queued_command` attachment
    [session] = claude(STICKY)
    [queued] = [e for e in session.events if isinstance(e, Request) and e.line == 34]
    assert queued.queued and queued.title.startswith("我想要可爱的橘子风格")
    [first, *_] = session.tasks()
    assert [r.line for r in first.item.requests] == [4, 10, 34]
    # a task's notification queued the same way is no request
    assert not [e for e in session.events if e.line == 271]


def test_a_prompt_claude_code_kept_only_in_its_queue_is_a_queued_request() -> None:
    # "Ensure that … the status is always set as Backlog" was typed while the test was written:
    # Claude Code wrote it only as a queue-operation `enqueue` (line 47), then `remove`d it as it
    # handed it over ("Good point!"); it joins the work in progress
    [session] = claude(QUEUE_ONLY)
    [queued] = [e for e in session.events if isinstance(e, Request) and e.queued]
    assert queued.line == 47 and queued.title.startswith("Ensure that when")
    [first, *_] = session.tasks()
    # "Commit this test" (89) and its commit (100) are of that one run of edits: one item
    assert [r.line for r in first.item.requests] == [5, 47, 89]
    assert [c.line for c in first.item.commits] == [100]
    # background tasks' notices queued as JSON objects are none; the prompt among them is one
    [textlint] = claude(TEXTLINT)
    queued_lines = [e.line for e in textlint.events if isinstance(e, Request) and e.queued]
    assert queued_lines == [92]


def test_a_queued_prompt_rests_where_it_was_typed_however_it_was_handed_over() -> None:
    # the sticky-note transcript queued "我想要可爱的橘子风格…" (enqueue, line 34), removed it
    # from the queue (35) and handed it over as a `queued_command` attachment (38): one request,
    # on the line where it was typed
    [session] = claude(STICKY)
    orange = [e.line for e in session.events if isinstance(e, Request) and "橘子" in e.text]
    assert orange == [34]
    # a newer Claude Code writes no prompt in the queue's records and the attachment's as text
    # parts, handed over just after the queue removed it (enqueue 160, remove 165, attachment
    # 166) or just before (enqueue 431, attachment 438, remove 439): each is a request, on the
    # line where it was typed, joining the work in progress
    [riskbot] = claude(RISKBOT)
    queued = {e.line: e.text for e in riskbot.events if isinstance(e, Request) and e.queued}
    assert sorted(queued) == [160, 431]
    assert queued[160] == "eventid is in the eventid post variable"
    assert queued[431].startswith('The "Contact staff" modal should trigger a message')
    by_line = {line: t for t in riskbot.tasks() for line in t.item.lines()}
    assert by_line[160] is by_line[139] and by_line[431] is by_line[425]


def test_a_slash_command_whose_prompt_claude_code_sent_is_a_request() -> None:
    # `/init` (line 3) sends the model a prompt of Claude Code's own (an isMeta record), and
    # CLAUDE.md is written: the first work item, named by the command's message
    [session] = claude(SOUND_RECORDER)
    [first, *_] = session.tasks()
    assert (first.line, first.title) == (3, "init is analyzing your codebase…")
    assert first.item.files and all(r.command for r in first.item.requests)
    # a bare `/commit-commands:commit` after edits joins the work it commits: the commit
    # names the item it closes, no item of its own
    [duet] = claude(DUET)
    [command] = [e for e in duet.events if isinstance(e, Request) and e.line == 122]
    assert command.command and not command.queued
    [task] = [t for t in duet.tasks() if 122 in t.item.lines()]
    assert task.title == "Show full first sentence in README skill descriptions"
    assert [r.line for r in task.item.requests][-1] == 122


def test_a_bare_slash_command_is_named_by_what_its_expansion_asks_for() -> None:
    # an older Claude Code writes `/init`'s message as the bare name "init": the prompt it sent
    # the model says what was asked, and CLAUDE.md was written for it
    [session] = claude(KAKURO)
    [first, *_] = session.tasks()
    assert first.line == 2
    assert first.title.startswith("Please analyze this codebase and create a CLAUDE.md file")
    # a project's own command (`.claude/commands/github_me.md`) is named by its description
    [session] = claude(GITHUB_ME)
    [task] = [t for t in session.tasks() if t.line == 306]
    assert task.title.startswith(
        "GitHubリポジトリ https://github.com/satomaru0512/chaonannxu-me.git"
    )
    # a skill's expansion is its manual ("Base directory for this skill: …", a preamble): it
    # says what the skill is for, not what was asked of it
    [session] = claude(COLOSSEUM)
    assert [r for r in session.events if isinstance(r, Request) and r.command]
    assert not [t for t in session.tasks() if "skill" in t.title.casefold()]


def test_a_relayed_prompts_sender_is_no_part_of_the_request() -> None:
    # a chat platform relays each prompt through the Agent SDK as "[Name (email)]: …"
    [session] = claude(AXIOM)
    requests = [e for e in session.events if isinstance(e, Request)]
    assert requests and not [r for r in requests if "@" in r.text.split("\n", 1)[0][:80]]
    # "yeah ofc" is a short reply to the question before it, which names the item
    [task] = [t for t in session.tasks() if 110 in t.item.lines()]
    assert task.title.startswith("whelp rork didnt work") and task.item.lines() == [101, 110]


@pytest.mark.parametrize(
    ("message", "name", "expansion", "titled"),
    [
        ("init", "/init", "Please analyze this codebase and create a CLAUDE.md file.", True),
        ("deploy", "/deploy", "Deploy the staging stack and check its health.", True),
        # a plugin's command, a manual's heading, front matter: no request in words
        (
            "feature-dev:feature-dev",
            "/feature-dev:feature-dev",
            "Build the feature step by step.",
            False,
        ),
        ("deploy", "/deploy", "# Deploying\n\nDeploy the staging stack.", False),
        ("deploy", "/deploy", "---\ndescription: deploy\n---\nDeploy the stack.", False),
        # a message of its own names the request
        ("deploy is running…", "/deploy", "Deploy the staging stack.", False),
    ],
)
def test_a_bare_command_takes_its_expansions_first_line_only_where_it_asks_in_words(
    tmp_path: Path, message: str, name: str, expansion: str, titled: bool
) -> None:
    command = f"<command-message>{message}</command-message>\n<command-name>{name}</command-name>"
    sent = json.loads(_transcript_record(2, "user", [{"type": "text", "text": expansion}], CWD))
    sent["isMeta"] = True
    path = tmp_path / "s1.jsonl"
    lines = [_transcript_record(1, "user", command, CWD), json.dumps(sent)]
    path.write_text("\n".join(lines) + "\n")
    [group] = transcript_groups([path])
    [session] = transcript_sessions(group)
    [request] = [e for e in session.events if isinstance(e, Request)]
    first = expansion.split("\n", 1)[0]
    assert (request.line, request.command) == (1, True)
    assert (request.title == first) is titled


@pytest.mark.parametrize(
    ("prompt", "typed"),
    [
        ("[Ann Lee (ann@example.com)]: add a login page", "add a login page"),
        ("[Ann Lee (ann@example.com)]:\nadd a login page", "add a login page"),
        ("[Ann Lee (ann@example.com)]: [Request interrupted by user]", ""),
        # no sender's address in brackets: the person's own words
        ("[@here]: please deploy", "[@here]: please deploy"),
        ("[email me@example.com]: the invoice", "[email me@example.com]: the invoice"),
    ],
)
def test_a_relayed_prompts_sender_is_left_out_of_what_was_typed(prompt: str, typed: str) -> None:
    assert typed_text(prompt) == typed


def test_an_empty_turn_claude_code_filled_in_is_no_request() -> None:
    # Claude Code writes "(no content)" for a turn with no text (line 503)
    [session] = claude(GRAPH_MONITOR)
    assert not [e for e in session.events if isinstance(e, Request) and e.line == 503]
    assert all(t.title != "(no content)" for t in session.tasks())


def test_a_pasted_powershell_prompt_names_no_work_item() -> None:
    # "PS C:\Users\…\scripts> .\setup-project-memory-sync.ps1" and the script's output, pasted
    [session] = claude(MEMORY_SYNC)
    [pasted] = [e for e in session.events if isinstance(e, Request) and e.line == 49]
    assert pasted.title.startswith("PS C:") and noise_filter.looks_pasted(pasted.title)
    assert all(t.line != 49 for t in session.tasks())


CWD = "/home/me/shop"


def _transcript_record(n: int, kind: str, content: list[dict[str, object]] | str, cwd: str) -> str:
    """Line `n` of a one-session Claude Code transcript: a user or assistant turn."""
    return json.dumps(
        {
            "uuid": f"u{n}",
            "sessionId": "s1",
            "cwd": cwd,
            "type": kind,
            "message": {"role": kind, "content": content},
            "timestamp": f"2026-11-04T10:00:{n:02d}Z",
        }
    )


def test_text_typed_beside_a_tool_result_is_a_queued_request(tmp_path: Path) -> None:
    # older Claude Code wrote a prompt typed while a tool ran beside the tool's result
    def record(n: int, kind: str, content: list[dict[str, object]]) -> str:
        return _transcript_record(n, kind, content, "/home/me/shop")

    edit = {"file_path": "/home/me/shop/cart.py", "old_string": "a", "new_string": "b"}
    call = {"type": "tool_use", "id": "t1", "name": "Edit", "input": edit}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "The file was updated"}
    path = tmp_path / "s1.jsonl"
    path.write_text(
        "\n".join(
            [
                record(1, "user", [{"type": "text", "text": "Add a cart page"}]),
                record(2, "assistant", [call]),
                record(
                    3,
                    "user",
                    [
                        result,
                        {"type": "text", "text": "also show the cart's total"},
                    ],
                ),
                record(4, "user", [{"type": "text", "text": "Now write the checkout page"}]),
            ]
        )
        + "\n"
    )
    [group] = transcript_groups([path])
    [session] = transcript_sessions(group)
    requests = [e for e in session.events if isinstance(e, Request)]
    assert [(r.line, r.queued) for r in requests] == [(1, False), (3, True), (4, False)]
    assert [[r.line for r in t.item.requests] for t in session.tasks()] == [[1, 3], [4]]


def _queue_record(n: int, operation: str, content: str | None = None) -> str:
    record = {"type": "queue-operation", "operation": operation, "sessionId": "s1"}
    record["timestamp"] = f"2026-11-04T10:00:{n:02d}Z"
    if content is not None:
        record["content"] = content
    return json.dumps(record)


def _handed_over(n: int, prompt: str) -> str:
    """A `queued_command` attachment carrying `prompt` as text parts (newer Claude Code)."""
    attachment = {
        "type": "queued_command",
        "prompt": [{"type": "text", "text": prompt}],
        "commandMode": "prompt",
    }
    return json.dumps(
        {
            "uuid": f"u{n}",
            "sessionId": "s1",
            "cwd": "/home/me/shop",
            "type": "attachment",
            "attachment": attachment,
            "timestamp": f"2026-11-04T10:00:{n:02d}Z",
        }
    )


def _queued_requests(tmp_path: Path, lines: list[str]) -> list[tuple[int, str, bool]]:
    path = tmp_path / "s1.jsonl"
    path.write_text("\n".join(lines) + "\n")
    [group] = transcript_groups([path])
    [session] = transcript_sessions(group)
    return [(e.line, e.text, e.queued) for e in session.events if isinstance(e, Request)]


def test_a_queued_prompt_and_a_later_turn_of_the_same_words_are_two_requests(
    tmp_path: Path,
) -> None:
    # "commit and push it" typed while the page was written, and typed again once it was done
    edit = {"file_path": "/home/me/shop/cart.py", "old_string": "a", "new_string": "b"}
    call = {"type": "tool_use", "id": "t1", "name": "Edit", "input": edit}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "The file was updated"}
    requests = _queued_requests(
        tmp_path,
        [
            _transcript_record(1, "user", [{"type": "text", "text": "build the cart page"}], CWD),
            _transcript_record(2, "assistant", [call], CWD),
            _queue_record(3, "enqueue", "commit and push it"),
            _queue_record(4, "remove"),
            _handed_over(5, "commit and push it"),
            _transcript_record(6, "user", [result], CWD),
            _transcript_record(7, "user", [{"type": "text", "text": "commit and push it"}], CWD),
        ],
    )
    assert requests == [
        (1, "build the cart page", False),
        (3, "commit and push it", True),
        (7, "commit and push it", False),
    ]


# Queue records after the request "build the header" (line 1), as (operation, prompt): an
# `enqueue` with or without its prompt, a `remove`, or the `attachment` that hands one over.
QUEUED_CASES = {
    # an older version's prompt the queue alone handed over (no attachment after its removal),
    # then two of a newer version's, each carried before the queue removed it
    "each pairs with its own record": (
        [
            ("enqueue", "also add a checkout button"),
            ("remove", None),
            ("enqueue", None),
            ("attachment", "make the header blue"),
            ("remove", None),
            ("enqueue", None),
            ("attachment", "make the footer green"),
            ("remove", None),
        ],
        [
            (2, "also add a checkout button"),
            (4, "make the header blue"),
            (7, "make the footer green"),
        ],
    ),
    # Claude Code's `(no content)` of an empty turn, and a background task's notice (a JSON
    # object), queued and handed over like typed prompts: no requests
    "empty or machine-written": (
        [
            ("enqueue", "(no content)"),
            ("remove", None),
            ("enqueue", None),
            ("attachment", "(no content)"),
            ("remove", None),
            ("enqueue", None),
            ("attachment", '{"task": "lint", "status": "done"}'),
            ("remove", None),
        ],
        [],
    ),
}


@pytest.mark.parametrize(("records", "queued"), QUEUED_CASES.values(), ids=QUEUED_CASES.keys())
def test_queued_prompts_as_claude_code_writes_them(
    tmp_path: Path, records: list[tuple[str, str | None]], queued: list[tuple[int, str]]
) -> None:
    lines = [_transcript_record(1, "user", [{"type": "text", "text": "build the header"}], CWD)]
    for n, (operation, prompt) in enumerate(records, start=2):
        if operation == "attachment":
            assert prompt is not None
            lines.append(_handed_over(n, prompt))
        else:
            lines.append(_queue_record(n, operation, prompt))
    requests = _queued_requests(tmp_path, lines)
    assert requests == [(1, "build the header", False), *((n, t, True) for n, t in queued)]


def test_a_process_managers_log_pasted_alone_goes_on_with_the_work_before() -> None:
    # pm2's log of the bot's crash (`0|riskbot  |   status: 403,` …), pasted with no words after
    # the migration of events 180 and 182: the failure of that work, named by no log line
    [riskbot] = claude(RISKBOT)
    by_line = {n: t for t in riskbot.tasks() for i in [t.item, *t.evidence] for n in i.lines()}
    assert by_line[288] is by_line[192]
    assert not [t for t in riskbot.tasks() if "|" in t.title]


def _edit_then_shell(
    tmp_path: Path, cwd: str, request: str, edited: str, tool: str, command: str, printed: str
) -> ClosedSession:
    """The one session of a transcript: a request, an edit, then one shell call and its result
    (records 1 to 5)."""
    edit = {"file_path": edited, "old_string": "a", "new_string": "b"}
    calls = [
        {"type": "tool_use", "id": "t1", "name": "Edit", "input": edit},
        {"type": "tool_use", "id": "t2", "name": tool, "input": {"command": command}},
    ]
    results = [
        {"type": "tool_result", "tool_use_id": "t1", "content": "The file was updated"},
        {"type": "tool_result", "tool_use_id": "t2", "content": printed},
    ]
    records = [
        [{"type": "text", "text": request}],
        calls[:1],
        results[:1],
        calls[1:],
        results[1:],
    ]
    path = tmp_path / "s1.jsonl"
    path.write_text(
        "\n".join(
            _transcript_record(n, "assistant" if n % 2 == 0 else "user", content, cwd)
            for n, content in enumerate(records, start=1)
        )
        + "\n"
    )
    [group] = transcript_groups([path])
    [session] = transcript_sessions(group)
    return session


def test_a_commit_made_through_powershell_is_a_commit(tmp_path: Path) -> None:
    # Claude Code on Windows runs shell commands with its PowerShell tool: git is called as in
    # Bash, and its result shows the commit as git prints it
    # in the shop's web folder; the message quoted PowerShell's way, with backticks
    command = (
        'Push-Location "C:\\Users\\me\\shop\\web"\ngit add -A\n'
        '$out = git commit -m "Add the `"cart`" page"\nPop-Location\nWrite-Output $out 2>$null'
    )
    printed = '[main 3f9c2ab] Add the "cart" page\n 1 file changed, 1 insertion(+)'
    session = _edit_then_shell(
        tmp_path,
        "C:\\Users\\me\\shop",
        "make a page for the cart",
        "C:\\Users\\me\\shop\\cart.py",
        "PowerShell",
        command,
        printed,
    )
    [commit] = [e for e in session.events if isinstance(e, Commit)]
    assert (commit.line, commit.sha, commit.subject) == (4, "3f9c2ab", 'Add the "cart" page')
    [task] = session.tasks()
    assert task.title == 'Add the "cart" page' and task.item.lines() == [1, 4]
    # its git ran in the folder PowerShell pushed, where the session's only commit is
    assert session.project_path == "C:\\Users\\me\\shop\\web"


def test_each_commit_of_one_shell_call_is_a_commit(tmp_path: Path) -> None:
    # one Bash call commits the API in the repository and the docs in its submodule, in turn
    command = (
        "git add api.py && git commit -m \"$(cat <<'EOF'\nAdd the orders API\n\n"
        "GET and POST /orders\nEOF\n)\" && cd docs && git add -A && git commit -F - <<'EOF'\n"
        "Document the checkout flow\nEOF"
    )
    printed = (
        "[main 1a2b3c4] Add the orders API\n 1 file changed, 9 insertions(+)\n"
        "[main 5d6e7f8] Document the checkout flow\n 1 file changed, 4 insertions(+)"
    )
    session = _edit_then_shell(
        tmp_path,
        "/home/me/shop",
        "add an orders API and document it",
        "/home/me/shop/api.py",
        "Bash",
        command,
        printed,
    )
    commits = [e for e in session.events if isinstance(e, Commit)]
    assert [(c.line, c.sha, c.subject, c.body) for c in commits] == [
        (4, "1a2b3c4", "Add the orders API", "GET and POST /orders"),
        (4, "5d6e7f8", "Document the checkout flow", ""),
    ]
    # a commit after a commit is the next work item
    assert [t.title for t in session.tasks()] == [
        "Add the orders API",
        "Document the checkout flow",
    ]
    assert session.project_path == "/home/me/shop"


@pytest.mark.parametrize(
    ("command", "printed", "commits"),
    [
        # the first had nothing to commit: the one made is named as git printed it
        (
            'git commit -m "Add the API"; cd docs && git commit -m "Document checkout"',
            "nothing to commit, working tree clean\n[main 5d6e7f8] Document checkout",
            [("5d6e7f8", "Document checkout")],
        ),
        # an amend replaces the commit before it
        (
            'git commit -m "Add API" && git commit --amend -m "Add the REST endpoints for orders"',
            "[main 1a2b3c4] Add API\n[main 9e8d7c6] Add the REST endpoints for orders",
            [("9e8d7c6", "Add the REST endpoints for orders")],
        ),
        # a line another command printed alike is no commit of the call's
        (
            'git commit -m "Add the login page" && git rebase -i HEAD~3 && '
            'git commit -m "Tidy the imports"',
            "[main 1a2b3c4] Add the login page\n[detached HEAD 9999999] Squashed: an experiment\n"
            "[main 5d6e7f8] Tidy the imports",
            [("1a2b3c4", "Add the login page"), ("5d6e7f8", "Tidy the imports")],
        ),
        (
            'cat notes.txt && git commit -m "Add the login page"',
            "[release deadbeef] a line of the notes\n[main 1a2b3c4] Add the login page",
            [("1a2b3c4", "Add the login page")],
        ),
    ],
)
def test_the_commits_one_shell_call_made_are_those_git_printed(
    tmp_path: Path, command: str, printed: str, commits: list[tuple[str, str]]
) -> None:
    session = _edit_then_shell(
        tmp_path,
        "/home/me/shop",
        "add an orders API",
        "/home/me/shop/api.py",
        "Bash",
        command,
        printed,
    )
    made = [(e.sha, e.subject) for e in session.events if isinstance(e, Commit)]
    assert made == commits
    assert [t.title for t in session.tasks()] == [subject for _, subject in commits]


@pytest.mark.parametrize(
    ("stats", "error", "edited"),
    [
        ({"readCount": 4, "editFileCount": 3, "linesAdded": 80, "linesRemoved": 2}, False, True),
        ({"readCount": 9, "editFileCount": 0, "linesAdded": 0, "linesRemoved": 0}, False, False),
        ({"readCount": 4, "editFileCount": 3, "linesAdded": 80, "linesRemoved": 2}, True, False),
        (None, False, False),  # an older version counts nothing: not known to have edited
    ],
)
def test_a_subagents_edits_are_the_work_of_the_call_that_ran_it(
    tmp_path: Path, stats: dict[str, int] | None, error: bool, edited: bool
) -> None:
    call = {
        "type": "tool_use",
        "id": "t1",
        "name": "Agent",
        "input": {"description": "Build the bundle editor", "prompt": "…"},
    }
    result = json.loads(
        _transcript_record(
            3, "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "Done."}], CWD
        )
    )
    result["message"]["content"][0]["is_error"] = error
    if stats is not None:
        result["toolUseResult"] = {"status": "completed", "agentId": "a1", "toolStats": stats}
    path = tmp_path / "s1.jsonl"
    lines = [
        _transcript_record(1, "user", [{"type": "text", "text": "build the bundle editor"}], CWD),
        _transcript_record(2, "assistant", [call], CWD),
        json.dumps(result),
    ]
    path.write_text("\n".join(lines) + "\n")
    [group] = transcript_groups([path])
    [session] = transcript_sessions(group)
    changes = [e for e in session.events if isinstance(e, ShellChange)]
    assert [(c.line, c.command) for c in changes] == (
        [(2, "Agent: Build the bundle editor")] if edited else []
    )


def test_work_subagents_did_is_an_item_of_its_own_before_a_commit_of_later_work() -> None:
    # requests 111 and 136 were carried out by subagents (the main transcript shows no edit):
    # items of their own, not requests the later commit of the first run's edits holds
    [session] = claude(SKILL_LIBRARY)
    by_line = {t.line: t.item.lines() for t in session.tasks()}
    assert by_line[111] == [111] and by_line[136] == [136]
    assert by_line[191] == [163, 191]


def test_a_multi_line_request_with_a_pasted_log_is_one_request_named_by_its_commit() -> None:
    session = session_at(aider(PGSTNDTRPRT), 2591)
    # one request of 640 lines (code, pip output, a traceback), then the edits and a commit
    [task] = session.tasks()
    assert task.title == "Update requirements.txt and create nclex_dashboard.py"
    assert task.item.lines() == [2601, 3245]
    assert [r.line for r in task.item.requests] == [2601]


def test_commits_in_a_row_are_work_items_of_their_own() -> None:
    # watch mode: `AI!` comments committed one after another, no request between them
    titles = [t.title for s in aider(AQUATICAT) for t in s.tasks()]
    assert "Reorganize exports in index.ts" in titles
    assert "Clean up comments in index" not in titles  # a snapshot of the user's own edits


def test_one_work_item_continued_in_a_second_session_is_one_task() -> None:
    names = OpenTaskNames(threshold=load_settings(CONFIG).importers.same_task_similarity)
    seen: dict[int, str] = {}
    for session in aider(SUPPLYCHAIN):
        for task in session.tasks():
            seen[task.line] = names.same_work(session.project_path, task.title) or task.title
    # a later session asks again, in other words, for the role approval its commit made
    assert seen[4632] == "Añadir funcionalidad de aprobación de roles para admins"
    assert seen[5020] == seen[4632]  # "agregar funcionalidad de aprobación de roles para …"


def test_claude_code_commits_name_their_work_items() -> None:
    sessions = claude(COMMITS)
    titles = {t.title for s in sessions for t in s.tasks()}
    subjects = [e.subject for s in sessions for e in s.events if isinstance(e, Commit)]
    assert len(subjects) == 6 and all(split_prefix(c)[1] in titles for c in subjects)


SPOTTER = (
    "claude-code/-home-USER-projects-spotter-worktrees-spotter-gqc/"
    "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)


def test_a_gitmoji_before_the_conventional_prefix_goes_with_the_prefix() -> None:
    # the repository's log, as `git log --oneline` printed it in the session
    log = (REAL / SPOTTER).read_text(encoding="utf-8")
    subjects = {m.split(" ", 1)[1] for m in re.findall(r"[0-9a-f]{7} [^\\\n]+", log)}
    assert "🐛 fix(config): add Phoenix.CodeReloader listener to resolve 1.8.3 warning" in subjects
    assert split_prefix(
        "🐛 fix(config): add Phoenix.CodeReloader listener to resolve 1.8.3 warning"
    ) == ("fix(config)", "add Phoenix.CodeReloader listener to resolve 1.8.3 warning")
    assert split_prefix(":sparkles: feat: add the export") == ("feat", "add the export")
    assert split_prefix("✨ Add the export") == (None, "✨ Add the export")  # no type: all name
    assert split_prefix("→ note: the export") == (None, "→ note: the export")  # an arrow, no emoji


def test_a_long_name_cut_inside_a_quotation_drops_the_open_quote(tmp_path: Path) -> None:
    first = aider(HEALTH)[0]
    request = next(e for e in first.events if getattr(e, "line", 0) == 31)
    text = f'Rename the check "{request.text}"'  # a real request, quoted past the bound
    title = bounded_title(text)
    assert title == "Rename the check…"


def test_a_quotation_cut_at_the_bound_with_one_word_before_it_keeps_its_words() -> None:
    # `claude "/roast-my-product Bhavana is …"` typed at the prompt, past the bound
    [session] = claude(BHAVANA)
    [roast] = [e for e in session.events if isinstance(e, Request) and e.line == 63]
    assert roast.title.startswith("claude /roast-my-product Bhavana is a Solana dApp")
    assert roast.title.endswith("…") and '"' not in roast.title
    assert is_candidate_title(roast.title)


def test_a_request_opening_with_a_greeting_is_named_by_its_next_line() -> None:
    [session] = claude(RANDOM_PAGE)
    [first] = [e for e in session.events if isinstance(e, Request) and e.line == 3]
    assert first.text.startswith("hi!\n")
    assert first.title == 'were in a new folder called "random"'
    assert session.tasks()[0].title == first.title
    # only a greeting gives way: a one-word request keeps its first line ("continue" goes on
    # with the work before it), and the line after a greeting says whether it is a question
    assert title_of("continue\nError: no such table: users") == "continue"
    assert title_of("Hello,\n# Plan: Cache the exchange rates") == "Plan: Cache the exchange rates"
    assert Request(1, "hi!\nwhat does the retry loop do?", "").question


OBSTRUCT = "claude-code/-home-aster-dev-rust-Obstruct/9a7f5d33-0812-48d5-9400-0106ee71fbde.jsonl"
BOLLYWOOD = (
    "claude-code/-home-sanand-code-datastories-worktree-bolly2-bollywood-top-grossing/"
    "b90b1f0d-a621-4cd9-ab50-9f3bb6ff4c35.jsonl"
)


def test_a_request_opening_with_a_lead_in_is_named_by_the_line_it_leads_into() -> None:
    # "Could you...", then a numbered list of what to do; the session edited files, no commit
    [session] = claude(OBSTRUCT)
    [request] = [e for e in session.events if isinstance(e, Request) and e.line == 13]
    assert request.text.startswith("Could you...\n\n1. Add a feature")
    assert request.title.startswith("Could you... Add a feature where having a '@' just before")
    assert request.title in [t.title for t in session.tasks()]
    # "1. Fix this error:", then the error pasted from the browser's console
    [session] = claude(BOLLYWOOD)
    [fix] = [e for e in session.events if isinstance(e, Request) and e.line == 77]
    assert fix.title == (
        "Fix this error: Uncaught (in promise) TypeError: d3.easeElastic.out is not a function"
    )
    # a line that says what it asks for is no lead-in, whatever it ends with; nor is a lead-in
    # with nothing after it
    asks = "Set the upload timeout in the deploy settings to a minute:"
    assert title_of(f"{asks}\nUPLOAD_TIMEOUT=60") == asks
    assert title_of("Could you...") == "Could you..."
    # one word before the colon labels what was pasted after it
    assert title_of("Q:\nUsing Arch Linux, Neovim") == "Q:"
    # what leads on is the next line with words of its own: not a fence, the lead-in typed
    # again, invisible characters or one pasted token
    assert (
        title_of("Could you...\n```\nCould you...\n\u200b\nadd paging") == "Could you... add paging"
    )
    assert title_of("Fix this error:\n" + "x" * 100_000) == "Fix this error:"


TEAMROOM = "claude-code/W--code-skissify/b6963175-1890-42ed-9769-28100d137f0b.jsonl"


def test_a_request_framed_in_a_drawn_banner_is_named_by_the_banners_words() -> None:
    # a machine-written prompt opening with a box drawn in box-drawing characters (`╔═══╗`,
    # `║ TEAMROOM SESSION - CODING ║`, `╚═══╝`), then the topic; the session edited files
    [session] = claude(TEAMROOM)
    [request] = [e for e in session.events if isinstance(e, Request)]
    assert request.text.startswith("\u2554\u2550")
    assert request.title == "TEAMROOM SESSION - CODING"
    [task] = session.tasks()
    assert task.title == request.title
    # a rule or a comment's opening above the words is drawn too; a request of drawn lines
    # alone is named by its first
    assert naming_line("-----\n\nadd the export button") == "add the export button"
    assert title_of("/**\n * retry the upload three times\n */") == "retry the upload three times"
    assert naming_line("...") == "..."


TRACES = (
    "claude-code/-Users-jessitron-code-jessitron-race/c1fe70c7-776f-453b-bda9-d59c477f41d9.jsonl"
)
OPEN_SUBTITLES = "aider/jayrinaldime__open-subtitles/aider/chat_history.md"


def test_a_request_wrapped_by_a_terminal_or_an_editor_is_named_as_typed() -> None:
    # an editor wrapped a plan's first sentence: "… to Honeycomb instead of" / "console output."
    [session] = claude(TRACES)
    [plan] = [e for e in session.events if isinstance(e, Request) and e.line == 8]
    assert plan.title == (
        "The FastCart simulator is built and working. Now I need to send traces to Honeycomb "
        "instead of console output."
    )
    # a terminal wrapped a pasted paragraph at its width; typed on one line, it is the same work
    wrapped = next(
        e
        for s in aider(OPEN_SUBTITLES)
        for e in s.events
        if isinstance(e, Request) and e.line == 980
    )
    one_line = title_of(" ".join(wrapped.text.split()))
    assert wrapped.title.startswith("Currently to use the app, user will have to click")
    assert "Only then will backend process the audio" in wrapped.title
    names = OpenTaskNames(threshold=load_settings(CONFIG).importers.same_task_similarity)
    assert names.same_work("/open-subtitles", one_line) is None
    assert names.same_work("/open-subtitles", wrapped.title) == one_line
    # pasted text is not prose: a log's next line is its own, as is the mode prompt aider shows
    # before a continued line ("how was the" / "architect> earlier implementation?")
    [session] = claude(OPENCLAW_CONFIG)
    [error] = [e for e in session.events if isinstance(e, Request) and e.line == 3]
    assert error.text.splitlines()[1].strip().startswith("at ")
    assert error.title == naming_line(error.text)
    asked = next(
        e
        for s in aider(PDF_INGESTION)
        for e in s.events
        if isinstance(e, Request) and e.line == 6326
    )
    assert asked.title.endswith("how was the")


OPENCLAW_CONFIG = "claude-code/C--Users-ASUS/51009651-f2b3-404d-bfdd-63ecf3e334bd.jsonl"
PLAYWRIGHT = (
    "claude-code/d--16---------files-playwright-test-automation-complete/"
    "82ebfb0b-ead0-4842-b8d4-3e92faa321f7.jsonl"
)


def test_a_request_written_as_a_numbered_list_is_named_by_its_first_item_not_its_number() -> None:
    # "1. shadcn로 리팩토링.\n2. …": refactor with shadcn, then a second thing
    [session] = claude(PLAYWRIGHT)
    [listed] = [e for e in session.events if isinstance(e, Request) and e.line == 155]
    assert listed.text.startswith("1. shadcn")
    assert listed.title == "shadcn로 리팩토링."
    assert title_of("- Add a page for:\n  - the orders") == "Add a page for: the orders"
    assert title_of("2024. It was the year") == "2024. It was the year"  # a year, not a mark


CAREER_OS = "aider/djha786543-gif__career-os-v2/backend/.aider.chat.history.md"


def test_a_moved_history_takes_the_repository_a_run_command_changed_into(tmp_path: Path) -> None:
    # committed into another repository; the second session only shows where it ran in
    # `/run cd /Users/…/assignment_3/backend && …`, and aider edited `backend/app/…`
    history = history_at(tmp_path, RFP)
    sessions = history_sessions(history)
    assert sessions[1].project_path == "/Users/ahmedali/Optomatica/aider_assignments/assignment_3"
    # the first session (aider upgrading itself) shows nothing: it was written in the same place
    assert sessions[0].project_path == sessions[1].project_path
    (history.parent / ".git").mkdir()
    assert history_sessions(history)[1].project_path == str(history.parent)


def test_a_moved_history_takes_the_repository_its_printed_paths_show(tmp_path: Path) -> None:
    # committed into `backend/` of another repository: no `.git` beside it, and aider printed
    # `Repo-map can't include C:\…\career-os-backend\v2`, a path of the repository it ran in
    history = history_at(tmp_path, CAREER_OS)
    repositories = {s.project_path for s in history_sessions(history)}
    assert repositories == {r"C:\Users\DJ\Desktop\career\files (33)\career-os-backend"}
    (history.parent / ".git").mkdir()  # where it sits is a repository's root after all
    assert {s.project_path for s in history_sessions(history)} == {str(history.parent)}


SMART_FACTORY = "aider/vaibhavsunkaria97__smart-factory-agent/docs/aider_transcript.md"


def test_a_moved_history_takes_the_folder_of_the_virtualenv_aider_ran_from(tmp_path: Path) -> None:
    # kept in `docs/` of its repository under another name; each session shows only `Git repo:
    # .git` and how aider was started: `C:\Users\Vaibhav\smart-factory-agent\.venv\Scripts\aider`
    # (five also the files of commits that failed, `--no-verify -- C:\Users\Vaibhav\…\x.py`)
    history = history_at(tmp_path, SMART_FACTORY)
    sessions = history_sessions(history)
    assert len(sessions) == 14
    where = r"C:\Users\Vaibhav\smart-factory-agent"
    assert {s.project_path for s in sessions} == {where}
    assert {s.project for s in sessions} == {"smart-factory-agent"}
    # where it sits is a repository's root after all: the sessions that show nothing of their own
    # were written there
    (history.parent / ".git").mkdir()
    assert {s.project_path for s in history_sessions(history)} == {where, str(history.parent)}
    # a virtual environment in no project's folder says nothing of one
    shared = history.parent / "shared.md"
    text = re.sub(r" --no-verify -- .*", "", history.read_text(encoding="utf-8"))
    shared.write_text(text.replace(where, r"C:\Users\Vaibhav"))
    (history.parent / ".git").rmdir()
    assert {s.project_path for s in history_sessions(shared)} == {str(history.parent)}


BHFARA = "aider/Arjo67-tech__black-hole-faraday-reconstruction-/.aider.chat.history.md"
STOCK_MONITOR = "aider/SuperKMan__stock-monitor-ai/.aider.chat.history.md"


BOOKLENS = "aider/DrDevEli__booklensapp/.aider.chat.history.md"


def test_a_session_that_shows_nothing_is_where_the_repository_is_now(tmp_path: Path) -> None:
    # the first session shows `/Users/…/Desktop/booksServiceApi`; the folder was renamed
    # `booklensapp` before the second, and the others show no folder of their own
    history = history_at(tmp_path, BOOKLENS)
    old = "/Users/emdesenvolvimento/Desktop/booksServiceApi"
    assert {s.project_path for s in history_sessions(history)} == {old}
    # in the repository (its `.git` beside the history) they were written where it is now
    (history.parent / ".git").mkdir()
    first, *later = history_sessions(history)
    assert first.project_path == old
    assert {s.project_path for s in later} == {str(history.parent)}


def test_a_moved_history_takes_the_repository_its_read_only_files_show(tmp_path: Path) -> None:
    # written in `/home/pc30/bhfara` (every session prints `Git repo: .git`) and committed as a
    # repository of another name; later sessions add `/home/pc30/bhfara/coeffs.py` read-only, a
    # file an earlier session edited as `coeffs.py`
    history = history_at(tmp_path, BHFARA)
    assert {s.project_path for s in history_sessions(history)} == {"/home/pc30/bhfara"}
    (history.parent / ".git").mkdir()
    assert {s.project_path for s in history_sessions(history)} == {str(history.parent)}


def test_a_moved_history_takes_the_repository_a_pasted_traceback_shows(tmp_path: Path) -> None:
    # only a traceback the user pasted shows where it ran: `File "D:\Work_AI\ollama_fc\app.py",
    # line 23`, and aider edited `app.py`; frames in the virtualenv's site-packages are a library's
    history = history_at(tmp_path, STOCK_MONITOR)
    assert {s.project_path for s in history_sessions(history)} == {"D:\\Work_AI\\ollama_fc"}


SENIALES = "aider/Blizard32__seniales/.aider.chat.history.md"


def test_a_moved_history_takes_the_repository_aiders_failed_git_commands_show(
    tmp_path: Path,
) -> None:
    # the only absolute paths the history prints are in git commands aider ran and printed as
    # they failed: `cmdline: git add C:\Users\Mi Notebook\…\seniales\seniales\test\…py`,
    # files it edited as `seniales\test\…py` from the root; moved into a folder of another name
    laid = history_at(tmp_path, SENIALES)
    history = tmp_path / "moved" / laid.name
    history.parent.mkdir()
    laid.rename(history)
    where = r"C:\Users\Mi Notebook\Desktop\Feli\Programming\seniales"
    assert {s.project_path for s in history_sessions(history)} == {where}
    (history.parent / ".git").mkdir()  # where it sits is a repository's root after all
    assert {s.project_path for s in history_sessions(history)} == {where, str(history.parent)}


POKETIBIA = "aider/BrunoAguiar-A__Poketibiazero/server/.aider.chat.history.md"


def test_a_moved_history_takes_the_folder_its_repositorys_files_spread_out_from(
    tmp_path: Path,
) -> None:
    # nothing edited or named from the root; aider's first scan of the repository could not
    # decode twenty of its files, printed as `/root/SERVER/OTCLIENT POKEWARDEN/data/…` and
    # `/root/SERVER/data/actions/…`; the sessions that print nothing go with the file
    history = history_at(tmp_path, POKETIBIA)
    assert {s.project_path for s in history_sessions(history)} == {"/root/SERVER"}


POCKETFLOW = "aider/BjornNordblom__pocketflow-text2sql-gui/.aider.chat.history.md"


def test_a_repository_aider_created_is_where_it_says_it_created_it(tmp_path: Path) -> None:
    # `Git repository created in C:\temp\pocketflow-text2sql`, then `Git repo: .git`: the
    # history was committed to a repository of another name
    history = history_at(tmp_path, POCKETFLOW)
    assert {s.project_path for s in history_sessions(history)} == {r"C:\temp\pocketflow-text2sql"}


ITEM_INFO = "aider/abestein__item_info/.aider.chat.history.backup.md"


def test_aiders_own_output_pasted_back_at_the_prompt_is_no_request() -> None:
    # the start-up block aider had just printed (`Using … model with API key from environment.`,
    # `Aider v0.86.1`, `Main model: …`), pasted back one line at a time
    pasted = session_at(aider(ITEM_INFO), 5483)
    printed = {line.removeprefix("> ").strip() for line in _lines(ITEM_INFO)[5484:5494]}
    typed = {e.line: e.text for e in pasted.events if isinstance(e, Request)}
    assert {
        _lines(ITEM_INFO)[n - 1].removeprefix("#### ").strip() for n in (5516, 5526, 5536)
    } <= printed
    assert not {5516, 5526, 5536} & typed.keys()
    assert not pasted.tasks()


MYPROJEC = "aider/AlosMarkets__myproject/.aider.chat.history.md"
STICKY = "claude-code/-Users-admin-Desktop/bd282509-c6ca-4b2e-ad2d-3d9cd0bb8be5.jsonl"
RISKBOT = "claude-code/-home-riskbot/29485c9f-7c12-4f30-908c-61f27e81c6c3.jsonl"
DND_SHOP = "claude-code/-mnt-c-Users-supanut-akaram/199d5e8c-7fa9-498e-8db6-005e02f13909.jsonl"


def test_a_file_named_on_aiders_command_line_places_the_repository(tmp_path: Path) -> None:
    # `aider --message … /tmp/agentlink/<id>/myprojec/index.html`, then `Added index.html to
    # the chat.`; the first session (`--no-git`) shows nothing and was written in the same place
    history = history_at(tmp_path, MYPROJEC)
    sessions = history_sessions(history)
    second = session_at(sessions, 73)
    assert second.project_path == "/tmp/agentlink/00f553b6-1f6e-41c2-b765-99af0f09c7b0/myprojec"
    assert sessions[0].project_path == second.project_path


def test_a_session_started_on_the_desktop_is_the_project_it_made_there() -> None:
    # cwd /Users/admin/Desktop; `npm create vite@latest cute-sticky`, then every edit in it
    [session] = claude(STICKY)
    assert session.project_path == "/Users/admin/Desktop/cute-sticky"
    # cwd the home directory (WSL), and the only file written the plan in ~/.claude/plans: the
    # home directory is no project
    [home] = claude(DND_SHOP)
    assert home.project_path is None


TRADING_BOT = "aider/Akash-Modi104__trading-bot/.aider.chat.history.md"
PDF_INGESTION = "aider/BharathKumarKS__pdf_ingestion/.aider.chat.history.md"


def test_aiders_prompt_copied_before_a_request_or_a_command_is_left_out() -> None:
    assert _lines(TRADING_BOT)[53].startswith("#### > rewrite dashboard.py")
    [request] = [e for s in aider(TRADING_BOT) for e in s.events if getattr(e, "line", 0) == 54]
    assert isinstance(request, Request) and request.title.startswith("rewrite dashboard.py")
    # `#### > /model openai/…`: a command, not a request
    assert _lines(PDF_INGESTION)[245].startswith("#### > /model ")
    lines = {e.line for s in aider(PDF_INGESTION) for e in s.events if isinstance(e, Request)}
    assert not {246, 251} & lines


ROSTER = "aider/abhi55gp__AI-Augmented-assessment/aider.chat.history.md"
ASKED_AGAIN = load_settings(CONFIG).importers.asked_again_similarity


def test_the_same_request_asked_again_after_each_attempt_is_one_task() -> None:
    # "fix AxiosError in node_modules" four times, each answered by a commit worded otherwise
    [session] = aider(ROSTER)
    again = {t.line: t for t in session.tasks(ASKED_AGAIN)}
    attempts = [3659, 3701, 3732, 3763]
    assert all(
        _lines(ROSTER)[n - 1].startswith("#### fix AxiosError in node_modules") for n in attempts
    )
    [task] = [t for t in again.values() if 3693 in t.item.lines()]  # the first attempt's commit
    carried = {n for item in task.evidence for n in item.lines()}
    assert {3701, 3724, 3732, 3755, 3763, 3786} <= carried
    # without it, each attempt is a task named by its commit
    alone = session.tasks()
    assert len(alone) > len(again.values())
    assert sum(any(n in t.item.lines() for n in attempts) for t in alone) == len(attempts)
    # the next, different request is a task of its own
    assert any(3825 in t.item.lines() for t in again.values())


CATALOG = "aider/AndreasDebel__HaaV-CatalogService/.aider.chat.history.md"
SENIALES = "aider/Blizard32__seniales/.aider.chat.history.md"
KEVINMATZ = "aider/kevinmatz__AiderExperiments/aider.chat.history 2023-10-02_1654.md"


def _lines(source: str) -> list[str]:
    return (REAL / source).read_text(encoding="utf-8", errors="replace").splitlines()


def test_a_uuid_inside_a_pasted_line_makes_it_noise_and_the_request_keeps_its_first_line() -> None:
    pasted = _lines(CATALOG)[22].removeprefix("#### ").strip()  # `Sending HTTP request GET …`
    assert "7125e019-c469-4dbd-93e5-426de6652523" in pasted
    assert noise_filter.is_noise(pasted)
    [request] = [e for s in aider(CATALOG) for e in s.events if getattr(e, "line", 0) == 22]
    assert request.title.startswith("when my CatalogClient tries to access the endpoint")


def test_shell_commands_and_help_typed_at_the_prompt_are_no_tasks() -> None:
    typed = _lines(SENIALES)[27].removeprefix("#### ").strip()
    assert typed == "setx OLLAMA_API_BASE:" and noise_filter.looks_pasted(typed)
    titles = [t.title for s in aider(SENIALES) for t in s.tasks()]
    assert typed not in titles
    assert not any(r.title == typed for s in aider(SENIALES) for r in s.idle_questions())
    # `/help` is a command, and aider's help output that follows it is aider's, not a request
    kevin = aider(KEVINMATZ)
    requests = {e.line for s in kevin for e in s.events if e.__class__.__name__ == "Request"}
    assert not {17, 557, 599} & requests


def test_a_program_given_options_alone_at_the_prompt_names_no_work() -> None:
    # `ls -l` sent to aider as a message: a command, not work asked for
    [typed] = [
        e
        for s in aider(SUPPLY_CHAIN)
        for e in s.events
        if isinstance(e, Request) and e.line == 5153
    ]
    assert typed.title == "ls -l" and not is_candidate_title(typed.title)
    assert "ls -l" not in {t.title for s in aider(SUPPLY_CHAIN) for t in s.tasks()}
    # options after words are a request about them, not a command line
    assert is_candidate_title("fix the --verbose flag of the exporter")


def test_each_claude_code_commit_form_gives_its_subject() -> None:
    [heredoc, *_] = [
        c for s in claude(COMMITS) for c in s.events if c.__class__.__name__ == "Commit"
    ]
    # `git commit -m "$(cat <<'EOF' … EOF)"` confirmed by git's `[branch sha]` line
    assert heredoc.subject == (
        "build: migrate dependency management from requirements.txt to pyproject.toml"
    )
    subject = heredoc.subject
    quiet = f'git add pyproject.toml && git commit -q -m "{subject}"'
    assert commit_subject(quiet) == subject
    assert confirmed_commit(quiet, "") is None  # nothing shows it was made
    logged = f"{quiet} && git log --oneline -1"
    assert confirmed_commit(logged, f"1a2b3c4 {subject}\n") == ("1a2b3c4", subject)
    pushed = f"{quiet} && git push"
    shown = "To github.com:me/trivivo.git\n   0f1e2d3..1a2b3c4  main -> main\n"
    assert confirmed_commit(pushed, shown) == ("1a2b3c4", None)
    stdin = f"git commit -F - <<'EOF'\n{subject}\n\nbody\nEOF"
    assert commit_subject(stdin) == subject
    # a quiet push prints nothing; the `git log` chained after it names the commit
    both = "git commit -q -F - <<'EOF' && git push -q origin main && git log --oneline -1\n"
    shown = f"[entire] Pushing 2 checkpoint ref(s) to origin.... done\n1a2b3c4 {subject}\n"
    assert confirmed_commit(f"{both}{subject}\nEOF", shown) == ("1a2b3c4", subject)
    # a `git log` on a line of its own runs whether or not the commit was made: only the
    # commit's own subject in what it printed shows the commit
    after = f"{stdin}\ngit log --oneline -1 && git show --stat HEAD | tail -6"
    assert confirmed_commit(after, f"me\n1a2b3c4 {subject}\n", subject) == ("1a2b3c4", subject)
    assert confirmed_commit(after, "0f1e2d3 chore: an earlier commit\n", subject) is None
    # after a failed commit the newest commit is an older one, whatever older ones it lists
    older = f"0f1e2d3 chore: an earlier commit\n1a2b3c4 {subject}\n"
    assert confirmed_commit(f"{stdin}\ngit log --oneline -5", older, subject) is None
    # inside double quotes the shell takes `\$` and `\"` for `$` and `"`; single quotes keep all
    assert commit_subject('git commit -m "decode the \\$3,184.35 \\"swap\\""') == (
        'decode the $3,184.35 "swap"'
    )
    assert commit_subject("git commit -m 'keep \\$HOME as typed'") == "keep \\$HOME as typed"


def test_two_same_second_sessions_are_two_sessions(tmp_path: Path) -> None:
    # a real session written twice: same header second, same start-up, byte for byte
    session = (REAL / FLASK).read_bytes()
    twice = tmp_path / "repo" / ".aider.chat.history.md"
    twice.parent.mkdir()
    twice.write_bytes(session + session)
    first, second = history_sessions(twice)
    assert first.started_at == second.started_at
    assert second.external_id == f"{first.external_id}:2"
    assert [t.title for t in second.tasks()] == [t.title for t in first.tasks()]


def test_an_old_pre_chat_commit_is_no_work_item(tmp_path: Path) -> None:
    # the first versions asked to commit the user's own edits before the chat went on
    history = tmp_path / "repo" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_text(
        "# aider chat started at 2023-07-16 18:40:00\n\n> aider server.py\n"
        "> Git repo has uncommitted changes.\n"
        "> Commit before the chat proceeds [y/n/commit message]? Added aider.* to the .gitignore"
        " file.\n> Commit c524b23 Added aider.* to the .gitignore file.\n"
        "> Use up-arrow to retry previous command: Add a health check endpoint to server.py\n\n"
        "#### Add a health check endpoint to server.py\n\n"
        "Here is the change.\n\n> Applied edit to server.py\n"
        "> Commit 5d6e7f8 aider: Added a /health endpoint to server.py.\n"
    )
    [session] = history_sessions(history)
    [task] = session.tasks()
    assert task.title == "Added a /health endpoint to server.py."
    assert [r.title for r in task.item.requests] == ["Add a health check endpoint to server.py"]
    commits = [e for e in session.events if e.__class__.__name__ == "Commit"]
    assert [c.work for c in commits] == [False, True]


AGENT_SWARM = "claude-code/-Users-robinsonchan/bdc6842b-5fce-422b-8644-c62e32c34900.jsonl"


def test_a_shell_command_that_failed_changed_nothing() -> None:
    # `brew install gh` (line 89) failed on an Xcode licence not accepted; after "okay try again
    # option 1" (95) it ran (96): the requests since the example test run (60, answered after a
    # command, an item of its own) are one item with that work, the failed start among them
    [session] = claude(AGENT_SWARM)
    changes = [e.line for e in session.events if isinstance(e, ShellChange)]
    assert 89 not in changes and 96 in changes
    [github] = [t for t in session.tasks() if any(r.line == 95 for r in t.item.requests)]
    assert [r.line for r in github.item.requests] == [76, 79, 82, 95]


def test_a_file_written_by_an_mcp_tool_and_a_quiet_commit_are_one_work_item() -> None:
    # the request's edit is an Xcode MCP server's `XcodeWrite`; "Commit and push your changes"
    # then runs `git commit -q -F - <<'EOF' && git push -q … && git log --oneline -1`
    [session] = claude(XCODE_TOOLS)
    [task] = session.tasks()
    assert task.title == "Typable param values, semitone-snapped note slider"
    assert task.item.lines() == [5, 44, 50]
    assert any(f.path.endswith("InspectorView.swift") for f in task.item.files)


def test_an_mcp_tool_writes_a_file_where_a_word_of_its_name_says_so() -> None:
    assert writes_file("mcp__xcode-tools__XcodeWrite")
    assert writes_file("mcp__filesystem__edit_file")
    assert not writes_file("mcp__xcode-tools__XcodeRead")
    assert not writes_file("mcp__filesystem__read_text_file")
    assert not writes_file("mcp__changes__get_update_status")
    assert not writes_file("Write")  # the editor's own tool, read as such


def test_a_change_an_mcp_tool_made_on_its_server_is_work_done() -> None:
    # an n8n workflow read (`n8n_get_workflow`, `n8n_validate_workflow`) and changed
    # (`n8n_update_partial_workflow`) through its MCP server: no file here, nothing to commit
    [session] = claude(N8N_WORKFLOW)
    changed = {e.line for e in session.events if isinstance(e, ShellChange)}
    assert {45, 49, 55, 64, 98} <= changed and not {9, 19, 92} & changed
    assert all(e.hosted for e in session.events if isinstance(e, ShellChange))
    # the pasted error asking for a fix (89) and the ticket (105) are work items of their own
    asked = [[r.line for r in t.item.requests] for t in session.tasks()]
    assert [89] in asked and [105] in asked
    assert not changes_on_server("mcp__github__create_pull_request", {}, None)
    assert changes_on_server("mcp__github__create_issue", {"owner": "o", "repo": "r"}, None)


def test_edits_the_person_rejected_do_not_cut_the_work_apart() -> None:
    # a blog post asked for (6, 10), its Write rejected twice with corrections typed after each
    # (27, 31; 36), written, then committed (50, 65, 66): one item, named by its commit
    [session] = claude(REJECTED_WRITES)
    [task] = session.tasks()
    assert task.title == "workflow快捷键速查、git分支、zustand更新"
    assert task.item.lines() == [6, 10, 27, 31, 36, 50, 65, 66]


LLM_TRAIN = "claude-code/-home-yingbohao-llm-train/4b0ee9c6-20bd-4ff0-8465-c984c7d9032a.jsonl"


def test_a_request_written_around_a_path_without_spaces_names_its_work() -> None:
    # "同步到/home/…/experiment_configuration_summary.md里面" ("sync it into …md"): Chinese is
    # written without spaces, so the words run into the path; the request is no path, and the
    # edits it led to are a work item of their own, not the one before
    [session] = claude(LLM_TRAIN)
    asked = [[r.line for r in t.item.requests] for t in session.tasks()]
    assert [153] in asked
    assert is_candidate_title("同步到/home/me/notes.md里面")
    assert not is_candidate_title("/home/me/文档/报告.md")  # a path, whatever its script


def test_a_request_that_picks_an_offered_option_is_named_by_it() -> None:
    # after each step Claude offers the next ones as a numbered list and asks which; the person
    # types "1" three times, and each "1" leads its own run of edits
    [session] = claude(OSCE_LESSONS)
    by_line = {t.line: t for t in session.tasks(0.7)}
    assert by_line[71].title == "實作教案模板和OSCE知識庫API"
    assert by_line[90].title == "設計AI教案生成模組 - 整合真實AI服務"
    assert by_line[122].title == "設計AI審核模組 - 醫學準確性檢查"
    # the typed text is kept as typed; the option it picked goes with it where it is read
    picked = by_line[71].item.requests[0]
    assert (picked.text, picked.asked_for) == ("1", "1: 實作教案模板和OSCE知識庫API")


def test_an_analysis_answered_in_text_is_a_work_item_of_its_own() -> None:
    # "analyse how the data in E:\rust\data differs from E:\historical data, which should I use
    # for backtesting" (4): read and compared with commands, answered, nothing edited; then a
    # milestones document written and committed (64, 103): two items, as labelled
    [session] = claude(RUST_DATA)
    items = [[r.line for r in t.item.requests] for t in session.tasks()]
    assert items == [[4], [64, 103]]
    assert session.tasks()[0].title.startswith("帮我分析 E:\\rust\\data")
    # how the work was done is not in the digest triage reads
    assert all(d["kind"] in ("request", "commit", "file") for d in session.digest_lines())


def test_a_short_reply_goes_on_with_the_request_it_answers() -> None:
    # "look at stuart dalls' perms, i should have the same ones" (3), looked up, then "yes" (30)
    # and the change: one item; the question at the end (120) is evidence of the session
    [session] = claude(PERMISSIONS)
    [task] = session.tasks()
    assert [r.line for r in task.item.requests] == [3, 30]
    assert [q.line for q in session.idle_questions()] == [120]


def test_a_command_typed_as_the_answer_goes_on_with_the_request() -> None:
    # "sync my settings to this machine with cc-sync" (5): the tool finds no cc-sync and asks
    # how to get it; the person pastes its install command (18), and the sync is carried out:
    # one item, named by the request, as labelled
    [session] = claude(CC_SYNC)
    [task] = session.tasks()
    assert [r.line for r in task.item.requests] == [5, 18]
    assert task.title == "使用cc-sync同步我的配置到本机"


EHRQL = "aider/sebbacon__ehrql_aider_demo/.aider.chat.history.md"


def test_a_linter_commit_after_the_reply_s_own_goes_on_with_its_work(tmp_path: Path) -> None:
    # `> Commit 09bec69 feat: Implement QOF diabetes register (DM017)` and right after it, with
    # no edit of the model's between, `> Commit f5b6b2c style: run linter`
    sessions = history_sessions(history_at(tmp_path, EHRQL))
    tasks = [task for session in sessions for task in session.tasks()]
    by_title = {task.title: [c.subject for c in task.item.commits] for task in tasks}
    assert by_title["Implement QOF diabetes register (DM017)"] == [
        "feat: Implement QOF diabetes register (DM017)",
        "style: run linter",
    ]
    assert by_title["add QOF indicator DM020"][:2] == [
        "feat: add QOF indicator DM020",
        "style: apply linter fixes",
    ]
    assert not {"run linter", "apply linter fixes"} & set(by_title)
