"""A closed coding session (aider, Claude Code) as both importers hand it over: its project, its
digest lines (requests, commits, files touched, each on the line of the file it rests on) and
the line-level candidates drawn from them.

Structure only decides what a candidate is:
- The unit is the work item (`work_items`): the requests that lead to one commit, or to one run
  of applied edits, or (Claude Code) to an answer the tool worked out with its tools, or that
  were never carried out, are one task candidate, named by the
  commit's subject (conventional prefix kept as metadata) where there is one, else by its first
  request. Its other requests, commits and files are its evidence (the candidate's context); a
  question after which nothing was edited or committed is evidence of the session (the project
  candidate's context).
- A request's title is its first line (the next where the first is only a greeting: "hi!",
  "Hello,"), or the heading of a plan it hands over ("Implement the following plan:" then
  `# Plan: …`).
- A title needs two word units (a script written without spaces counts each of its characters)
  and must not be structural noise; a title the session repeats is one candidate, and a title
  close to an open task of the project is a sighting of that task (`same_work`). Whether it is
  work is the judge's (and triage's) call.

The digest payload is the one `db/triage_queue.py` documents.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Any, Literal

from yzos_jobs.db.queue import NewCandidate
from yzos_jobs.entity import noise_filter
from yzos_jobs.importers.name_shingles import shingles, similarity
from yzos_jobs.importers.session_events import (
    UNSPACED,
    UNSPACED_CHARS,
    Commit,
    Event,
    FileTouched,
    Request,
    ShellChange,
    ToolCall,
    naming_line,
    split_prefix,
    word_units,
)
from yzos_jobs.importers.work_items import WorkItem, work_items
from yzos_jobs.text import clean_text, storable_name

SOURCE_KIND = "ai_tool"
TITLE_CHARS = 300  # a candidate's title
DIGEST_TEXT_CHARS = 300  # a digest line's text (the triage prompt shows fewer)
CONTEXT_REQUEST_CHARS = 400  # the request quoted in a candidate's context
NEIGHBOURS = 2  # task titles in the project candidate's context
IDLE_QUESTIONS_SHOWN = 8  # questions that led to nothing, in the project candidate's context
FILES_SHOWN = 20  # files edited, in a task candidate's context
ASKED_CHARS = 500  # of a request's text compared with the request before it

LineKind = Literal["request", "commit", "file"]

_HEADING = re.compile(r"^#{1,6}\s+(\S.*)$")
# A list's mark before the first thing asked ("1. Fix this error:", "- [ ] add tests"):
# the item, not its number, names the request.
_LIST_MARK = re.compile(r"^(?:\d{1,2}[.)]|[-*•])\s+(?:\[[ xX]\]\s+)?(?=\S)")


def collapse(text: str, limit: int) -> str:
    """Whitespace runs as one space, at most `limit` characters (a cut text ends with "…")."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"


# Where a script written without spaces meets another, a word ends: `同步到/home/me/notes.md里面`
# ("sync into /home/me/notes.md") is words around a path, not a path.
_SCRIPT_EDGE = re.compile(
    f"(?<=[{UNSPACED_CHARS}])(?=[^\\s{UNSPACED_CHARS}])"
    f"|(?<=[^\\s{UNSPACED_CHARS}])(?=[{UNSPACED_CHARS}])"
)


def is_candidate_title(title: str) -> bool:
    """Two word units, not structural noise, not a line of pasted output."""
    spaced = _SCRIPT_EDGE.sub(" ", title) if UNSPACED.search(title) else title
    return (
        word_units(title) >= 2
        and not noise_filter.is_noise(spaced)
        and not noise_filter.looks_pasted(title)
    )


_QUOTES = {'"': '"', "“": "”", "„": "“", "«": "»", "「": "」", "『": "』", "`": "`"}


def bounded_title(text: str) -> str:
    """A title at most TITLE_CHARS long; one cut at the bound inside a quotation drops the quote
    left open (and what follows it, where two word units come before it), so a name never ends
    in an unbalanced quote."""
    title = collapse(text, TITLE_CHARS)
    if not title.endswith("…"):
        return title
    body = title[:-1]
    open_at: int | None = None
    closing: str | None = None
    for i, ch in enumerate(body):
        if closing is not None:
            if ch == closing:
                open_at, closing = None, None
        elif ch in _QUOTES:
            open_at, closing = i, _QUOTES[ch]
    if open_at is None:
        return title
    kept = body[:open_at].rstrip(" ,:;-–—(")
    if word_units(kept) >= 2:
        return kept + "…"
    # Too little before the quotation to name anything (`claude "/review …`): the quotation is
    # the name, its open quote left out.
    return (body[:open_at] + body[open_at + 1 :]).strip() + "…"


