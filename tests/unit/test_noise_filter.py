"""noise_filter judges structure only: the same rules for any script or language."""

from __future__ import annotations

import pytest

from tests.support.watchdog import ends_within
from yzos_jobs.entity.noise_filter import (
    is_command_line,
    is_meaningful_summary,
    is_noise,
    is_plausible_project_path,
    looks_like_terminal,
    looks_pasted,
    normalize_project_path,
)

MARKERS = ("Code", "Volumes", "src", "Projects", "repos", "workspace")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "\t\n",
        "x",
        "我",
        "7",
        "12345",
        "2026-11-29",
        "1.2.3",
        "/Users/me/Code",
        "~/Projects/yzos",
        "./build",
        "C:\\Users\\me\\repo",
        "src/lib/util",
        "node_modules/",
        None,
    ],
)
def test_structural_junk_is_noise(text: str | None) -> None:
    assert is_noise(text)


@pytest.mark.parametrize(
    "text",
    [
        # UUIDs, in either case, with or without hyphens and braces.
        "3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22",
        "3F2B9C1E-8D4A-4B7E-9F10-2C6D5E8A1B22",
        "3f2b9c1e8d4a4b7e9f102c6d5e8a1b22",
        "{3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22}",
        # Hex hashes: 7+ hex characters in one case, with a digit and a letter.
        "3f2b9c1",
        "a1b2c3d",
        "C0FFEE1",
        "0x3f2b9c1e",
        "0xDEADBEEF1",
        "e3b0c44298fc1c149afbf4c8996fb924",
        # Unfilled template placeholders, alone or with only punctuation around them.
        "{{project_name}}",
        "{{ user.name }}",
        "{% block title %}",
        "${USER}",
        "%s",
        "%d",
        "%(name)s",
        "%1$s",
        "%.2f",
        "{0}",
        "{}",
        "{name}",
        "{0:>8}",
        "{0} {1}",
        "{{first}} {{last}}",
        "(%s)",
        # Paths, also when they start from a placeholder.
        "/Users/me/Code",
        "${HOME}/Code",
        "{{root}}/src",
        "%s/%s",
        # Mostly machine tokens: a request id, an epoch timestamp, a phone number.
        "Request ID: 98503908-0c5e-4f7d-8a5c-1724180701",
        "Request ID: 98503908-1724180701",
        "at 1724180701",
        "call 13800138000",
    ],
)
def test_machine_identifiers_and_templates_are_noise(text: str) -> None:
    assert is_noise(text)


@pytest.mark.parametrize(
    "text",
    [
        # Words spelt in hex letters have no digit; short or mixed-case ones are not hashes.
        "Decade",
        "deadbeef",
        "Facade",
        "Cafe2024",
        "c0ffee",
        "abc123",
        "H264",
        "AES256",
        # Dotted names, versions and codes written by people.
        "Node.js",
        "socket.io",
        "v2",
        "v2.1 release",
        "Q3 planning",
        "Add OAuth login",
        "陈晓明",
        # A sentence that mentions a placeholder is text, not a template: the judge decides.
        "Replace %s with f-strings",
        "Dear {first_name},",
        "Welcome to {{project_name}}!",
        "50% done",
        "100%",
        # A number a person writes among words: a ticket, an issue, a build, a date.
        "Ticket 123456",
        "Fix issue #1234567",
        "Deploy build 20261206",
    ],
)
def test_names_that_only_look_structural_are_left_to_the_classifier(text: str) -> None:
    assert not is_noise(text)


@pytest.mark.parametrize(
    "text", ["{{" * 20_000, "{%" * 20_000, "%0" * 20_000, "{0:" * 20_000, "{{" + "a" * 40_000]
)
def test_adversarial_text_is_judged_in_linear_time(text: str) -> None:
    with ends_within(60):  # a backtracking pattern takes hours on these
        is_noise(text)


@pytest.mark.parametrize(
    "text",
    [
        "YZOS Core",
        "Telegram",
        "Cursor",
        "陈晓明",
        "李雷",
        "José Álvarez",
        "Ёжик",
        "v2 launch",
        "Fix login redirect",
        "A/B testing plan",
        "田中さん",
        "ok",
    ],
)
def test_names_are_left_to_the_classifier(text: str) -> None:
    # Apps and people alike pass: deciding "Telegram" is an app is semantic, not structural.
    assert not is_noise(text)


@pytest.mark.parametrize(
    "text",
    [
        "3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22",
        "/Users/me/Code/yzos",
        "deadbeefcafebabe0123",
        '{"a": 1, "b": [2, 3]}',
        "[1, 2, 3]",
        'Traceback (most recent call last):\n  File "x.py"',
        "",
        "  ",
        "42",
        "a",
    ],
)
def test_machine_text_is_not_a_meaningful_summary(text: str) -> None:
    assert not is_meaningful_summary(text)


@pytest.mark.parametrize(
    "text",
    [
        "Refactored the classifier prompt",
        "和陈晓明确认发布时间",
        "Reviewed PR #42 for the importer",
        "Commit a1b2c3d fix lease renewal",
    ],
)
def test_prose_is_a_meaningful_summary(text: str) -> None:
    assert is_meaningful_summary(text)


