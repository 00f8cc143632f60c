"""A one-shot command prints its result once, for a person, on a terminal: its summary on
stdout, and on stderr nothing at info unless -v asks; `--log-format json` makes every log line one
JSON object. Run under real pseudo-terminals."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import REPO, cli_env
from tests.support.daemons import write_config
from tests.support.terminal import Printed, run_in_terminal

EXAMPLE = REPO / "examples" / "observations.jsonl"


def _run(db_url: str, cwd: Path, *args: str) -> Printed:
    printed = run_in_terminal(*args, env=cli_env(db_url), cwd=cwd)
    assert printed.returncode == 0, printed.stdout + printed.stderr
    assert "Traceback" not in printed.stderr
    return printed


def _results(stdout: str) -> list[str]:
    """The lines printed as a command's result, its notes aside."""
    return [line for line in Printed.lines(stdout) if not line.startswith("note: ")]


def test_summaries_are_printed_once_and_nothing_is_logged_at_info(
    db_url: str, tmp_path: Path
) -> None:
    imported = _run(db_url, tmp_path, "import", "jsonl", str(EXAMPLE))
    summary, pending = Printed.lines(imported.stdout)
    assert summary.startswith("jsonl: files 1  records 10")
    # the second session has not ended: who decides its candidates, where no daemon runs
    assert pending == (
        "note: 2 candidates wait for entity_promote "
        "(the daemon's next run, or yzos-jobs once entity_promote)"
    )
    assert " 0" not in summary.replace("jsonl: ", " ")  # only the counters that are not zero
    assert "import finished" not in imported.stderr and "info" not in imported.stderr

    promoted = _run(db_url, tmp_path, "once", "entity_promote")
    (summary,) = Printed.lines(promoted.stdout)
    assert summary.startswith("entity_promote succeeded  promoted ")
    assert "job finished" not in promoted.stderr and "info" not in promoted.stderr
    # What stderr shows is the progress bar (erased on a terminal once the job is done).
    assert all("━" in line for line in Printed.lines(promoted.stderr))


def test_the_import_summary_tells_records_imported_before_from_bad_ones(
    db_url: str, tmp_path: Path
) -> None:
    copy = tmp_path / "copy.jsonl"
    records = EXAMPLE.read_text(encoding="utf-8").splitlines()
    copy.write_text("\n".join([*records[:3], "{not json", *records[3:]]) + "\n", encoding="utf-8")
    _run(db_url, tmp_path, "import", "jsonl", str(EXAMPLE))
    again = _run(db_url, tmp_path, "import", "jsonl", str(copy))
    summary = Printed.lines(again.stdout)[0]
    # the copy's ten records were imported from the example: counted apart from the bad line,
    # the one `skipped` line on stderr
    assert "copies 10" in summary and "errors 1" in summary, summary
    assert "skipped 10" not in summary
    (bad,) = [line for line in Printed.lines(again.stderr) if line.startswith("skipped ")]
    assert bad.startswith(f"skipped {copy}:4")


def test_verbose_shows_the_log_lines(db_url: str, tmp_path: Path) -> None:
    imported = _run(db_url, tmp_path, "-v", "import", "jsonl", str(EXAMPLE))
    assert len(_results(imported.stdout)) == 1
    (logged,) = [line for line in Printed.lines(imported.stderr) if "import finished" in line]
    assert "info" in logged and "records=10" in logged

    promoted = _run(db_url, tmp_path, "--verbose", "once", "entity_promote")
    assert len(Printed.lines(promoted.stdout)) == 1
    (logged,) = [line for line in Printed.lines(promoted.stderr) if "job finished" in line]
    # A person's line: the job and what it did; no counter that is zero.
    assert "job=entity_promote" in logged and "promoted=" in logged and "=0 " not in logged


def test_json_logs_are_one_object_per_line(db_url: str, tmp_path: Path) -> None:
    imported = _run(db_url, tmp_path, "--log-format", "json", "-v", "import", "jsonl", str(EXAMPLE))
    promoted = _run(db_url, tmp_path, "--log-format", "json", "-v", "once", "entity_promote")
    assert len(_results(imported.stdout)) == len(Printed.lines(promoted.stdout)) == 1
    events = []
    for line in Printed.lines(imported.stderr) + Printed.lines(promoted.stderr):
        record = json.loads(line)
        assert isinstance(record, dict) and record["level"] in ("info", "warning")
        events.append(record)
    finished = next(e for e in events if e["event"] == "job finished")
    # For a machine: every counter, zeros too, with the slot and the owner.
    assert finished["merged"] == 0 and finished["promoted"] > 0
    assert finished["slot"].startswith("once:") and finished["owner"]
    assert any(e["event"] == "import finished" and e["records"] == 10 for e in events)


def test_an_import_with_a_model_says_what_waits_for_triage(db_url: str, tmp_path: Path) -> None:
    # with a model, a session's candidates are held for its triage, which entity_promote runs
    history = tmp_path / "repo" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_text(
        "# aider chat started at 2026-11-04 10:00:00\n\n#### add the export button\n\n"
        "> Applied edit to export.py\n"
    )
    config = write_config(
        tmp_path / "c.toml",
        "http://127.0.0.1:9/v1",  # never asked: an import leaves triage to entity_promote
        importers={"session_idle_s": 0},
    )
    imported = _run(db_url, tmp_path, "--config", str(config), "import", "aider", str(history))
    notes = [line for line in Printed.lines(imported.stdout) if line.startswith("note: ")]
    assert len(notes) == 1 and notes[0].startswith("note: 2 candidates wait for entity_promote")