def title_of(text: str, plan: str | None = None) -> str:
    """A request's title: the first heading of the plan it hands over (`plan`, or a heading
    within the few lines after a first line that ends with ':'), else its naming line (the first
    non-empty one, or the next where the first is only a greeting: `naming_line`)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if plan:
        for line in plan.splitlines():
            if m := _HEADING.match(line.strip()):
                return bounded_title(m.group(1))
    if lines and lines[0].endswith(":"):
        for line in lines[1:4]:
            if m := _HEADING.match(line):
                return bounded_title(m.group(1))
    named = naming_line(text)
    # "Hello,\n# Plan: X" is named by its heading; a line of words, by its sentence
    named = m.group(1) if (m := _HEADING.match(named)) else read_on(text, named)
    return bounded_title(_led_into(text, _LIST_MARK.sub("", named, count=1)))


# A short line that only leads into what follows it ("Could you...", "Fix this error:") names
# nothing alone: the line it leads into says what is asked. One word before the colon labels
# what was pasted after it ("Q:", "Error:"): that names no request.
LEAD_IN_UNITS = 6
LEAD_IN_LOOKAHEAD = 3  # lines with words after a lead-in looked at for the one it leads into
_LEAD_IN_ENDS = (":", "：", "...", "…")


def _led_into(text: str, named: str) -> str:
    """`named`, and where it is a lead-in, the line it leads into: the first of the next few
    lines of `text` with two word units of its own (not a fence, an ellipsis, invisible
    characters, one pasted token, the lead-in typed again), as long as the two still read as a
    title, not as pasted output."""
    if not named.endswith(_LEAD_IN_ENDS) or not 2 <= word_units(named) <= LEAD_IN_UNITS:
        return named
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    at = next((i for i, line in enumerate(lines) if line.endswith(named)), None)
    if at is None:
        return named
    worded = (line for line in lines[at + 1 :] if has_words(line))
    for line in itertools.islice(worded, LEAD_IN_LOOKAHEAD):
        line = _LIST_MARK.sub("", line, count=1)
        if line == named or word_units(line) < 2:
            continue
        joined = f"{named} {line}"
        return joined if is_candidate_title(collapse(joined, TITLE_CHARS)) else named
    return named


# A line a terminal or an editor wrapped is long, stops short of a sentence's end and goes on,
# on the next line of its paragraph, with a small letter: the request's line is what was typed
# before the wrap, so the same request typed on one line or wrapped over several is named alike.
# Prose only: a line with the marks of code, a path, a command or a log (`(`, `/`, `=`, `$`,
# `_`, a prompt's `>`) is pasted text, whose next line is the next line of what was pasted. A
# short line is the person's own break ("we're in a new folder" / "this is new").
WRAPPED_CHARS = 60
_SENTENCE_MARKS = tuple(".!?:;。！？：；…")
_NOT_PROSE = re.compile(r"[(){}\[\]<>=/\\_$@|#~^*]")


def read_on(text: str, first: str) -> str:
    """`first`, a line of `text`, with the lines it was wrapped onto (up to TITLE_CHARS)."""
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.strip() == first), None)
    if at is None or _NOT_PROSE.search(first):
        return first
    joined = last = first
    for raw in lines[at + 1 :]:
        line = raw.strip()
        wrapped = len(last) >= WRAPPED_CHARS and not last.endswith(_SENTENCE_MARKS)
        goes_on = line[:1].islower() and " " in line and not _NOT_PROSE.search(line)
        if len(joined) >= TITLE_CHARS or not wrapped or not goes_on:
            break
        joined, last = f"{joined} {line}", line
    return joined


def has_words(text: str) -> bool:
    """Some letter or digit: a commit subject that is only a fence or punctuation has none."""
    return any(unicodedata.category(ch)[0] in "LN" for ch in text)


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
    # A later segment: the events of the segments before it. Its work items are cut over them and
    # its own together, so that work begun before the session was closed as idle and carried on
    # after it is one item; items with nothing of this segment are not proposed again.
    earlier: list[Event] = field(default_factory=list)
    # A later segment: the names the segments before proposed their tasks under, by the line each
    # rests on (as stored). Work carried on here keeps that name, whatever the segments between
    # added to it (a commit made in the middle one of three does not rename it in the third).
    named_before: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # the file's path and the repository's, read from the file system or from what the
        # session printed, as the database stores them (a folder name that is not UTF-8)
        self.file = storable_name(self.file)
        if self.project_path is not None:
            self.project_path = storable_name(self.project_path)
        if self.project is not None:
            self.project = storable_name(self.project)

    @property
    def source_id(self) -> str:
        """What the candidates of this session (or segment) name as their source."""
        return self.external_id if self.segment == 1 else f"{self.external_id}#{self.segment}"

    @property
    def part(self) -> str:
        """The triage part: '' for a whole session, the segment's id for a later segment."""
        return "" if self.segment == 1 else self.source_id

    def digest_lines(self) -> list[dict[str, Any]]:
        """Every request and commit, and each file where the session first touched it."""
        lines: list[dict[str, Any]] = []
        for e in self.events:
            if not _in_digest(e):
                continue  # a command or a tool is how work was done, not what it was
            if isinstance(e, Request):
                lines.append({"line": e.line, "kind": "request", "text": e.asked_for})
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

    def tasks(self, asked_again_similarity: float | None = None) -> list[WorkTask]:
        """The session's work items that are task candidates, in order (see `work_items`); an
        item named as an earlier one of the session is evidence of that one, and an item with
        nothing that names it (its requests too short: "continue", "yes") goes on with the
        item before it. With `asked_again_similarity`, an item whose first request's text is
        at least that close (`name_shingles`, over its first ASKED_CHARS) to the text of the
        first request of the item before it goes on with that item too: the same thing asked
        again after an attempt at it ("fix the error in x.ts" after each commit that did not
        fix it), however differently the commits were worded. The text, not the title: two
        requests that open with the same pasted line ask for different things."""
        items, _ = self._work_items
        ours = {id(e) for e in self.events}
        out: list[WorkTask] = []
        by_key: dict[str, WorkTask] = {}
        before: tuple[frozenset[str], WorkTask] | None = None  # the last item's request, task
        for item in items:
            asked = frozenset[str]()
            if asked_again_similarity is not None and item.requests:
                asked = shingles(item.requests[0].asked_for[:ASKED_CHARS])
            if (
                asked_again_similarity is not None
                and before is not None
                and similarity(asked, before[0]) >= asked_again_similarity
            ):
                before[1].evidence.append(item)
                before = (asked, before[1])
                continue
            named = self._name_as_before(item, ours) if self.earlier else None
            named = named or item.name(is_candidate_title)
            if named is None:
                if before is not None:
                    before[1].evidence.append(item)
                    before = (asked, before[1])
                continue
            line, title, event = named
            title = bounded_title(title)
            key = _title_key(title)
            if key in by_key:
                task = by_key[key]
                task.evidence.append(item)
            else:
                task = by_key[key] = WorkTask(line, title, event, item)
                out.append(task)
            before = (asked, task)
        if not self.earlier:
            return out
        # What the segments before proposed is not proposed again; work carried on here rests on
        # its first line here, a line of this segment's digest, which a triage can name.
        kept: list[WorkTask] = []
        for t in out:
            here = [e for i in [t.item, *t.evidence] for e in _events(i) if id(e) in ours]
            if not here:
                continue
            listed = sorted(e.line for e in here if _in_digest(e)) or sorted(e.line for e in here)
            kept.append(t if t.line in listed else replace(t, line=listed[0]))
        return kept

    def _name_as_before(
        self, item: WorkItem, ours: set[int]
    ) -> tuple[int, str, Request | Commit] | None:
        """A later segment's item named as it was when a segment before proposed it (a sighting
        of that task): by what it had before this segment, under the name stored on the earliest
        of its lines there. None for an item that names nothing of its own before this segment
        (a name stored on its lines is then the task it went on with, not its own)."""
        before = _begun_before(item, ours) if _has_any(item, ours) else item
        named = before.name(is_candidate_title) if before is not None else None
        if named is None:
            return None
        for e in sorted((e for e in _events(item) if id(e) not in ours), key=lambda e: e.line):
            if (stored := self.named_before.get(e.line)) is not None:
                return named[0], stored, named[2]
        return named

    def gathered_before(self, asked_again_similarity: float | None = None) -> list[list[int]]:
        """A later segment: for each of its tasks that gathers work the segments before proposed
        under more than one name (a commit here holding requests proposed there as tasks of
        their own, which one reading of the whole session makes one item), the lines those
        names rest on, one line per name, the line of the name the task keeps first."""
        if not self.named_before:
            return []
        ours = {id(e) for e in self.events}
        gathered: list[list[int]] = []
        for task in self.tasks(asked_again_similarity):
            names: dict[str, int] = {}  # each name (compared as `tasks` keys titles) → its line
            for i in [task.item, *task.evidence]:
                for e in sorted(_events(i), key=lambda e: e.line):
                    stored = self.named_before.get(e.line) if id(e) not in ours else None
                    if stored is not None:
                        names.setdefault(_title_key(stored), e.line)
            kept = names.pop(_title_key(task.title), None)
            if kept is not None and names:
                gathered.append([kept, *sorted(names.values())])
        return gathered

    def idle_questions(self) -> list[Request]:
        """Questions after which nothing was edited or committed: evidence of the session (of
        this segment)."""
        ours = {id(e) for e in self.events}
        return [q for q in self._work_items[1] if id(q) in ours]

    @cached_property
    def _work_items(self) -> tuple[list[WorkItem], list[Request]]:
        """The events cut into work items, once: both the tasks and the questions read them."""
        return work_items(
            sorted([*self.earlier, *self.events], key=lambda e: e.line),
            runs_end_at_request=self.source == "claude_code",
            is_answer=lambda request: noise_filter.looks_like_terminal(naming_line(request.text)),
        )

    def candidates(
        self,
        limit: int,
        same_work: SameWork | None = None,
        asked_again_similarity: float | None = None,
    ) -> list[NewCandidate]:
        """The project and the task candidates, each with the context the judge reads.
        `same_work(project_path, title)`: the name of an open task of the project this work
        continues, or None; such a work item is a sighting of that task.
        `asked_again_similarity`: see `tasks`."""
        rows: list[NewCandidate] = []
        if self.segment > 1 and all(isinstance(e, ToolCall) for e in self.events):
            # only time passed, or the tool went on with its tools for a request of an earlier
            # segment: the session's end moves, nothing new to judge
            return rows
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

        tasks = self.tasks(asked_again_similarity)
        if self.project:
            titles = [t.title for t in tasks[: NEIGHBOURS * 2]]
            asked = [
                f"asked (line {r.line}): {collapse(r.title, 160)}" for r in self.idle_questions()
            ]
            context = "\n".join([head, *titles, *asked[:IDLE_QUESTIONS_SHOWN]])
            add(self.project, "project", self.project_line, context)
        for task in tasks:
            name = task.title
            known = same_work(self.project_path, name) if same_work is not None else None
            lead = head
            if known is not None and known != name:
                lead += f"\ncontinues the task: {known}"
                name = known
            add(name, "task", task.line, lead + "\n" + task.context())
        return rows


