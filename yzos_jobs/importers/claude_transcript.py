"""Reading Claude Code transcripts: one JSON record per line (`uuid`, `sessionId`, `cwd`, `type`,
`message`, `timestamp`, …), a session's subagents in `<sessionId>/subagents/*.jsonl` beside it.

A record without `uuid` or `sessionId` carries no message (file-history-snapshot, summary,
custom-title, agent-name, …): skipped without a word, except a `queue-operation` (below). What
a record gives (a `Fact`):

- a request: a user turn a person typed. Not a request: a tool result; a record marked
  `isMeta`, `isSidechain`, `isCompactSummary` or `isVisibleInTranscriptOnly` (skill and command
  expansions, subagent prompts, continuation summaries); anything in a subagent's transcript; the
  `[Request interrupted by user…]` marker; text Claude Code or another tool wrapped in tags
  (`<task-notification>`, `<bash-input>`, `<local-command-stdout>`, `<system_instruction>`, …),
  except a slash command's `<command-args>`, which is the request it carries; a bare slash
  command. A request that hands over a plan is titled by the plan's heading; one that is only a
  number, by the option the assistant's last text offered under it (`offered_choice`). A prompt
  typed while Claude Code worked, handed over within the turn, is a request too (`queued`): a
  `queued_command` attachment in prompt mode, or (older versions) text beside a tool's result,
  or, where it wrote neither, the `queue-operation` records alone: the prompt `enqueue`d, then
  `remove`d from the queue as it was handed over (one `dequeue`d is handed over as a user turn
  of its own; `popAll` took the queue back to edit). The request rests on the `enqueue` line
  where the queue recorded the prompt (an attachment handed over beside its removal included:
  the person typed it there); a background task's notice queued the same way (tagged, or a
  JSON object) is none.
- a commit: a Bash (on Windows also PowerShell) tool call running `git commit` whose result
  shows git's `[<branch> <sha>] <subject>` line (possibly after hook output), or, for a quiet
  commit, what a `git log` or `git push` after it printed of the new commit
  (`confirmed_commit`); its subject is the first line of the message the command passed (`-m
  "…"`, or a heredoc), else the one git printed. A call that commits more than once makes each
  commit git printed, named as printed (`_commits_made`). It rests on the line of the tool call.
- a file touched: the path an Edit, MultiEdit, Write or NotebookEdit call names, or an MCP
  server's tool that writes a file (`mcp__xcode-tools__XcodeWrite`, `mcp__filesystem__edit_file`),
  once the call's result shows the edit was made (not rejected by the person, not an error).
- a change handed to a subagent (`ShellChange`): an `Agent` or `Task` call whose structured
  result (`toolUseResult.toolStats`, newer versions) counts files the subagent edited: the work
  of the record that called it (its own transcript's records are no one's).
- a tool call (`ToolCall`): the first call after a request of a tool that worked on it (not the
  session's bookkeeping: a to-do list, plan mode, a question put, a tool looked up; not git
  alone showing or shipping the work), and the first that tried a change (an edit, a changing
  command, a commit) or that the person stopped (a call rejected, the turn interrupted).
- where the repository is: the record's `cwd`; and, when the cwd is a git worktree, its main
  repository where the transcript shows it (a `.git/worktrees/<name>` path in a command's output,
  `git worktree list` naming the main worktree first, `<repo>/.claude/worktrees/<name>` as the
  cwd itself); and the folder each git command ran in,
  so that a session that committed only somewhere else than where it started is placed there.

What a Bash command says of git and of folders is read by `shell_commands`; the session the facts
make, and the repository it worked in, by `transcript_session`.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import orjson

from yzos_jobs.importers import repository as repo
from yzos_jobs.importers.base import parse_json_object, parse_timestamp
from yzos_jobs.importers.closed_session import (
    Commit,
    Event,
    FileTouched,
    Request,
    ShellChange,
    title_of,
)
from yzos_jobs.importers.manifest_name import MANIFESTS, manifest_name
from yzos_jobs.importers.offered_choice import chosen_option
from yzos_jobs.importers.reading import Position, PositionedLine
from yzos_jobs.importers.records import ImportRecordError, record_key
from yzos_jobs.importers.session_events import ToolCall, word_units
from yzos_jobs.importers.shell_commands import (
    COMMAND_CHARS,
    clone_folder,
    cloned_into,
    commands_run_here,
    commit_message,
    commit_messages,
    commits_printed,
    confirmed_commit,
    git_commit_end,
    git_folders,
    git_parts,
    made_folders,
    moved_paths,
    runs_clone,
)
from yzos_jobs.importers.shell_effects import only_version_control, where_it_changes
from yzos_jobs.text import clean_text

SUBAGENTS = "subagents"
REQUEST_CHARS = 2000
CWD_CHARS = 1000  # a longer `cwd` is not read (a database index holds a bounded key)
_MACHINE_FLAGS = ("isMeta", "isSidechain", "isCompactSummary", "isVisibleInTranscriptOnly")
_API_ERROR = "isApiErrorMessage"  # an assistant turn Claude Code wrote itself: an API's error
_INTERRUPTED = re.compile(r"^\[Request interrupted by user[^\]]*\]$")
# What Claude Code writes where the person stopped the work: a call rejected, the turn
# interrupted (the marker, or the result of the call it cut short)
_STOPPED = re.compile(
    r"The user doesn't want to (?:proceed|take this action)|\[Request interrupted by user"
    r"|User rejected (?:tool use|update to)"
)
_OPENING = re.compile(r"<([A-Za-z][\w:.-]*)(?:\s[^<>]*)?>")
_CLOSING = re.compile(r"</([A-Za-z][\w:.-]*)\s*>")
_BLANK_FIRST = re.compile(r"[ \t]*\n[ \t]*\n")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_COMMAND = re.compile(r"^/[A-Za-z][\w:.-]*$")
_WORKTREE_LIST = re.compile(r"\bgit\b[^\n|;&]*\bworktree\s+list\b")
# What Claude Code writes as the text of an empty turn: nobody typed it.
_NO_CONTENT = "(no content)"
_EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
# An MCP server's tool that writes the file its input names (`mcp__xcode-tools__XcodeWrite`,
# `mcp__filesystem__edit_file`): a word of its name says what it does to the file.
_TOOL_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_WRITING_WORDS = frozenset(
    {
        "write",
        "edit",
        "create",
        "update",
        "replace",
        "insert",
        "patch",
        "save",
        "rename",
        "move",
        "delete",
        "overwrite",
        "append",
    }
)
# ... unless another word says it reads (`get_update_status`, `edit_history`: `list`, `history`)
_READING_WORDS = frozenset({"get", "read", "list", "search", "find", "view", "show", "history"})
# ... and version control on a server (`create_pull_request`, `merge_pull_request`, `push_files`):
# like a push or a pull request opened with the shell, it carries out the work before it.
_VERSION_CONTROL_WORDS = frozenset({"pull", "merge", "push", "commit", "branch", "fork"})
_MCP_PATH_INPUTS = ("file_path", "filePath", "path", "relative_path", "destination")
# A tool whose input names a repository or a project on a server writes a file there, not here
# (`mcp__github__create_or_update_file`).
_REMOTE_INPUTS = ("owner", "repo", "repository", "project_id", "projectId")
# A tool call's inputs that name files or folders: the Bash command, the path a tool reads,
# edits or searches.
_PATH_INPUTS = ("command", "file_path", "notebook_path", "path")
# The tool's bookkeeping of its own work and its exchanges with the person, not work on a request:
# a to-do list kept, a plan mode entered or left, a question put, a tool or skill looked up.
_BOOKKEEPING_TOOLS = frozenset(
    {
        "TodoWrite",
        "TodoRead",
        "TaskCreate",
        "TaskUpdate",
        "TaskList",
        "TaskGet",
        "AskUserQuestion",
        "EnterPlanMode",
        "ExitPlanMode",
        "exit_plan_mode",
        "ToolSearch",
        "Skill",
    }
)
# The tools that run a shell command: Bash, and on Windows PowerShell. git is called alike in
# both; what else a command changes (files written, folders made or moved) is read from Bash's
# only: PowerShell's cmdlets, `$null` and here-strings are another language.
_SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
# Tools that hand work to a subagent, whose edits are in its own transcript: newer versions
# count them in the call's structured result (`toolUseResult.toolStats`)
_DELEGATING_TOOLS = frozenset({"Agent", "Task"})
# Tools that read a file or search a folder, and the input naming it.
_LOOKING_TOOLS = {
    "Read": "file_path",
    "NotebookRead": "notebook_path",
    "Glob": "path",
    "Grep": "path",
    "LS": "path",
}


@dataclass(frozen=True)
class Look:
    """A reading or searching tool's call (`key` its input that names a file or folder), or a
    shell command (`key` None), made from a home directory. Read into paths only where a
    session's place comes down to where it looked (`_looked_into` of
    `transcript_session.TranscriptSession`): most sessions are placed before that, so the
    commands of most are never parsed for paths."""

    key: str | None
    named: str
    cwd: str

    def paths(self) -> list[str]:
        """The files (a folder searched: a file in it, `*`) it named by their paths."""
        if self.key is None:
            return repo.paths_typed(self.named, self.cwd)
        path = repo.resolve(self.named, self.cwd)
        if path is None:
            return []
        return [repo.join(path, "*") if self.key == "path" else path]


@dataclass(frozen=True)
class Fact:
    """What one record gives."""

    uuid: str
    session_id: str
    line: int | None  # the line of the main transcript; None in a subagent's
    at: datetime | None
    cwd: str | None
    event: Event | None = None
    main_repository: str | None = None  # shown by a command's output
    git_in: str | None = None  # the folder a git command (or this commit) ran in
    # The record's `gitBranch`: the branch of the repository the session started in, or `HEAD`
    # where it started in none (or in a repository with no commit yet, or a detached HEAD).
    git_branch: str | None = None
    cloned: str | None = None  # a repository a `git clone` made
    made: str | None = None  # a folder a `mkdir` made
    moved: tuple[str, str] | None = None  # a file or folder a `mv` moved: (from, to)
    # A package manifest the session wrote (`package.json`, …) and the name it declares
    manifest: tuple[str, str] | None = None
    origin: str | None = None  # the name of the repository a `git remote add origin` set (git_in)
    # A reading or searching tool's call, or a shell command, from a home directory
    looked: Look | None = None
    # A folder at or above the record's cwd whose `.git` or Claude Code's memory folder (True),
    # or `.gitignore` (False) a tool's call or result shows: where the repository's root may be.
    root_mark: tuple[str, bool] | None = None
    # A request read from the queue's records alone: the record that hands the prompt over, if
    # the file has one after it, is the request instead.
    from_queue: bool = False
    remote: str | None = None  # the name of a repository a remote shows (`git remote -v`, push)


@dataclass(frozen=True)
class _Queued:
    """A prompt typed while Claude Code worked, waiting in its queue."""

    line: int
    at: datetime | None
    stamp: str  # the enqueue record's timestamp as written
    text: str | None  # None: the record holds no prompt (newer versions write it only when handed)
    carried: bool = False  # an attachment carried it to the model before the queue removed it


# How Claude Code starts the expansion of a skill run as a slash command
_SKILL_EXPANSION = "Base directory for this skill:"


def _names_itself(message: str, name: str) -> bool:
    """Whether a slash command's message is only its own name (`init` for `/init`), of a
    command of the user's or of Claude Code, not a plugin's (`feature-dev:feature-dev`)."""
    bare = name.removeprefix("/")
    return message == bare and ":" not in bare


def _asks_in_words(expansion: str) -> bool:
    """Whether a command's expansion starts by asking for something in words: not a skill's or
    a plugin's manual (`Base directory for this skill: …`, a Markdown heading, front matter)."""
    first = expansion.lstrip().split("\n", 1)[0].strip()
    return not first.startswith((_SKILL_EXPANSION, "#", "---", "<"))