@pytest.mark.parametrize(
    ("path", "plausible"),
    [
        ("/Users/me/Code/yzos-core", True),
        ("/Volumes/work/client-site", True),
        ("/home/ana/src/parser/", True),
        ("C:\\Users\\ana\\Projects\\site", True),
        ("/Users/me/Code", False),  # the work directory itself is no project
        ("/Users/me/Downloads/file", False),
        ("/tmp/x", False),
        ("", False),
        (None, False),
        ("/Users/me/Code/项目甲", True),
    ],
)
def test_plausible_project_path(path: str | None, plausible: bool) -> None:
    assert is_plausible_project_path(path, MARKERS) is plausible


@pytest.mark.parametrize(
    ("path", "normalized"),
    [
        ("/Users/me/Code/yzos/", "/Users/me/Code/yzos"),
        ("/Users/me/Code/yzos///", "/Users/me/Code/yzos"),
        ("/Users/me/Code/yzos/README.md", "/Users/me/Code/yzos"),
        ("/Users/me/Code/yzos/.git", "/Users/me/Code/yzos"),
        ("  '/Users/me/Code/yzos'  ", "/Users/me/Code/yzos"),
        ("/", "/"),
    ],
)
def test_normalize_project_path(path: str, normalized: str) -> None:
    assert normalize_project_path(path) == normalized


@pytest.mark.parametrize(
    "line",
    [
        "git log --oneline --stat",
        "curl -fsSL https://raw.githubusercontent.com/ikook-wang/cc-sync/main/install.sh | bash",
        'git commit -m "fix the parser"',
        "git add -A",
        "git log -20",
        "git log --oneline | head -20",
        'git add -A && git commit -m "save the work"',
        "ls -la ~/.claude && cat ~/.claude/settings.json",
        "git log --oneline --sta…",  # a title cut at its bound
    ],
)
def test_a_command_line_typed_at_the_prompt_reads_as_one(line: str) -> None:
    assert is_command_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "add -v flag to the cli",
        "use --force to push",
        "fix the --verbose flag",
        "fix the -v flag in the cli",
        "rename -v to --verbose",
        "add -o ./out",
        "fix src/app.py --verbose",
        "limit -n to 5",
        "run pytest -k test_x and fix what fails",
        "make the build pass",
        "git",
        "Fix --verbose handling",  # a capital: a person's sentence, not a program
        "",
    ],
)
def test_a_request_that_names_options_is_no_command_line(line: str) -> None:
    assert not is_command_line(line)


def test_a_long_line_is_no_command_line_and_is_read_in_linear_time() -> None:
    long_token = "git log --" + "a" * 1_000_000
    with ends_within(60):  # shlex's time grows with the square of a token's length
        assert not is_command_line(long_token)


@pytest.mark.parametrize(
    "line",
    [
        "$ npm test",
        "me@box:~/app$ make",
        "PS C:\\app> npm run build",
        "(base) root@4260969675d7:~/capsule# git push",  # after the conda environment's name
        "(.venv) PS C:\\app> pytest",
        "(venv) C:\\app>python main.py",
        "(base) $ ls",
        "(.venv) (base) me@laptop:~/app$ git push",
        "(/home/me/envs/py311) me@laptop:~/app$ git push",
        "[root@host app]# git push",
        "2026-05-01 10:00:00 ERROR sync failed",
        '  File "sync.py", line 3, in main',
        "curl -fsSL https://example.com/install.sh | bash",
    ],
)
def test_what_a_terminal_shows_answers_the_tool(line: str) -> None:
    assert looks_like_terminal(line) and looks_pasted(line)


@pytest.mark.parametrize(
    "line",
    [
        "Rename MAX_RETRIES to RETRY_LIMIT",
        "[WIP] add the settings page",
        "Make x=3 the default",
        "| Name | Price |",
    ],
)
def test_pasted_shapes_a_request_may_take_ask_for_something(line: str) -> None:
    # they name no work, but they are no answer to the tool either: a new request
    assert looks_pasted(line) and not looks_like_terminal(line)


@pytest.mark.parametrize(
    ("line", "pasted"),
    [
        # a process manager's log: the process it came from, then a bar
        ("0|riskbot  |   status: 403,", True),  # pm2
        ("web-1  | Listening on port 3000", True),  # Docker Compose
        ("api_1 | Error: connect ECONNREFUSED", True),
        # a bar in a request a person wrote
        ("Fix the login | it fails on Safari", False),
        ("Make tier 1 | 2 cheaper", False),
    ],
)
def test_a_process_managers_log_line_is_pasted(line: str, pasted: bool) -> None:
    assert looks_pasted(line) is pasted


@pytest.mark.parametrize(
    "line",
    ["(base) fix the login page", "(urgent) me@work: the sync fails", "(draft) PS: add a footer"],
)
def test_a_request_in_brackets_is_no_prompt(line: str) -> None:
    assert not looks_pasted(line)