@dataclass
class WorkTask:
    """A work item proposed as a task: its name, the event naming it, its evidence."""

    line: int
    title: str
    event: Request | Commit
    item: WorkItem
    evidence: list[WorkItem] = field(default_factory=list)  # items of the same work

    def context(self) -> str:
        """Where the item rests, its requests, commits and files."""
        items = [self.item, *self.evidence]
        lines = sorted({n for i in items for n in i.lines()})
        parts = ["evidence lines: " + ", ".join(map(str, lines))]
        first = True
        for i in items:
            for r in i.requests:
                shown = r.asked_for if first else r.title
                parts.append(f"request (line {r.line}): {collapse(shown, CONTEXT_REQUEST_CHARS)}")
                first = False
            for c in i.commits:
                prefix, _ = split_prefix(c.subject)
                kind = f" ({prefix})" if prefix else ""
                parts.append(f"commit {c.sha}{kind} (line {c.line}): {collapse(c.subject, 300)}")
                if c.body:
                    parts.append("  " + collapse(c.body, CONTEXT_REQUEST_CHARS))
        files = list(dict.fromkeys(f.path for i in items for f in i.files if f.edited))
        if files:
            parts.append("files: " + collapse(", ".join(files[:FILES_SHOWN]), 600))
        return "\n".join(parts)