@dataclass(frozen=True)
class _Command:
    """A slash command with no request after it, waiting for its expansion."""

    base: Fact  # the command's record
    message: str  # its `<command-message>`
    name: str  # its `<command-name>` (`/init`)


@dataclass
class _Pending:
    """A `git commit` call waiting for its result."""

    session_id: str
    line: int | None
    at: datetime | None
    cwd: str | None
    subject: str | None
    command: str
    body: str = ""
    git_in: str | None = None  # the folder the (last) commit of the call ran in
    # of a call that commits more than once: the folder each `git commit` ran in, in order
    folders: tuple[str | None, ...] = ()
    # (message passed, whether it amends the commit before) of each, where the shell is Bash
    parts: tuple[tuple[tuple[str, str] | None, bool], ...] = ()


def _own_commits(
    made: list[tuple[str, str]], parts: tuple[tuple[tuple[str, str] | None, bool], ...]
) -> list[tuple[str, str]]:
    """Of the commits a call's output shows made, those its own `git commit`s made: each with
    the subject one of them passed, else one per commit that passed none readable (`-F notes`,
    `--no-edit`). A line another command printed alike (a rebase's, a cherry-pick's, a file's
    text) is none of them."""
    passed = Counter(m[0] for m, _ in parts if m is not None)
    unnamed = sum(1 for m, _ in parts if m is None)
    own: list[tuple[str, str]] = []
    for sha, subject in made:
        if passed[subject] > 0:
            passed[subject] -= 1
        elif unnamed > 0:
            unnamed -= 1
        else:
            continue
        own.append((sha, subject))
    return own


