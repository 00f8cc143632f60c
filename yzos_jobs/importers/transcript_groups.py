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

import orjson

from yzos_jobs.files import open_regular
from yzos_jobs.importers.claude_transcript import SUBAGENTS

AGENT_PREFIX = "agent-"  # how Claude Code names a subagent's transcript, in either place
# How much of a top-level subagent transcript is read for the session it belongs to: its first
# record names it among the fields written before the message, in its first bytes; where it does
# not (a long prompt first), up to the bound below. Every such file is looked at on every import
# run, so the first bytes are what reading its mark costs, and a longer read is made once per
# file and process.
_HEAD_BYTES = 4096
_FIRST_RECORD_BYTES = 1 << 20
_KNOWN_MAX = 100_000
# A key of the record itself: inside a JSON string a quote is escaped, so `\"sessionId\"` in
# a message does not match. A session id is a string; any other value names no session.
_SESSION = re.compile(rb'"sessionId"\s*:\s*"((?:[^"\\]|\\.){0,1000})"')
# (device, inode, size, modified) → the session named; a file rewritten or replaced is read again
_known: dict[tuple[int, int, int, int], str | None] = {}


def _named_session(path: Path) -> str | None:
    """The session a top-level subagent transcript's first record names (`sessionId`), or None
    where none can be read."""
    try:
        with open_regular(path) as fh:
            st = os.fstat(fh.fileno())
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            if key in _known:
                return _known[key]
            head = fh.read(_HEAD_BYTES)
            found = _SESSION.search(head)
            if found is None and b"\n" not in head:
                head += fh.read(_FIRST_RECORD_BYTES - len(head))
                found = _SESSION.search(head.split(b"\n", 1)[0])
    except OSError:
        return None
    named = None
    if found is not None:
        try:
            named = orjson.loads(b'"' + found.group(1) + b'"')
        except orjson.JSONDecodeError:
            named = None
    if len(_known) >= _KNOWN_MAX:
        _known.clear()
    _known[key] = named
    return named


def _beside(path: Path, named: str | None) -> Path | None:
    """The session transcript beside `path` that `named` names: a plain file name, never a
    path, `..` or the file itself."""
    if not named or named in (".", "..") or any(c in named for c in "/\\\0"):
        return None
    if named == path.stem or len(named.encode("utf-8", "replace")) > 250:
        return None
    return path.parent / f"{named}.jsonl"


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
            main = _beside(path, _named_session(path)) if path.is_file() else None
            if main is not None:
                self.by_session.setdefault(main.stem, []).append(path.resolve())


def main_transcript(path: Path) -> Path:
    """The session transcript a subagent's transcript belongs to (itself for a main one, and
    for a subagent's whose records name no session beside it)."""
    if path.parent.name == SUBAGENTS:
        return path.parent.parent.with_suffix(".jsonl")
    if path.name.startswith(AGENT_PREFIX):
        return _beside(path, _named_session(path)) or path
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
    """Whether a transcript is a subagent's: its records are its session's, never requests. A
    top-level `agent-<id>.jsonl` is, unless its records name it as their own session."""
    if path.parent.name == SUBAGENTS:
        return True
    return path.name.startswith(AGENT_PREFIX) and _named_session(path) != path.stem


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