def _in_digest(e: Event) -> bool:
    """Whether a digest lists the event: a request, a commit, a file where first touched."""
    return not isinstance(e, (ShellChange, ToolCall)) and not (
        isinstance(e, FileTouched) and e.again
    )


def _title_key(title: str) -> str:
    """Titles that differ only in case and spacing name one task."""
    return " ".join(title.casefold().split())


def _events(item: WorkItem) -> list[Event]:
    """The item's requests and commits, then its files and shell changes."""
    return [*item.requests, *item.commits, *item.files, *item.changes]


def _has_any(item: WorkItem, events: set[int]) -> bool:
    """Whether an event of the item is one of `events` (by identity)."""
    return any(id(e) in events for e in _events(item))


def _begun_before(item: WorkItem, ours: set[int]) -> WorkItem | None:
    """What a segment's work item (`ours`: the segment's events) had of its requests and commits
    before the segment, where it began there and goes on in it; else None."""
    if not _has_any(item, ours):
        return None
    requests = [r for r in item.requests if id(r) not in ours]
    commits = [c for c in item.commits if id(c) not in ours]
    if not requests and not commits:
        return None
    return WorkItem(requests=requests, commits=commits)


SameWork = Callable[[str | None, str], str | None]
_TOOL_NAMES = {"aider": "aider", "claude_code": "Claude Code"}


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
