"""Hostile command arguments: a revision alembic cannot reach, a dataset that is not UTF-8.
One line each, never a traceback, and the database is left as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import REPO, assert_one_line_error, cli_env, run_cli

pytestmark = pytest.mark.adversarial

EXIT_FAILURE = 1
EXIT_USAGE = 2

BAD_REVISIONS = [
    ("upgrade", "999"),
    ("downgrade", "999"),
    ("upgrade", "017:019"),  # a range is offline SQL generation
    ("downgrade", "+1"),  # a downgrade that goes up
    ("downgrade", "head@x"),
]


@pytest.mark.parametrize(("verb", "revision"), BAD_REVISIONS)
def test_unreachable_revision_is_one_line_and_changes_nothing(
    db_url: str, tmp_path: Path, verb: str, revision: str
) -> None:
    before = run_cli("db", "current", db_url=db_url, cwd=tmp_path)
    assert before.returncode == 0, before.stderr
    result = run_cli("db", verb, revision, db_url=db_url, cwd=tmp_path)
    line = assert_one_line_error(result, EXIT_USAGE, f"db {verb} {revision}")
    assert "revisions: base, 017" in line  # says what exists
    assert run_cli("db", "current", db_url=db_url, cwd=tmp_path).stdout == before.stdout


def test_eval_on_a_dataset_that_is_not_utf8_is_one_line(db_url: str, tmp_path: Path) -> None:
    dataset = tmp_path / "labelled.jsonl"
    dataset.write_bytes(
        b'{"raw_text": "YZOS Core", "suggested_kind": "project", "label": "project"}\n'
        b'{"raw_text": "caf\xe9", "suggested_kind": "project", "label": "project"}\n'
    )
    result = run_cli("eval", str(dataset), db_url=db_url, cwd=tmp_path)
    assert_one_line_error(result, EXIT_FAILURE, str(dataset), "not UTF-8")


NOT_UTF8 = b"caf\xe9".decode("utf-8", "surrogateescape")  # as Python hands a Latin-1 argument


@pytest.mark.parametrize(
    "args",
    [
        ("explain", NOT_UTF8),
        ("show", NOT_UTF8),
        ("entities", "--search", NOT_UTF8),
        ("entities", "--project", NOT_UTF8),
        ("correct", "e:1", "--not-entity", "--reason", NOT_UTF8),
        ("correct", "e:1", "--rename", NOT_UTF8),
        ("classify", NOT_UTF8),
        ("classify", "Alice Chen", "--app", NOT_UTF8),
    ],
)
def test_text_that_is_not_utf8_is_a_usage_error(
    db_url: str, tmp_path: Path, args: tuple[str, ...]
) -> None:
    result = run_cli(*args, db_url=db_url, cwd=tmp_path)
    assert result.returncode == EXIT_USAGE, result.stderr
    assert "Traceback" not in result.stderr
    assert "'caf\\xe9' is not UTF-8 text" in result.stderr


def _written_to(
    db_url: str, tmp_path: Path, command: str, redirect: str, buffered: bool = True
) -> subprocess.CompletedProcess[str]:
    """`yzos-jobs COMMAND` in a child whose stdout is redirected by the shell (`> /dev/full`,
    `>&-`, `| true`), with stdout buffered as on any terminal or file, or not."""
    assert run_cli("classify", "Alice Chen", "--kind", "person", db_url=db_url).returncode == 0
    env = {**cli_env(db_url), "PYTHONPATH": str(REPO)}
    env.pop("PYTHONUNBUFFERED", None)
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run(
        ["sh", "-c", f'exec "{sys.executable}" -m yzos_jobs {command} {redirect}'],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("command", ["entities", "status", "db current", "--help"])
@pytest.mark.parametrize(
    ("redirect", "reason"),
    [("> /dev/full", "No space left on device"), (">&-", "standard output is closed")],
)
def test_a_result_that_cannot_be_written_is_one_line(
    db_url: str, tmp_path: Path, command: str, redirect: str, reason: str
) -> None:
    for buffered in (True, False):  # unbuffered: `python -u`, PYTHONUNBUFFERED
        result = _written_to(db_url, tmp_path, command, redirect, buffered)
        line = assert_one_line_error(result, EXIT_FAILURE, "cannot write the output")
        assert reason in line


def test_a_pipe_closed_early_ends_the_command_quietly(db_url: str, tmp_path: Path) -> None:
    # the reader took what it wanted (`| head -1`) or nothing (`| true`)
    result = _written_to(db_url, tmp_path, "entities", "| (exec 0<&-; sleep 1)")
    assert result.stderr == ""
