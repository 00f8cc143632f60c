"""The message a `git commit` command passes, read in time linear in the command however it is
written (a transcript is anyone's text)."""

from __future__ import annotations

import pytest

from tests.support.watchdog import ends_within
from yzos_jobs.importers.shell_commands import (
    COMMITS_READ,
    commit_messages,
    commit_subject,
    git_parts,
    heredoc_body,
)


@pytest.mark.parametrize(
    "command",
    [
        "git commit -F - " + "<<A\n" * 80_000,  # heredoc starts that never end
        'git commit -m "$(cat <<EOF\n' + "<<A\n" * 80_000 + ')"',
        "git commit -F - <<EOF\n" + "x" * 2_000_000,
    ],
)
def test_a_commit_command_made_of_unended_heredocs_is_read_in_linear_time(command: str) -> None:
    with ends_within(30):  # the search took minutes on 300 KB before it was made linear
        assert commit_subject(command) is None


def test_a_heredoc_gives_the_lines_up_to_its_delimiter() -> None:
    command = "git commit -F - <<'EOF'\nfix the parser\n\nits body\n  EOF\nexit"
    assert heredoc_body(command) == "fix the parser\n\nits body"
    assert commit_subject(command) == "fix the parser"
    # a start with no end is passed over for the next that ends
    assert heredoc_body("<<A\nno end\n<<B\nmessage\nB\n") == "message"
    assert heredoc_body("<<A\nnever ends") is None


def test_a_command_of_thousands_of_folder_changes_is_read_in_linear_time() -> None:
    command = "cd a && " * 2_000 + "git status"
    with ends_within(30):  # each `cd` resolved against an ever deeper folder took seconds
        parts = list(git_parts(command, "/home/me"))
    assert parts == [(None, "git status")]
    # a real change of folder is followed
    assert list(git_parts("cd app && git status", "/home/me")) == [("/home/me/app", "git status")]


def test_each_commit_of_a_command_passes_its_own_message() -> None:
    command = (
        'git commit -m "Add the parser" && git commit --amend --no-edit && '
        "git commit -m 'Add the printer'"
    )
    # the amend passes none, and takes not the next commit's
    assert commit_messages(command) == [
        (("Add the parser", ""), False),
        (None, True),
        (("Add the printer", ""), False),
    ]


def test_git_commit_in_a_message_is_no_commit() -> None:
    command = (
        'git commit -m "Fix the git commit hook" && '
        "git commit -F - <<'EOF'\nDocument it\n\nRun the git commit hook first\nEOF"
    )
    assert commit_messages(command) == [
        (("Fix the git commit hook", ""), False),
        (("Document it", "Run the git commit hook first"), False),
    ]


def test_a_command_that_commits_over_and_over_is_read_for_a_few_commits() -> None:
    command = 'git commit -m "step" && ' * 5000
    with ends_within(30):
        assert commit_messages(command) == [(("step", ""), False)] * COMMITS_READ
