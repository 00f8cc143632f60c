"""A closed coding session (aider, Claude Code) as both importers hand it over: its project, its
digest lines (requests, commits, files touched, each on the line of the file it rests on) and
the line-level candidates drawn from them.

Structure only decides what a candidate is:
- An exchange is a request and what the tool did until the next request. A commit made in it
  names the work (its subject, conventional prefix kept as metadata): each such commit is a task
  candidate and the request is its context; a request no commit followed is a candidate itself.
- A request's title is its first line, or the heading of a plan it hands over ("Implement the
  following plan:" then `# Plan: …`).
- A title needs two word units (a script written without spaces counts each of its characters)
  and must not be structural noise; a title the session repeats is one candidate. Whether it
  is work is the judge's (and triage's) call.

The digest payload is the one `db/triage_queue.py` documents.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from yzos_jobs.db.queue import NewCandidate
from yzos_jobs.entity import noise_filter
from yzos_jobs.text import clean_text

SOURCE_KIND = "ai_tool"
TITLE_CHARS = 300  # a candidate's title
DIGEST_TEXT_CHARS = 300  # a digest line's text (the triage prompt shows fewer)
CONTEXT_REQUEST_CHARS = 400  # the request quoted in a candidate's context
NEIGHBOURS = 2  # request or commit titles before and after, in a candidate's context

LineKind = Literal["request", "commit", "file"]

# Characters of scripts written without spaces between words (Thai, kana, CJK ideographs):
# each counts as a word unit.
_UNSPACED = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A conventional commit prefix: `feat:`, `fix(scope):`, `refactor!:`, the old `aider:`.
_PREFIX = re.compile(r"^([a-z]{2,12})(\([^()\s]{1,40}\))?!?:\s+(\S.*)$")
_HEADING = re.compile(r"^#{1,6}\s+(\S.*)$")


def collapse(text: str, limit: int) -> str:
    """Whitespace runs as one space, at most `limit` characters (a cut text ends with "…")."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


def word_units(text: str) -> int:
    """Whitespace-separated words, a word in a script without spaces counting one unit per
    character of that script."""
    units = 0
    for word in text.split():
        unspaced = len(_UNSPACED.findall(word))
        units += unspaced if unspaced > 1 else 1
    return units


def is_candidate_title(title: str) -> bool:
    return word_units(title) >= 2 and not noise_filter.is_noise(title)


