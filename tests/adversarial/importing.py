"""Importing hostile input as a user does: the real CLI, then the database."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select

from tests.support.cli import cli_env, run_cli
from tests.support.jobs import make_ctx
from yzos_jobs.db.models import ActivitySession, EntityCandidate


@dataclass(frozen=True)
class Imported:
    returncode: int
    skipped: list[str]  # the "skipped …" lines on stderr, one per bad record or file
    counts: dict[str, int]  # the counts `--json` prints on stdout
    stderr: str


def run_import(
    importer: str,
    *paths: Path,
    db_url: str,
    cwd: Path,
    config: Path | None = None,
    prefix: Sequence[str] = (),
    timeout: float = 120,
    process: bool = False,
) -> Imported:
    env = cli_env(db_url, **({"YZOS_CONFIG": str(config)} if config else {}))
    result = run_cli(
        "import",
        importer,
        "--json",
        *map(str, paths),
        env=env,
        cwd=cwd,
        prefix=prefix,
        timeout=timeout,
        process=process,
    )
    return _imported(result)


def import_transcripts(tmp_path: Path, db_url: str) -> Imported:
    """Import the Claude Code transcripts below `tmp_path/projects`, every session closed."""
    return run_import(
        "claude-code",
        tmp_path / "projects",
        db_url=db_url,
        cwd=tmp_path,
        config=idle_config(tmp_path),
    )


def _imported(result: subprocess.CompletedProcess[str]) -> Imported:
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped ")]
    lines = result.stdout.splitlines()
    printed = json.loads(lines[-1]) if lines and result.returncode == 0 else {}
    counts = {k: v for k, v in printed.items() if isinstance(v, int)}
    return Imported(result.returncode, skipped, counts, result.stderr)


def idle_config(tmp_path: Path) -> Path:
    """A config under which every aider and Claude Code session counts as closed (its file is
    idle)."""
    config = tmp_path / "config.toml"
    config.write_text("[importers]\nsession_idle_s = 0\n")
    return config


def jsonl_line(record_id: str, text: str, session_id: str = "s1", **extra: Any) -> str:
    record = {
        "record_id": record_id,
        "session_id": session_id,
        "type": "candidate",
        "raw_text": text,
        "suggested_kind": "task",
        **extra,
    }
    return json.dumps(record) + "\n"


def cc_line(uuid: str, text: str, session_id: str = "sess-1", **extra: Any) -> str:
    record = {
        "uuid": uuid,
        "sessionId": session_id,
        "cwd": "/home/me/code/hostile",
        "type": "user",
        "message": {"role": "user", "content": text},
        "timestamp": "2026-11-04T10:00:00Z",
        **extra,
    }
    return json.dumps(record) + "\n"


def cc_edit(uuid: str, path: str, session_id: str = "sess-1") -> str:
    """An assistant turn that edits `path` (an Edit tool call): what makes a request work."""
    record = {
        "uuid": uuid,
        "sessionId": session_id,
        "cwd": "/home/me/code/hostile",
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": f"t-{uuid}",
                    "name": "Edit",
                    "input": {"file_path": path},
                }
            ],
        },
        "timestamp": "2026-11-04T10:00:01Z",
    }
    return json.dumps(record) + "\n"


def candidate_texts(db_url: str) -> list[str]:
    with make_ctx(db_url).sessions() as s:
        return list(s.scalars(select(EntityCandidate.raw_text).order_by(EntityCandidate.id)))


_ASKED = re.compile(r"^(?:asked|request) \(line \d+\): (.*)$", re.MULTILINE)


def requests_seen(db_url: str) -> list[str]:
    """The candidates' names and the requests their contexts carry as evidence: a task's
    requests, and the questions a session's project candidate lists (nothing edited after
    them)."""
    with make_ctx(db_url).sessions() as s:
        rows = list(s.execute(select(EntityCandidate.raw_text, EntityCandidate.surrounding_text)))
    return [name for name, _ in rows] + [
        asked for _, context in rows for asked in _ASKED.findall(context or "")
    ]


def session_ids(db_url: str) -> set[str]:
    with make_ctx(db_url).sessions() as s:
        return set(s.scalars(select(ActivitySession.external_id)))


def where(path: Path, line: int) -> str:
    return f"skipped {path}:{line}: "


def only_skipped_at(imported: Imported, *places: str) -> None:
    """One line per bad record, at exactly these places (`where(...)` prefixes)."""
    assert len(imported.skipped) == len(places), imported.skipped
    for place in places:
        assert sum(line.startswith(place) for line in imported.skipped) == 1, (
            place,
            imported.skipped,
        )
