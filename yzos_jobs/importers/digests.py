"""Session digests rebuilt from a source file, as the importers queue them for triage: so a
labelled session of the real corpus (or a user's own) can be triaged again by `eval-triage`.

Built by the importers' own parsing code; every session of the file, whole (an open last session
included, ending at the file's modification time).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from yzos_jobs.importers.aider_history import history_sessions
from yzos_jobs.importers.transcript_groups import transcript_groups
from yzos_jobs.importers.transcript_session import transcript_sessions


class SessionDigest(NamedTuple):
    """`key`: an aider session's start as its header writes it ("2024-05-01 10:00:00", as the
    labels do), a Claude Code session's id; `payload`: the digest payload as queued; `line`: an
    aider session's header line (`session_line` in the labels), which tells apart two sessions
    started in the same second."""

    key: str
    payload: dict[str, Any]
    line: int | None = None


def session_digests(path: Path, fmt: str) -> list[SessionDigest]:
    """The digests of the sessions in `path`: an aider history, or a Claude Code transcript (its
    subagents' transcripts are read with it)."""
    if fmt == "aider":
        return [
            SessionDigest(f"{s.started_at:%Y-%m-%d %H:%M:%S}", s.payload(), s.project_line)
            for s in history_sessions(path)
        ]
    if fmt == "claude-code":
        [group] = transcript_groups([path.resolve()])
        return [SessionDigest(s.external_id, s.payload()) for s in transcript_sessions(group)]
    raise ValueError(f"unknown format {fmt!r}")