def _unread(exc: BaseException) -> str:
    """Why a record could not be read, for a person: what kind of value was wrong."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, TypeError | AttributeError | LookupError):
        return f"a field holds another kind of value than Claude Code writes: {type(exc).__name__}"
    return f"a value it cannot read: {type(exc).__name__}"


def _subagent_edited(outcome: Any) -> bool:
    """Whether a subagent's structured result counts files it edited or lines it changed."""
    stats = outcome.get("toolStats") if isinstance(outcome, dict) else None
    if not isinstance(stats, dict):
        return False
    counts = (stats.get(key) for key in ("editFileCount", "linesAdded", "linesRemoved"))
    return any(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in counts)


def _is_notice(content: str) -> bool:
    """Whether queued content is a background task's notice, written as a JSON object."""
    text = content.strip()
    if not text.startswith("{"):
        return False
    try:
        return isinstance(orjson.loads(text), dict)
    except orjson.JSONDecodeError:
        return False


def _text_parts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
    return []


# A prompt a chat platform relayed through the Agent SDK, naming its sender and address first:
# `[Ann Lee (ann@example.com)]: add a login page`. The sender is no part of the request ("yes"
# stays a short reply).
_RELAYED_FROM = re.compile(r"^\[[^\]\n()]{1,200}\([^()\s\]]{1,200}@[^()\s\]]{1,200}\)\]:\s*")


def typed_text(text: str) -> str:
    """What a person typed in a user turn: the text outside tags, and a slash command's
    arguments when they are words of a request. Text that goes on right after a closing tag,
    with no blank line between, belongs to the tagged block (a tool's trailer: "Full transcript
    available at: …")."""
    kept: list[str] = []
    last = 0
    for start, inner_start, inner_end, end, name in tagged_blocks(text):
        kept.append(_after_tag(text[last:start]) if last else text[last:start])
        inner = text[inner_start:inner_end]
        if name == "command-args" and word_units(inner) >= 2:
            kept.append(inner)  # a request, not a setting (`/model sonnet`)
        last = end
    kept.append(_after_tag(text[last:]) if last else text[last:])
    typed = "\n".join(part.strip() for part in kept if part.strip())
    typed = _RELAYED_FROM.sub("", typed, count=1)
    if _INTERRUPTED.match(typed) or _COMMAND.match(typed):
        return ""
    return typed


