"""Hostile command arguments: a revision alembic cannot reach, a dataset that is not UTF-8.
One line each, never a traceback, and the database is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import assert_one_line_error, run_cli

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
