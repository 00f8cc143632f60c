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
    ],
)
def test_text_that_is_not_utf8_is_a_usage_error(
    db_url: str, tmp_path: Path, args: tuple[str, ...]
) -> None:
    result = run_cli(*args, db_url=db_url, cwd=tmp_path)
    assert result.returncode == EXIT_USAGE, result.stderr
    assert "Traceback" not in result.stderr
    assert "'caf\\xe9' is not UTF-8 text" in result.stderr


def _listing(db_url: str, tmp_path: Path, stdout: str) -> subprocess.CompletedProcess[str]:
    """`entities` in a child whose stdout is `/dev/full` or closed (`>&-`)."""
    assert run_cli("classify", "Alice Chen", "--kind", "person", db_url=db_url).returncode == 0
    redirect = "> /dev/full" if stdout == "full" else ">&-"
    command = f'exec "{sys.executable}" -m yzos_jobs entities {redirect}'
    return subprocess.run(
        ["sh", "-c", command],
        cwd=tmp_path,
        env={**cli_env(db_url), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize(
    ("stdout", "reason"),
    [("full", "No space left on device"), ("closed", "standard output is closed")],
)
def test_a_result_that_cannot_be_written_is_one_line(
    db_url: str, tmp_path: Path, stdout: str, reason: str
) -> None:
    result = _listing(db_url, tmp_path, stdout)
    line = assert_one_line_error(result, EXIT_FAILURE, "cannot write the output")
    assert reason in line
