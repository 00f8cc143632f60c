"""Which Claude Code files make one session's transcript group, and in which order groups are read.

A session's transcript is `<project dir>/<sessionId>.jsonl`. Its subagents' transcripts are
`<sessionId>/subagents/agent-<id>.jsonl` beside it; 2.0 versions wrote them into the
project directory itself, as `agent-<id>.jsonl` next to the session files, where only their
records (`sessionId`) say whose they are. Either way a subagent's transcript is part of its
session's group: read with it, after it, and never as a session of its own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from yzos_jobs.files import open_regular
from yzos_jobs.importers.claude_transcript import SUBAGENTS

AGENT_PREFIX = "agent-"  # how Claude Code names a subagent's transcript, in either place
# How much of a top-level subagent transcript is read for the session it belongs to: its first
# record names it among the fields written before the message. Every such file is looked at on
# every import run, so no more than reading its mark costs.
_HEAD_BYTES = 4096
# A key of the record itself: inside a JSON string a quote is escaped, so `\"sessionId\"` in
# a message does not match.
_SESSION = re.compile(rb'"sessionId"\s*:\s*"([^"\\/]{1,200})"')


def _named_session(path: Path) -> str | None:
    """The session a top-level subagent transcript's first record names (`sessionId`), where it
    is another file's (a transcript named after its own session is that session's)."""
    try:
        with open_regular(path) as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return None
    found = _SESSION.search(head)
    if found is None:
        return None
    named = found.group(1).decode("utf-8", "replace")
    # a name that is no file name of its own (`..`, a NUL) names no file beside it
    plain = named not in (".", "..") and "\0" not in named
    return named if plain and named != path.stem else None


class _Directory:
    """The top-level subagent transcripts of one project directory, by the session they name
    (each read once for one listing of groups)."""

    def __init__(self, folder: Path) -> None:
        self.by_session: dict[str, list[Path]] = {}
        try:
            candidates = sorted(folder.glob(f"{AGENT_PREFIX}*.jsonl"))
        except OSError:
            candidates = []
        for path in candidates:
            named = _named_session(path) if path.is_file() else None
            if named is not None:
                self.by_session.setdefault(named, []).append(path.resolve())


def main_transcript(path: Path) -> Path:
    """The session transcript a subagent's transcript belongs to (itself for a main one)."""
    if path.parent.name == SUBAGENTS:
        return path.parent.parent.with_suffix(".jsonl")
    if path.name.startswith(AGENT_PREFIX):
        named = _named_session(path)
        if named is not None:
            return path.parent / f"{named}.jsonl"
    return path


def transcript_groups(files: Sequence[Path]) -> list[list[Path]]:
    """Each session transcript with its subagents' transcripts (the main one first), whichever of
    them were named; a group's other files are found beside it. Older groups first, by the time
    of the main transcript's last record (its modification time where it shows none): a resumed
    session's copies of earlier records come after the records themselves, also where copying
    or syncing the folder gave the older file the newer modification time."""
    groups: dict[Path, set[Path]] = {}
    for path in files:
        groups.setdefault(main_transcript(path), set()).add(path)
    directories: dict[Path, _Directory] = {}
    out: list[tuple[float, list[Path]]] = []
    for main, named in groups.items():
        members = set(named)
        if main.is_file():
            members.add(main.resolve())
        subagents = main.with_suffix("") / SUBAGENTS
        if subagents.is_dir():
            members.update(p.resolve() for p in subagents.glob("*.jsonl") if p.is_file())
        if main.parent not in directories:
            directories[main.parent] = _Directory(main.parent)
        members.update(directories[main.parent].by_session.get(main.stem, []))
        head = main.resolve()
        ordered = sorted(members, key=lambda p: (p != head, str(p)))
        out.append((_last_written(ordered[0]), ordered))
    return [files for _, files in sorted(out, key=lambda item: (item[0], str(item[1][0])))]


def is_subagent(path: Path) -> bool:
    """Whether a transcript is a subagent's: its records are its session's, never requests."""
    return main_transcript(path) != path


# How far from its end a transcript is searched for its last record's time. Every transcript is
# looked at on every import run, unchanged ones too, so this is kept to what reading its mark
# costs; a record writes its time after its message, near its end, and where a long tool output
# comes after it the file's modification time stands in.
_TAIL_BYTES = 16 * 1024
_STAMP = re.compile(rb'"timestamp"\s*:\s*"([0-9T:.+\-]{19,35}Z?)"')


def _last_written(path: Path) -> float:
    """When a transcript's last record was written, as its `timestamp` says (the last one in
    its last bytes), else the file's modification time."""
    try:
        with open_regular(path) as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _TAIL_BYTES))
            tail = fh.read()
        stamps = _STAMP.findall(tail)
        if stamps:
            text = stamps[-1].decode("ascii").replace("Z", "+00:00")
            moment = datetime.fromisoformat(text)
            return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
        return path.stat().st_mtime
    except (OSError, ValueError):
        return 0.0