def slash_command(text: str) -> tuple[str, str] | None:
    """(`<command-message>`, `<command-name>`) of a slash command record (`<command-name>/init
    </command-name>`), or None where the text is no slash command."""
    if "<command-name>" not in text:
        return None
    blocks = {name: text[inner:end] for _, inner, end, _, name in tagged_blocks(text)}
    if "command-name" not in blocks:
        return None
    return blocks.get("command-message", "").strip(), blocks["command-name"].strip()


def tagged_blocks(text: str) -> Iterator[tuple[int, int, int, int, str]]:
    """(start, inner start, inner end, end, tag name) of each `<name …>…</name>` block, left to
    right, each opening tag paired with the first closing tag of its name after it (an opening
    tag never closed is text). One pass over the text for each kind of tag: a pasted file full
    of `useState<number>` costs what its length does."""
    if "</" not in text:
        return
    closings: dict[str, list[tuple[int, int]]] = {}
    for c in _CLOSING.finditer(text):
        closings.setdefault(c.group(1), []).append((c.start(), c.end()))
    last = 0
    for o in _OPENING.finditer(text):
        if o.start() < last:
            continue  # inside the block just taken
        spans = closings.get(o.group(1))
        if not spans:
            continue
        i = bisect.bisect_left(spans, (o.end(), -1))
        if i == len(spans):
            continue
        close_start, close_end = spans[i]
        yield o.start(), o.end(), close_start, close_end, o.group(1)
        last = close_end


def _after_tag(segment: str) -> str:
    """A segment of text after a closing tag, without the paragraph that continues the tag."""
    if _BLANK_FIRST.match(segment):
        return segment
    blank = _BLANK_LINE.search(segment)
    return segment[blank.end() :] if blank else ""


def writes_file(tool: str) -> bool:
    """Whether a tool a Claude Code session called is an MCP server's tool that writes a file
    (`mcp__filesystem__write_file`, `mcp__xcode-tools__XcodeWrite`); not one that reads, lists
    or searches (`XcodeRead`, `read_file`), nor one that writes no file (`create_pull_request`
    names no path: the caller checks)."""
    parts = tool.split("__", 2) if tool.startswith("mcp__") else []
    words = {w.lower() for w in _TOOL_WORD.findall(parts[2])} if len(parts) == 3 else set()
    return bool(words & _WRITING_WORDS) and not words & _READING_WORDS


def written_path(tool: object, tool_input: dict[str, Any], cwd: str | None) -> str | None:
    """The file a tool call edits: the path an Edit, MultiEdit, Write or NotebookEdit call names,
    or the one an MCP server's writing tool names (`writes_file`; relative to `cwd`), unless its
    input names a repository on a server it writes into; None for any other call."""
    if tool in _EDIT_TOOLS:
        named = tool_input.get("file_path") or tool_input.get("notebook_path")
        return named if isinstance(named, str) and named.strip() else None
    if not (isinstance(tool, str) and tool.startswith("mcp__") and writes_file(tool)):
        return None
    if any(k in tool_input for k in _REMOTE_INPUTS):
        return None
    named = next((tool_input[k] for k in _MCP_PATH_INPUTS if k in tool_input), None)
    if not isinstance(named, str) or not named.strip():
        return None
    return repo.resolve(named, cwd) or named


def changes_on_server(tool: object, tool_input: dict[str, Any], cwd: str | None) -> bool:
    """Whether a call is an MCP server's tool that makes or changes something on its server
    (`n8n_update_partial_workflow`, `create_issue`): a writing tool (`writes_file`) that names no
    file here, and not version control (a pull request opened, a push)."""
    if not (isinstance(tool, str) and tool.startswith("mcp__") and writes_file(tool)):
        return False
    words = {w.lower() for w in _TOOL_WORD.findall(tool.split("__", 2)[2])}
    return not words & _VERSION_CONTROL_WORDS and written_path(tool, tool_input, cwd) is None


def _declared_name(path: str, tool_input: dict[str, Any]) -> tuple[str, str] | None:
    """(the manifest's path, the project name it declares) where a Write call writes a package
    manifest (`manifest_name`)."""
    file_name = repo.name_of(path)
    content = tool_input.get("content")
    if file_name not in MANIFESTS or not isinstance(content, str):
        return None
    declared = manifest_name(file_name, content)
    return (path, declared) if declared else None


def _result_text(part: dict[str, Any]) -> str:
    content = part.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(_text_parts(content))


