"""Importing hostile input as a user does: the real CLI, then the database."""

from __future__ import annotations

import json
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
    counts: dict[str, int]  # the summary line on stdout
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
        *map(str, paths),
        env=env,
        cwd=cwd,
        prefix=prefix,
        timeout=timeout,
        process=process,
    )
    return _imported(result)


def _imported(result: subprocess.CompletedProcess[str]) -> Imported:
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped ")]
    counts: dict[str, int] = {}
    for line in result.stdout.splitlines():
        head, _, rest = line.partition(": ")
        words = rest.split()
        if head in ("jsonl", "aider", "claude-code") and len(words) % 2 == 0:
            counts = {k: int(v) for k, v in zip(words[::2], words[1::2], strict=True)}
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


def candidate_texts(db_url: str) -> list[str]:
    with make_ctx(db_url).sessions() as s:
        return list(s.scalars(select(EntityCandidate.raw_text).order_by(EntityCandidate.id)))


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