def title_of(text: str, plan: str | None = None) -> str:
    """A request's title: the first heading of the plan it hands over (`plan`, or a heading
    within the few lines after a first line that ends with ':'), else its first non-empty line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if plan:
        for line in plan.splitlines():
            if m := _HEADING.match(line.strip()):
                return collapse(m.group(1), TITLE_CHARS)
    if lines and lines[0].endswith(":"):
        for line in lines[1:4]:
            if m := _HEADING.match(line):
                return collapse(m.group(1), TITLE_CHARS)
    return collapse(lines[0], TITLE_CHARS) if lines else ""


def split_prefix(subject: str) -> tuple[str | None, str]:
    """(conventional prefix, title) of a commit subject: `fix(api): x` → ("fix(api)", "x")."""
    m = _PREFIX.match(subject.strip())
    if m is None:
        return None, subject.strip()
    return m.group(1) + (m.group(2) or ""), m.group(3).strip()


def has_words(text: str) -> bool:
    """Some letter or digit: a commit subject that is only a fence or punctuation has none."""
    return any(unicodedata.category(ch)[0] in "LN" for ch in text)


@dataclass(frozen=True)
class Request:
    line: int  # the first line of the request (1-based line of the file)
    text: str  # the request as typed (bounded)
    title: str


@dataclass(frozen=True)
class Commit:
    line: int
    sha: str
    subject: str
    work: bool = True  # False: a snapshot of the user's own edits, or an /add auto-commit


@dataclass(frozen=True)
class FileTouched:
    line: int
    path: str


Event = Request | Commit | FileTouched


@dataclass
class ClosedSession:
    """One closed session, or one segment of it (text appended after it was first closed)."""

    source: Literal["aider", "claude_code"]  # the importer; activity_sessions.source_kind
    external_id: str
    file: str
    project_path: str | None
    project: str | None
    started_at: datetime
    ended_at: datetime
    project_line: int  # the line the project candidate rests on
    events: list[Event] = field(default_factory=list)
    segment: int = 1

    @property
    def source_id(self) -> str:
        """What the candidates of this session (or segment) name as their source."""
        return self.external_id if self.segment == 1 else f"{self.external_id}#{self.segment}"

    @property
    def part(self) -> str:
        """The triage part: '' for a whole session, the segment's id for a later segment."""
        return "" if self.segment == 1 else self.source_id

    def digest_lines(self) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        for e in self.events:
            if isinstance(e, Request):
                lines.append({"line": e.line, "kind": "request", "text": e.text})
            elif isinstance(e, Commit):
                lines.append({"line": e.line, "kind": "commit", "text": e.subject})
            else:
                lines.append({"line": e.line, "kind": "file", "text": e.path})
        for entry in lines:
            entry["text"] = collapse(entry["text"], DIGEST_TEXT_CHARS)
        return [e for e in lines if e["text"]]

    def payload(self) -> dict[str, Any]:
        """The digest payload, as db/triage_queue.py documents it."""
        data: dict[str, Any] = {
            "source": self.source,
            "file": self.file,
            "project": self.project,
            "project_path": self.project_path,
            "started_at": self.started_at.isoformat(),
            "ended_at": self.ended_at.isoformat(),
            "lines": self.digest_lines(),
        }
        if self.source_id != self.external_id:
            data["source_id"] = self.source_id
        return data

    def tasks(self) -> list[tuple[int, str, Request | Commit]]:
        """(line, title, event) of each task candidate, by the exchange rule."""
        out: list[tuple[int, str, Request | Commit]] = []
        titles: set[str] = set()  # a title repeated in the session is one candidate
        request: Request | None = None
        answered = False

        def add(line: int, title: str, event: Request | Commit) -> None:
            key = " ".join(title.casefold().split())
            if is_candidate_title(title) and key not in titles:
                titles.add(key)
                out.append((line, title, event))

        for e in self.events:
            if isinstance(e, Request):
                if request is not None and not answered:
                    add(request.line, request.title, request)
                request, answered = e, False
            elif isinstance(e, Commit) and e.work:
                title = split_prefix(e.subject)[1]
                add(e.line, title, e)
                answered = answered or is_candidate_title(title)
        if request is not None and not answered:
            add(request.line, request.title, request)
        return sorted(out, key=lambda t: t[0])

    def candidates(self, limit: int) -> list[NewCandidate]:
        """The project and the task candidates, each with the context the judge reads."""
        rows: list[NewCandidate] = []
        if self.segment > 1 and not self.events:
            return rows  # only time passed: the session's end moves, nothing new to judge
        where = self.project_path or "an unknown repository"
        head = f"{_TOOL_NAMES[self.source]} session in {where}"
        if self.project:
            head += f" (project {self.project})"

        def add(raw: str, kind: str, line: int, context: str) -> None:
            raw_text = clean_text(raw, limit)
            if raw_text is None or (kind == "project" and noise_filter.is_noise(raw_text)):
                return  # a task's title was checked by `tasks`
            rows.append(
                NewCandidate(
                    raw_text=raw_text,
                    suggested_kind=kind,
                    source_kind=SOURCE_KIND,
                    source_id=self.source_id,
                    surrounding_text=clean_text(context, limit),
                    created_at=self.started_at,
                    project_path=self.project_path,
                    source_line=line,
                )
            )

        tasks = self.tasks()
        if self.project:
            titles = [t for _, t, _ in tasks[: NEIGHBOURS * 2]]
            add(self.project, "project", self.project_line, "\n".join([head, *titles]))
        items = [e for e in self.events if isinstance(e, Request | Commit)]
        position = {id(e): i for i, e in enumerate(items)}
        for line, title, event in tasks:
            add(title, "task", line, _context(head, items, position[id(event)]))
        return rows


def _context(head: str, items: Sequence[Request | Commit], index: int) -> str:
    """The session's project, the request the candidate answers or is, its commit, and the
    neighbouring requests and commits."""
    event = items[index]
    parts = [head]
    asked = next((items[i] for i in range(index, -1, -1) if isinstance(items[i], Request)), None)
    if asked is not None:
        quoted = collapse(asked.text, CONTEXT_REQUEST_CHARS)
        parts.append(f"request (line {asked.line}): {quoted}")
    if isinstance(event, Commit):
        prefix, _ = split_prefix(event.subject)
        kind = f" ({prefix})" if prefix else ""
        parts.append(f"commit {event.sha}{kind} (line {event.line}): {event.subject}")
    before = [_label(e) for e in items[max(0, index - NEIGHBOURS) : index] if e is not asked]
    after = [_label(e) for e in items[index + 1 : index + 1 + NEIGHBOURS]]
    if before:
        parts.append("before: " + " | ".join(before))
    if after:
        parts.append("after: " + " | ".join(after))
    return "\n".join(parts)


_TOOL_NAMES = {"aider": "aider", "claude_code": "Claude Code"}


def _label(e: Request | Commit) -> str:
    if isinstance(e, Request):
        return f"request: {collapse(e.title, 160)}"
    return f"commit: {collapse(e.subject, 160)}"


def segment_of(session: ClosedSession, events: Sequence[Event], segment: int) -> ClosedSession:
    """The same session narrowed to the events of one segment."""
    return ClosedSession(
        session.source,
        session.external_id,
        session.file,
        session.project_path,
        session.project,
        session.started_at,
        session.ended_at,
        session.project_line,
        list(events),
        segment,
    )