class TranscriptReader:
    """Reads the records of one session's files (main transcript first, then its subagents) into
    facts; keeps the `git commit` calls whose results have not been read yet."""

    def __init__(self, report: Callable[[ImportRecordError], None]) -> None:
        self.report = report
        self._pending: dict[str, _Pending] = {}
        # Edits and shell commands that change something, waiting for the result that says they
        # were made: one the person rejected or that failed changed nothing
        self._changes: dict[str, Fact] = {}
        self._clones: dict[str, str | None] = {}  # `git clone` calls: the folder each ran in
        # Work handed to a subagent (`Agent`, `Task`), waiting for the result that says whether
        # it edited files
        self._delegated: dict[str, Fact] = {}
        # What a call did that counts once its result shows it done (an origin set, what a
        # `mv` moved, a manifest written): a call rejected or failed did nothing
        self._when_done: dict[str, list[Fact]] = {}
        self._listings: set[str] = set()  # `git worktree list` calls waiting for their result
        self._seen: set[str] = set()
        # What waits in each session's queue, in order: prompts typed while Claude Code worked,
        # and background tasks' notices (kept as None so that each removal pairs with its entry)
        self._queues: dict[str, list[_Queued | None]] = {}
        # Per session, the prompt the queue last handed over (`remove`), for the attachment
        # that carries it to the model next
        self._handed: dict[str, _Queued | None] = {}
        # A slash command with no request after it, waiting for the expansion Claude Code sends
        # the model in the next user record
        self._command: _Command | None = None
        self.repeats = 0  # records whose uuid an earlier record had: copies, the first kept
        self._account: dict[str, bool] = {}  # whether a cwd is a home directory (`_looked_at`)
        # Each session's last text from the assistant: the options a request that is only a
        # number picks from (`offered_choice`)
        self._said: dict[str, str] = {}
        # Per session, the kinds of ToolCall (whether it tried a change) given since its last
        # request: the first of each kind stands for the rest
        self._calls: dict[str, set[bool]] = {}

    def facts(self, lines: Iterable[PositionedLine], subagent: bool) -> Iterator[tuple[int, Fact]]:
        """(offset after the line, fact) for each record that gives one; a malformed line is
        reported and skipped."""
        for where, end, raw in lines:
            if raw is None or not raw.strip():
                continue  # a line past the length bound (reported), or a blank one
            try:
                found = self._record(raw, where, subagent)
            except ImportRecordError as err:
                self.report(err)
                continue
            except (ValueError, TypeError, AttributeError, LookupError, RecursionError) as exc:
                self.report(ImportRecordError(where, f"cannot be read ({_unread(exc)})"))
                continue
            for fact in found:
                if isinstance(fact.event, Request):
                    self._calls.pop(fact.session_id, None)
                    if not fact.event.queued:  # a turn of its own: no attachment pairs past it
                        self._handed.pop(fact.session_id, None)
                yield end, fact

    def recall(self, lines: Iterable[PositionedLine], subagent: bool) -> list[Fact]:
        """The facts of records an earlier import read, read again for what later records pair
        with: a call whose result comes after (a commit, an edit the person let through after
        the session was closed as idle), a prompt waiting in the queue, the last reply's
        options. Nothing in them is reported again or counted as a copy."""
        report, repeats = self.report, self.repeats
        self.report = lambda err: None
        try:
            return [fact for _, fact in self.facts(lines, subagent)]
        finally:
            self.report, self.repeats = report, repeats

    def _record(self, raw: bytes, where: Position, subagent: bool) -> list[Fact]:
        r = parse_json_object(raw, where)
        uuid, sid = record_key(r.get("uuid")), record_key(r.get("sessionId"))
        if r.get("type") == "queue-operation" and sid and not subagent:
            return self._queue_operation(r, where, sid)
        if not uuid or not sid:
            return []  # a record that carries no message
        if uuid in self._seen:
            self.repeats += 1
            return []
        self._seen.add(uuid)
        at = parse_timestamp(r.get("timestamp"), where)
        cwd = r.get("cwd") if isinstance(r.get("cwd"), str) else None
        # a path cut at the bound is no folder (its last name would be a fragment): one past it
        # places nothing
        cwd = clean_text(cwd, CWD_CHARS) if cwd is not None and len(cwd) <= CWD_CHARS else None
        line = None if subagent else where.file_line  # a later segment's too, as in the file
        branch = r.get("gitBranch") if isinstance(r.get("gitBranch"), str) else None
        base = Fact(uuid, sid, line, at, cwd, git_branch=branch)
        message = r.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        kind = r.get("type")
        if kind == "assistant" and isinstance(content, list):
            said = _text_parts(content)
            if said and not subagent and not any(r.get(f) for f in (*_MACHINE_FLAGS, _API_ERROR)):
                self._said[sid] = said[-1]
            return [base, *self._tool_calls(base, content)]
        if kind == "attachment" and not subagent:
            return [base, *self._queued(base, r.get("attachment"))]
        if kind != "user":
            return [base]
        command, self._command = self._command, None
        if command is not None and r.get("isMeta") and not subagent:
            return [base, *self._command_request(command, content)]
        if isinstance(content, list) and any(
            isinstance(p, dict) and p.get("type") == "tool_result" for p in content
        ):
            found = [base, *self._tool_results(base, content, r.get("toolUseResult"))]
            # text typed while the tool ran, which Claude Code (before its queued-command
            # attachments) wrote beside the tool's result
            typed = "\n\n".join(_text_parts(content))
            if typed and not subagent and not any(r.get(flag) for flag in _MACHINE_FLAGS):
                found += self._queued_request(base, typed)
            return found
        if subagent or any(r.get(flag) for flag in _MACHINE_FLAGS):
            return [base]
        if isinstance(message, dict) and message.get("role", "user") != "user":
            return [base]
        # Each content part is a paragraph of its own: the IDE's `<ide_opened_file>` part is
        # followed by the typed one, which does not continue the tag.
        written = "\n\n".join(_text_parts(content))
        if _INTERRUPTED.match(written.strip()):
            return [base, *self._worked_on(base, tried=True)]
        typed = typed_text(written)
        if not typed and line is not None and (command := slash_command(written)) is not None:
            self._command = _Command(base, *command)
        if not typed or line is None or typed == _NO_CONTENT:
            return [base]
        plan = r.get("planContent") if isinstance(r.get("planContent"), str) else None
        text = typed[:REQUEST_CHARS]
        if (option := chosen_option(typed, self._said.get(sid))) is not None:
            request = Request(line, text, title_of(option), option=option)
            return [replace(base, event=request)]
        return [replace(base, event=Request(line, text, title_of(text, plan)))]

    def _root_marks(self, base: Fact, text: str) -> list[Fact]:
        if not base.cwd or (".git" not in text and "memory" not in text):
            return []
        return [
            Fact(base.uuid, base.session_id, None, None, None, root_mark=mark)
            for mark in repo.root_marks(text, base.cwd)
        ]

    def _queued(self, base: Fact, attachment: Any) -> list[Fact]:
        """A prompt typed while Claude Code worked, handed to it within the turn: a
        `queued_command` attachment in prompt mode (not a task's notification), its prompt text
        or (newer versions) text parts. The request rests where the prompt was typed: on the
        queue's record of it (`enqueue`), which the queue removes just before or just after the
        attachment (a prompt the removal read from that record is then this one:
        `TranscriptSession` keeps one of the two)."""
        if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
            return []
        sid = base.session_id
        handed = self._handed.pop(sid, None)
        prompt = "\n\n".join(_text_parts(attachment.get("prompt")))
        if attachment.get("commandMode", "prompt") != "prompt" or not prompt:
            return []
        queue = self._queues.get(sid)
        if handed is not None and handed.text not in (None, prompt):
            handed = None  # another prompt than the one removed: it rests here
        elif handed is None and queue and self._waiting_for(queue[0], prompt):
            # the queue removes it next, with no request of its own
            handed = queue[0] = replace(queue[0], carried=True)
        if handed is not None:
            base = replace(base, line=handed.line, at=handed.at or base.at)
        return self._queued_request(base, prompt)

    @staticmethod
    def _waiting_for(head: _Queued | None, prompt: str) -> bool:
        """Whether the queue's first entry is the prompt an attachment carries before the queue
        removes it: a prompt not carried yet, the same text or none written."""
        return head is not None and not head.carried and head.text in (None, prompt)

    def _queue_operation(self, r: dict[str, Any], where: Position, sid: str) -> list[Fact]:
        """The request of a prompt the queue handed over within the turn (`remove`), or none."""
        operation, content = r.get("operation"), r.get("content")
        queue = self._queues.setdefault(sid, [])
        # what the queue last removed pairs with the attachment that follows it, not a later one
        self._handed.pop(sid, None)
        if operation == "enqueue":
            stamp = r.get("timestamp") if isinstance(r.get("timestamp"), str) else ""
            # a prompt, or none written (newer versions); not a task's notice
            typed = content is None or (isinstance(content, str) and not _is_notice(content))
            at = parse_timestamp(r.get("timestamp"), where)
            queue.append(_Queued(where.file_line, at, stamp, content) if typed else None)
        elif operation == "remove" and queue:
            queued = queue.pop(0)
            if queued is not None and queued.carried:
                return []  # the attachment before this gave its request
            self._handed[sid] = queued
            if queued is not None and queued.text is not None:
                # the line alone is no record's identity: another file has the same line
                uuid = f"queue:{sid}:{queued.stamp}:{queued.line}"
                base = Fact(uuid, sid, queued.line, queued.at, None, from_queue=True)
                return self._queued_request(base, queued.text)
        elif operation == "dequeue" and queue:
            queue.pop(0)  # handed over as a user turn of its own
        elif operation == "popAll":
            queue.clear()  # taken back into the prompt to be edited
        return []

    def _command_request(self, command: _Command, content: Any) -> list[Fact]:
        """The request of a slash command whose expansion a record sent the model: it rests on
        the command's line, is named by the command's message (`init is analyzing your
        codebase…`) or, where that is the command's bare name, by its expansion, which is its
        context. A note Claude Code adds for the model (`<local-command-caveat>`, after
        `/context`) is no expansion."""
        base, message = command.base, command.message
        expansion = typed_text("\n\n".join(_text_parts(content)))
        if not expansion or base.line is None:
            return []
        text = expansion[:REQUEST_CHARS]
        title = title_of(message)
        if _names_itself(message, command.name) and _asks_in_words(expansion):
            # a command's bare name (`/init`, a project's `/github_me`): its expansion says what
            # it asks for ("Please analyze this codebase and create a CLAUDE.md file…")
            title = title_of(expansion)
        request = Request(base.line, text, title, command=True)
        return [replace(base, event=request)]

    def _queued_request(self, base: Fact, prompt: str) -> list[Fact]:
        """The request a queued prompt carries (its tagged blocks left out), or none: not the
        `(no content)` of an empty turn, nor a background task's notice (a JSON object)."""
        typed = typed_text(prompt)
        if not typed or typed == _NO_CONTENT or _is_notice(typed) or base.line is None:
            return []
        text = typed[:REQUEST_CHARS]
        return [replace(base, event=Request(base.line, text, title_of(text), queued=True))]

    def _tool_calls(self, base: Fact, content: list[Any]) -> list[Fact]:
        out: list[Fact] = []
        # Whether a call of the record worked on the request, and whether one tried to change
        # something (made, rejected or failed): one ToolCall stands for all
        worked = tried = False
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "tool_use":
                continue
            tool_input = part.get("input") if isinstance(part.get("input"), dict) else {}
            name = part.get("name") if isinstance(part.get("name"), str) else None
            for key in _PATH_INPUTS:
                if isinstance(named := tool_input.get(key), str):
                    out += self._root_marks(base, named)
            out += self._looked_at(base, name, tool_input)
            if name in _SHELL_TOOLS and isinstance(tool_input.get("command"), str):
                command = tool_input["command"]
                called = part.get("id")
                posix = name == "Bash"
                commits = git_commit_end(command) is not None
                if commits:
                    tried = True  # a commit tried: made, it is the commit; failed, a start
                elif not worked and ("git" not in command or not only_version_control(command)):
                    worked = True  # version control alone carries out the work before it
                if (
                    posix
                    and base.line is not None
                    and isinstance(called, str)
                    and (where := where_it_changes(command)) is not None
                ):
                    shown = clean_text(command, COMMAND_CHARS) or command
                    change = ShellChange(base.line, shown, hosted=where == "code host")
                    tried = True
                    self._changes[called] = Fact(
                        base.uuid, base.session_id, base.line, base.at, base.cwd, change
                    )
                ran = git_folders(command, base.cwd)
                for folder, _ in ran:
                    if folder is not None:
                        out.append(
                            Fact(base.uuid, base.session_id, None, None, None, git_in=folder)
                        )
                if (
                    "origin" in command
                    and isinstance(called, str)
                    and (origins := self._origins_set(base, command))
                ):
                    self._when_done.setdefault(called, []).extend(origins)
                committed_in = [folder for folder, commits in ran if commits]
                if posix and "mkdir" in command:
                    out += [
                        Fact(base.uuid, base.session_id, None, None, None, made=folder)
                        for folder in made_folders(command, base.cwd)
                    ]
                if posix and "mv" in command and isinstance(called, str):
                    self._when_done.setdefault(called, []).extend(
                        Fact(base.uuid, base.session_id, None, None, None, moved=pair)
                        for pair in moved_paths(command, base.cwd)
                    )
                if runs_clone(command) and isinstance(called, str):
                    self._clones[called] = clone_folder(command, base.cwd)
                if (
                    "worktree" in command
                    and _WORKTREE_LIST.search(command)
                    and isinstance(called, str)
                ):
                    self._listings.add(called)
                if commits and isinstance(part.get("id"), str):
                    # PowerShell escapes with backticks (`"`, `n`): its subject is the one git
                    # printed
                    found = commit_message(command) if posix else None
                    subject, body = found or (None, "")
                    self._pending[part["id"]] = _Pending(
                        base.session_id,
                        base.line,
                        base.at,
                        base.cwd,
                        subject,
                        command[:COMMAND_CHARS],
                        body,
                        committed_in[-1] if committed_in else None,
                        # `git commit … && git commit …`
                        tuple(committed_in) if len(committed_in) > 1 else (),
                        tuple(commit_messages(command)) if posix and len(committed_in) > 1 else (),
                    )
            elif base.line is not None and (path := written_path(name, tool_input, base.cwd)):
                touched = FileTouched(base.line, clean_text(path, 1000) or path)
                out += self._made(base, part.get("id"), touched)
                if name == "Write" and (declared := _declared_name(path, tool_input)):
                    manifest = Fact(base.uuid, base.session_id, None, None, None, manifest=declared)
                    if isinstance(called := part.get("id"), str):
                        self._when_done.setdefault(called, []).append(manifest)
                    else:
                        out.append(manifest)
                tried = True
            elif base.line is not None and changes_on_server(name, tool_input, base.cwd):
                # made on the server alone: nothing in the working tree a commit could hold
                change = ShellChange(base.line, str(name), hosted=True)
                out += self._made(base, part.get("id"), change)
                tried = True
            elif isinstance(name, str) and name not in _BOOKKEEPING_TOOLS:
                worked = True
                called = part.get("id")
                if name in _DELEGATING_TOOLS and base.line is not None and isinstance(called, str):
                    task = tool_input.get("description")
                    shown = f"{name}: {task}" if isinstance(task, str) else name
                    change = ShellChange(base.line, clean_text(shown, 1000) or name)
                    self._delegated[called] = replace(base, event=change)
        return [*out, *self._worked_on(base, tried)] if worked or tried else out

    def _worked_on(self, base: Fact, tried: bool) -> list[Fact]:
        """The ToolCall of a record of the main transcript, unless one of its kind (`tried`: a
        change tried, or the work stopped by the person) was given since the session's last
        request: the first stands for the rest."""
        if base.line is None:
            return []  # a subagent's work: its result is the session's, not its calls
        kinds = self._calls.setdefault(base.session_id, set())
        if tried in kinds:
            return []
        kinds.add(tried)
        return [replace(base, event=ToolCall(base.line, tried))]

    def _origins_set(self, base: Fact, command: str) -> list[Fact]:
        """The remote a command sets as a repository's origin, with the folder it ran in (none of
        a command run on another machine, or written into a file)."""
        if (here := commands_run_here(command)) is None:
            return []
        return [
            Fact(base.uuid, base.session_id, None, None, None, git_in=folder, origin=name)
            for folder, part in git_parts(here, base.cwd)
            if folder is not None and (name := repo.origin_set(part)) is not None
        ]

    def _looked_at(self, base: Fact, tool: object, tool_input: dict[str, Any]) -> list[Fact]:
        """What a reading or searching tool, or a shell command, named, from a home directory
        (or a file system's root): where a session started there looked, where it edited
        nothing. Elsewhere the folder a session ran in is its own."""
        if not base.cwd:
            return []
        if (home := self._account.get(base.cwd)) is None:
            home = self._account[base.cwd] = repo.is_account_folder(base.cwd)
        if not home:
            return []
        key = _LOOKING_TOOLS.get(tool) if isinstance(tool, str) else None
        if tool in _SHELL_TOOLS and isinstance(command := tool_input.get("command"), str):
            look = Look(None, command[:COMMAND_CHARS], base.cwd)
        elif key is not None and isinstance(named := tool_input.get(key), str):
            look = Look(key, named, base.cwd)
        else:
            return []
        return [Fact(base.uuid, base.session_id, None, None, None, looked=look)]

    def _made(self, base: Fact, called: object, touched: FileTouched | ShellChange) -> list[Fact]:
        """The file an edit touched (or what a tool changed on its server): now where the call
        has no id to find its result by, else once its result shows the edit was made."""
        fact = Fact(base.uuid, base.session_id, base.line, base.at, base.cwd, touched)
        if not isinstance(called, str):
            return [fact]
        self._changes[called] = fact
        return []

    def _tool_results(self, base: Fact, content: list[Any], outcome: Any = None) -> list[Fact]:
        """What the tool results of a record show made; `outcome` is the record's
        `toolUseResult`, the structured result of its call."""
        out: list[Fact] = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "tool_result":
                continue
            text = _result_text(part)
            out += self._root_marks(base, text)
            if part.get("is_error") and _STOPPED.search(text[:500]):
                out += self._worked_on(base, tried=True)
            if "(fetch)" in text or "To " in text:
                out += [replace(base, remote=name) for name in repo.remote_names(text)]
            call_id = str(part.get("tool_use_id"))
            # an edit the person rejected, or a command that failed (`brew install gh` refused
            # for a licence not accepted), changed nothing; one whose result never came is not
            # known to have been made
            # A change or a commit is known from its result's record, whose uuid it goes by:
            # the call's record may have been imported before the result came (the session
            # closed as idle while the person was away from a permission prompt).
            change = self._changes.pop(call_id, None)
            if change is not None and not part.get("is_error"):
                out.append(replace(change, uuid=base.uuid))
            delegated = self._delegated.pop(call_id, None)
            if delegated is not None and not part.get("is_error") and _subagent_edited(outcome):
                out.append(replace(delegated, uuid=base.uuid))
            listed = call_id in self._listings
            self._listings.discard(call_id)
            if base.cwd and (
                main := repo.main_repository_in(text, base.cwd)
                or (repo.main_worktree_listed(text, base.cwd) if listed else None)
            ):
                out.append(Fact(base.uuid, base.session_id, None, None, None, None, main))
            # (`mv … 2>/dev/null || true` succeeds)
            if (done := self._when_done.pop(call_id, None)) and not part.get("is_error"):
                out += [replace(f, uuid=base.uuid) for f in done]
            if call_id in self._clones:
                clones_in = self._clones.pop(call_id)
                made = [] if part.get("is_error") else cloned_into(clones_in, text)
                out += [Fact(base.uuid, base.session_id, None, None, None, cloned=m) for m in made]
            call = self._pending.pop(call_id, None)
            if call is None or call.line is None:
                continue
            made = commits_printed(text)
            if part.get("is_error") and not made:
                continue  # failed, and git printed no commit (one before a failed push did)
            if call.folders and made:
                out += self._commits_made(base, call, made)
                continue
            done = confirmed_commit(call.command, text, call.subject, made)
            if done is None:
                continue
            sha, printed = done
            subject = call.subject or printed
            if not subject:
                continue
            commit = Commit(call.line, sha, clean_text(subject, 1000) or subject, body=call.body)
            out.append(
                Fact(
                    base.uuid,
                    call.session_id,
                    call.line,
                    call.at,
                    call.cwd,
                    commit,
                    git_in=call.git_in,
                )
            )
        return out

    @staticmethod
    def _commits_made(base: Fact, call: _Pending, made: list[tuple[str, str]]) -> list[Fact]:
        """The commits of a call that commits more than once (`git commit … && git commit …`),
        as git printed them made: named by the subjects it printed, each with the body of the
        message passed with its subject. Where every commit printed one, each takes the folder
        its `git commit` ran in, and one that amends replaces the commit before it."""
        line = call.line
        if line is None:
            return []
        bodies = {m[0]: m[1] for m, _ in reversed(call.parts) if m is not None}
        if call.parts:
            made = _own_commits(made, call.parts)
        made = made[: len(call.folders)]
        aligned = len(call.parts) == len(made)
        out: list[Fact] = []
        for at, (sha, subject) in enumerate(made):
            if not subject:
                continue
            folder = call.folders[at] if len(call.folders) == len(made) else call.git_in
            commit = Commit(
                line, sha, clean_text(subject, 1000) or subject, body=bodies.get(subject, "")
            )
            if aligned and call.parts[at][1] and out:
                out.pop()  # `git commit --amend`: the commit before is no more
            out.append(
                Fact(base.uuid, call.session_id, line, call.at, call.cwd, commit, git_in=folder)
            )
        return out
