"""Work items of a closed coding session, by what the tool's log shows was done.

A commit closes a work item: the requests since the previous work item, and the edits made for
them, lead to it. A commit that follows another with no request between them is a work item of
its own (aider's watch mode committing each `AI!` comment, Claude Code committing a plan in
steps), with no request, unless its subject names something the one before named
(`_same_thing`) or, where the tool commits each reply's edits (aider), nothing was edited
between them: then it goes on with that item (aider commits what its linter or formatter changed
right after the reply's own commit, "style: run linter", with no edit of the model's between).
Past the session's last commit (or in a session that never commits), a run of applied edits (or
of shell commands that changed something: `shell_effects`) ends at the next request: the requests
that led to it are one work item.
Where the tool commits only when asked (`runs_end_at_request`: Claude Code), a run of edits ends at
the next request wherever it is: a person asks for one thing after another and then for a commit
of them all, and each thing asked is a work item (the commit names the item it closes); a commit
with nothing edited since the one run of edits not committed yet is that run's (one that changed
only what is on the code host, issues filed, left nothing to commit). Aider
commits each reply's edits as it applies them, and where auto-commits are off its user's own
commit gathers what the requests before it were for (docs/extraction.md has the figures).
Requests after which nothing was edited or committed are work asked for and never carried out
(the model unreachable, the session interrupted, the history ending): together, one work item.
A question among them (`Request.question`) belongs to no work item: it is evidence of the
session. Where runs end at requests, a request the tool worked on with its tools (`ToolCall`: it
read, searched, ran commands) without editing anything, trying to or being stopped (an edit
rejected, a change that failed, the turn interrupted: a failed start, which the next request
corrects), such as a review, an analysis or a diagnosis, was carried out too: it is a work item
of its own once the next request asks for something else. A short reply to it (under
SHORT_REPLY_UNITS word units: "yes", "do it", "option 2") goes on with it, and so does what that
reply leads to; a question so worked on goes on with the work after it, as one not worked on
does. A request that only answers the tool (`is_answer`: the install command it asked for, a
failure pasted back) goes on with the request before it, after work on it or after its edits;
after a commit it starts the next item, as any request does. A request
typed while the tool was working (`Request.queued`) joins the work in progress; so does a slash
command's expansion (`Request.command`) unless a commit ended it.

A work item is named by its first commit whose subject is a name (conventional prefix left out),
else by its first request whose title is one (a typed request before a slash command's expansion;
one that asks for something before a question, and a question before a short reply to it); an
item with neither is no task candidate. Its
other requests, commits and files are its evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from yzos_jobs.importers.session_events import (
    Commit,
    Event,
    FileTouched,
    Request,
    ShellChange,
    ToolCall,
    shared_subject_words,
    split_prefix,
    word_units,
)

# A reply under this many word units ("yes", "do it", "ok go ahead") goes on with the request
# before it rather than asking for something else.
SHORT_REPLY_UNITS = 4


@dataclass
class WorkItem:
    requests: list[Request] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    files: list[FileTouched] = field(default_factory=list)
    changes: list[ShellChange] = field(default_factory=list)  # made with the shell
    edited: bool = False
    # edited something in the working tree (a file, or with the shell), not only on the code host
    worked_tree: bool = False
    # Since the item's last request the tool worked with its tools, and (`tried`) some call
    # tried a change or the person stopped the work: with nothing edited (`edited` wins), a
    # failed start
    worked_on: bool = False
    tried: bool = False

    @property
    def done(self) -> bool:
        return self.edited or bool(self.commits)

    def name(self, is_name: Callable[[str], bool]) -> tuple[int, str, Request | Commit] | None:
        """(line, title, event) naming the item, or None."""
        for c in self.commits:
            title = split_prefix(c.subject)[1]
            if is_name(title):
                return c.line, title, c
        # typed ones first, and of those the ones that ask for something: a question the work
        # went on from ("hello, who are you?", "can you download videos?") names it only where
        # no request asks for something in words of its own (a short reply, "yes please", says
        # less than the question it answers)
        for r in sorted(self.requests, key=lambda r: (r.command, _naming_rank(r))):
            if is_name(r.title):
                return r.line, r.title, r
        return None

    def lines(self) -> list[int]:
        return sorted({e.line for e in [*self.requests, *self.commits]})

    def edited_since(self, files: int, changes: int) -> bool:
        """Whether something was edited past the item's first `files` files and `changes`
        changes (since its last commit)."""
        return bool(self.changes[changes:]) or any(f.edited for f in self.files[files:])

    def split_off(self, files: int, changes: int) -> WorkItem:
        """A new item of the edits past this item's first `files` files and `changes` changes,
        taken from this one (what was edited after its last commit, for the next)."""
        later = WorkItem(files=self.files[files:], changes=self.changes[changes:])
        del self.files[files:], self.changes[changes:]
        later.edited = bool(later.changes) or any(f.edited for f in later.files)
        later.worked_tree = any(not c.hosted for c in later.changes) or any(
            f.edited for f in later.files
        )
        return later


def _naming_rank(request: Request) -> int:
    """How well a request names the work it is part of: one asking for something in words of
    its own (0), a question (1), a short one (2). A short request is most often a reply, even
    where it comes first in its item ("hi claude", "ok done", "leave it" answering what the
    assistant offered), and at times a short order ("Add dark mode") that a question after it
    then names instead."""
    if request.question:
        return 1
    return 2 if word_units(request.text) < SHORT_REPLY_UNITS else 0


def _same_thing(commit: Commit, before: list[Commit]) -> bool:
    """Whether a commit right after another (no request between them) goes on with the same
    thing: its subject names something the one before named ("add generic derivative
    interface", then "regenerate documentation for derivative methods"). A plan committed in
    steps ("Phase 1: …", "Phase 2: …"), or watch mode's comments, are items of their own where
    each names its own thing."""
    return bool(before) and bool(shared_subject_words(commit.subject, before[-1].subject))


def _held_by_commit(items: list[WorkItem]) -> int:
    """From which item on a commit made with nothing edited since holds the items before it:
    the one run of edits not committed yet, where it is the only one since the last commit, and
    the requests answered without edits after it (a test run, a check of that work); else none
    (len(items)). Several runs are what a commit "of them all" is of: it holds none of them; nor
    does it hold requests answered with no run before them, which were work of their own. A run
    that changed only what is on the code host (issues filed) left nothing the commit holds."""
    uncommitted = []
    for at in range(len(items) - 1, -1, -1):
        if items[at].commits:
            break
        if items[at].edited:
            uncommitted.append(at)
    if len(uncommitted) == 1 and items[uncommitted[0]].worked_tree:
        return uncommitted[0]
    return len(items)


def work_items(
    events: Sequence[Event],
    *,
    runs_end_at_request: bool = False,
    is_answer: Callable[[Request], bool] = lambda request: False,
) -> tuple[list[WorkItem], list[Request]]:
    """(work items, questions that led to nothing) of a session's events, in order.
    `runs_end_at_request`: a run of edits ends at the next request before a commit too.
    `is_answer`: whether a request only answers the tool (output pasted, a command typed at the
    prompt) rather than asking for something: where runs end at requests, it goes on with the
    work on the request before."""
    items: list[WorkItem] = []
    idle: list[Request] = []
    current = WorkItem()
    committed = False  # the current item's last action was a commit
    since_commit = (0, 0)  # how many files and changes the current item had at its last commit

    def close() -> None:
        nonlocal current, committed
        if current.done:
            items.append(current)
        else:
            asked = [r for r in current.requests if not r.question]
            idle.extend(r for r in current.requests if r.question)
            if asked:
                # asked for, never carried out; the files added for it are its evidence
                items.append(WorkItem(requests=asked, files=current.files))
        current, committed = WorkItem(), False

    # Edits lead to the next commit; past the last one (or where runs end at requests: anywhere),
    # a run of edits ends at the next request.
    last_commit = -1
    if not runs_end_at_request:
        last_commit = max(
            (i for i, e in enumerate(events) if isinstance(e, Commit) and e.work), default=-1
        )
    for at, e in enumerate(events):
        if isinstance(e, Request):
            joins = e.queued or (e.command and not committed)  # a commit ended the work
            if not joins and (
                committed
                or (
                    current.edited
                    and at > last_commit
                    and not (runs_end_at_request and is_answer(e))
                )
            ):
                close()  # a new request after a commit or a run of edits starts the next item
            elif (
                not joins
                and runs_end_at_request
                and current.worked_on
                and not current.tried
                and not all(r.question for r in current.requests)  # asked about, not for
                and word_units(e.text) >= SHORT_REPLY_UNITS
                and not is_answer(e)
            ):
                close()  # the request before was answered after work on it: its own item
            current.requests.append(e)
            if not joins:  # the work on the request before goes on
                current.worked_on = current.tried = False
        elif isinstance(e, Commit):
            if not e.work:
                continue  # a snapshot of the user's own edits or an /add commit: evidence only
            if (
                committed
                and not _same_thing(e, current.commits)
                and (runs_end_at_request or current.edited_since(*since_commit))
            ):
                # a commit after a commit: the next work item, which the edits since are for
                later = current.split_off(*since_commit)
                close()
                current = later
            elif (
                runs_end_at_request
                and not current.edited
                and (held := _held_by_commit(items)) < len(items)
            ):
                # nothing edited since the one run of edits not committed yet: the commit is of
                # that run, and the requests since ("run the tests", "commit it") are its too
                done, since = items[held], items[held + 1 :]
                del items[held:]
                for later in [*since, current]:
                    done.requests += later.requests
                    done.files += later.files
                    done.changes += later.changes
                current = done
            current.commits.append(e)
            committed = True
            since_commit = (len(current.files), len(current.changes))
        elif isinstance(e, ToolCall):
            current.worked_on = True
            current.tried = current.tried or e.tried
        elif isinstance(e, ShellChange):
            current.changes.append(e)
            current.edited = True
            current.worked_tree = current.worked_tree or not e.hosted
        else:
            current.files.append(e)
            current.edited = current.edited or e.edited
            current.worked_tree = current.worked_tree or e.edited
    close()
    return items, idle
