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
  of its own; `popAll` took the queue back to edit). The request rests on the `enqueue` line; a
  background task's notice queued the same way (tagged, or a JSON object) is none.
- a commit: a Bash tool call running `git commit` whose result shows git's `[<branch> <sha>]
  <subject>` line (possibly after hook output), or, for a quiet commit, what a `git log` or
  `git push` after it printed of the new commit (`confirmed_commit`); its subject is the first
  line of the message the command passed (`-m "…"`, or a heredoc), else the one git printed. It
  rests on the line of the tool call.
- a file touched: the path an Edit, MultiEdit, Write or NotebookEdit call names, or an MCP
  server's tool that writes a file (`mcp__xcode-tools__XcodeWrite`, `mcp__filesystem__edit_file`),
  once the call's result shows the edit was made (not rejected by the person, not an error).
- where the repository is: the record's `cwd`; and, when the cwd is a git worktree, its main
  repository where the transcript shows it (a `.git/worktrees/<name>` path in a command's output,
  `git worktree list` naming the main worktree first, `<repo>/.claude/worktrees/<name>` as the
  cwd itself); and the folder each git command ran in,
  so that a session that committed only somewhere else than where it started is placed there.
"""

from __future__ import annotations

import bisect
import re
import shlex
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from yzos_jobs.files import open_regular
from yzos_jobs.importers import repository as repo
from yzos_jobs.importers.base import parse_json_object, parse_timestamp
from yzos_jobs.importers.closed_session import (
    ClosedSession,
    Commit,
    Event,
    FileTouched,
    Request,
    ShellChange,
    has_words,
    title_of,
    word_units,
)
from yzos_jobs.importers.offered_choice import chosen_option
from yzos_jobs.importers.reading import LinesBefore, Position, read_lines
from yzos_jobs.importers.records import ImportRecordError, record_key
from yzos_jobs.importers.shell_effects import where_it_changes
from yzos_jobs.text import clean_text

SUBAGENTS = "subagents"
REQUEST_CHARS = 2000
CWD_CHARS = 1000
_MACHINE_FLAGS = ("isMeta", "isSidechain", "isCompactSummary", "isVisibleInTranscriptOnly")
_API_ERROR = "isApiErrorMessage"  # an assistant turn Claude Code wrote itself: an API's error
_INTERRUPTED = re.compile(r"^\[Request interrupted by user[^\]]*\]$")
_OPENING = re.compile(r"<([A-Za-z][\w:.-]*)(?:\s[^<>]*)?>")
_CLOSING = re.compile(r"</([A-Za-z][\w:.-]*)\s*>")
_BLANK_FIRST = re.compile(r"[ \t]*\n[ \t]*\n")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_COMMAND = re.compile(r"^/[A-Za-z][\w:.-]*$")
_PART_END = re.compile(r"[\n|;&]")  # where `git … commit` cannot go on
_GIT_WORD = re.compile(r"\bgit\b")
_COMMIT_WORD = re.compile(r"\bcommit\b")
_COMMITTED = re.compile(r"^\[[^\]\n]+ ([0-9a-f]{7,40})\] (.+)$", re.MULTILINE)
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\s*\1\s*$", re.DOTALL | re.MULTILINE)
_MESSAGE = re.compile(r"""(?:-m|--message)(?:=|\s+)(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""", re.DOTALL)
# What a backslash escapes inside a shell's double quotes: the character itself is meant.
_DOUBLE_QUOTED_ESCAPE = re.compile(r'\\([$`"\\])')
_STDIN_FILE = re.compile(r"(?:-F|--file)(?:=|\s*)-(?!\S)")
# `git commit … && git log …` / `&& git push …`: what shows a quiet commit was made.
_CHAINED = re.compile(r"&&\s*git\s+(?:-\S+\s+)*(log|push)\b")
_LOG_AFTER = re.compile(r"\bgit\s+(?:-\S+\s+)*log\b")
_LOGGED = re.compile(r"^(?:commit )?([0-9a-f]{7,40})(?: (.+))?$", re.MULTILINE)
_PUSHED = re.compile(
    r"^\s*(?:[+ ]\s*)?(?:[0-9a-f]{7,40}\.\.\.?([0-9a-f]{7,40})|\* \[new branch\])\s+\S+\s+->\s+\S+",
    re.MULTILINE,
)
# A shell command's parts (`a && b; c | d`), a part that changes folder (`cd <folder>`, `pushd
# <folder>`), and `git -C <folder>`: where each git of a command ran.
_COMMAND_PARTS = re.compile(r"&&|\|\||[;|\n]")
_CHANGE_FOLDER = re.compile(r"""^\(?\s*(?:cd|pushd)(?:\s+("[^"]*"|'[^']*'|\S+))?\s*$""")
_FOLDER_CHANGE = re.compile(r"\(?\s*(?:cd|pushd)(?:\s|$)")  # understood by the above or not
_GIT_FOLDER = re.compile(r"""\bgit\s+-C\s+("[^"]*"|'[^']*'|[^\s;&|]+)""")
# A git command that reads or writes the repository it runs in (not one that makes one, or only
# reads the user's settings).
_GIT_RUN = re.compile(
    r"(?:^|[\s;&|(])git\s+(?!(?:clone|init|help|--version|--help)\b|config\s+--global\b)"
)
_WORKTREE_LIST = re.compile(r"\bgit\b[^\n|;&]*\bworktree\s+list\b")
_GIT_CALL = re.compile(r"(?:^|[\s;&|(])git\s+")  # git run, whatever it does
_GIT_CLONE = re.compile(r"(?:^|[\s;&|(])git\s+(?:-\S+\s+)*clone\b")
# What git prints when it clones: the new repository's folder as the command named it.
_CLONING_INTO = re.compile(r"^Cloning into (?:bare repository )?'([^'\n]+)'\.\.\.$", re.MULTILINE)
_MKDIR = re.compile(r"^\(?\s*(?:sudo\s+)?mkdir\s+(.+)$", re.DOTALL)
# A program run on another machine: what its command does there says nothing of the folder here
_REMOTE_SHELL = re.compile(r"(?:^|[\s;&|(])ssh\s")
# Where a name stops being one the command spelled out: what the shell expands or substitutes
_EXPANDED = re.compile(r"[{*?$`\[]")
COMMAND_CHARS = 20_000  # of a Bash command searched for what follows its commit
BODY_CHARS = 1000  # of a commit message's body kept as evidence
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
    session's place comes down to where it looked (`TranscriptSession._looked_into`): most
    sessions are placed before that, so the commands of most are never parsed for paths."""

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
    origin: str | None = None  # the name of the repository a `git remote add origin` set (git_in)
    # A reading or searching tool's call, or a shell command, from a home directory
    looked: Look | None = None
    # A folder at or above the record's cwd whose `.git` (True) or `.gitignore` (False) a tool's
    # call or result shows: where the repository's root may be.
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
    text: str


@dataclass(frozen=True)
class _Command:
    """A slash command with no request after it, waiting for its expansion."""

    base: Fact  # the command's record
    message: str  # its `<command-message>`


@dataclass
class _Pending:
    """A `git commit` call waiting for its result."""

    uuid: str
    session_id: str
    line: int | None
    at: datetime | None
    cwd: str | None
    subject: str | None
    command: str
    body: str = ""
    git_in: str | None = None  # the folder the (last) commit of the call ran in


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
    if _INTERRUPTED.match(typed) or _COMMAND.match(typed):
        return ""
    return typed


def command_message(text: str) -> str | None:
    """The `<command-message>` of a slash command record (`<command-name>/init</command-name>`),
    or None where the text is no slash command."""
    if "<command-name>" not in text:
        return None
    blocks = {name: text[inner:end] for _, inner, end, _, name in tagged_blocks(text)}
    if "command-name" not in blocks:
        return None
    return blocks.get("command-message", "").strip()


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


def commit_message(command: str) -> tuple[str, str] | None:
    """(subject, body) of the message a `git commit` command passes: `-m "…"` (its value may be a
    `$(cat <<EOF …)` heredoc), or a heredoc given on standard input (`-F -`, `--file=-`). Only
    what follows `git commit` counts: a heredoc that wrote a file before it is no message."""
    found = git_commit_end(command)
    if found is None:
        return None
    rest = command[found:]
    message: str | None = None
    if m := _MESSAGE.search(rest):
        message = m.group(2)  # single-quoted: as written
        if (quoted := m.group(1)) is not None:
            if quoted.lstrip().startswith("$(") and (heredoc := _HEREDOC.search(quoted)):
                message = heredoc.group(2).replace('\\"', '"')
            else:
                message = _DOUBLE_QUOTED_ESCAPE.sub(r"\1", quoted)  # `\$5`, `\"x\"` as the shell
    elif _STDIN_FILE.search(rest) and (heredoc := _HEREDOC.search(rest)):
        message = heredoc.group(2)
    if not message:
        return None
    lines = [line.strip() for line in message.splitlines()]
    at = next((i for i, line in enumerate(lines) if line), 0)
    first = lines[at] if lines else ""
    if not has_words(first) or first.startswith("$("):
        return None
    return first, "\n".join(line for line in lines[at + 1 :] if line)[:BODY_CHARS]


def commit_subject(command: str) -> str | None:
    """The subject of the message a `git commit` command passes (see `commit_message`)."""
    message = commit_message(command)
    return message[0] if message else None


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


def confirmed_commit(
    command: str, result: str, subject: str | None = None
) -> tuple[str, str | None] | None:
    """(sha, subject git printed) when a `git commit` call's result shows the new commit: git's
    `[<branch> <sha>] <subject>` line, or (after `-q`) a `git log` or `git push` chained with
    `&&` naming it, or a `git log` run after it in the same command (on a line of its own, after
    a heredoc's message) printing the commit's `subject`. None when nothing shows it was made."""
    if done := _COMMITTED.search(result):
        return done.group(1), done.group(2).strip()
    text = command[:COMMAND_CHARS]
    commit = _COMMIT_WORD.search(text)
    if commit is None:
        return None
    line_end = text.find("\n", commit.end())  # the `&& git log` goes on the commit's line
    end = line_end if line_end >= 0 else len(text)
    chained = {m.group(1) for m in _CHAINED.finditer(text, commit.end(), end)}
    # `&& git push -q && git log --oneline -1`: a quiet push prints nothing, the log names it
    if "log" in chained and (logged := _LOGGED.search(result)):
        return logged.group(1), (logged.group(2) or "").strip() or None
    if "push" in chained and (pushed := _PUSHED.search(result)):
        return pushed.group(1) or "", None
    if subject and "nothing to commit" not in result and _LOG_AFTER.search(text, commit.end()):
        # run whether or not the commit was made: the newest commit it printed shows the new
        # one only by its subject (after a failed commit it is an older one)
        logged = _LOGGED.search(result)
        if logged and (logged.group(2) or "").strip() == subject.strip():
            return logged.group(1), subject.strip()
    return None


def _parts_where_run(command: str, cwd: str | None) -> Iterator[tuple[str | None, str]]:
    """(folder, part) for each part of a Bash command other than a `cd` or a `pushd`, in order:
    the folder the parts before it changed into, else the record's cwd (Claude Code writes the
    shell's). None where the folder cannot be told (`cd -`, `cd "$DIR"`, `cd` alone, `cd ~/My\
    App 2>/dev/null`)."""
    folder = cwd
    for part in _COMMAND_PARTS.split(command[:COMMAND_CHARS]):
        part = part.strip()
        if _FOLDER_CHANGE.match(part):
            change = _CHANGE_FOLDER.match(part)
            target = change.group(1) if change else None
            folder = repo.resolve(target, folder) if target and folder else None
        else:
            yield folder, part


def _git_parts(command: str, cwd: str | None) -> Iterator[tuple[str | None, str]]:
    """(folder, part) for each part of a Bash command that runs git, in order: the folder `git
    -C` names, else the one it ran in (`_parts_where_run`)."""
    for folder, part in _parts_where_run(command, cwd):
        if _GIT_CALL.search(part):
            where = folder
            if (named := _GIT_FOLDER.search(part)) and where is not None:
                where = repo.resolve(named.group(1), where)
            yield (repo.normalise(where) if where else None), part


def git_folders(command: str, cwd: str | None) -> list[tuple[str | None, bool]]:
    """(folder, whether it commits) for each git of a Bash command that reads or writes a
    repository (see `_git_parts` for the folder)."""
    return [
        (folder, git_commit_end(part) is not None)
        for folder, part in _git_parts(command, cwd)
        if _GIT_RUN.search(part)
    ]


def clone_folder(command: str, cwd: str | None) -> str | None:
    """The folder the last `git clone` of a Bash command ran in (where the folder git prints,
    `Cloning into '<folder>'...`, is relative to), or None."""
    found = None
    for folder, part in _git_parts(command, cwd):
        if _GIT_CLONE.search(part):
            found = folder
    return found


def commands_run_here(command: str) -> str | None:
    """A Bash command up to the body of its first heredoc (text handed to a program: a file
    written, a message; not commands), or None for one that runs on another machine (`ssh`):
    what it does there says nothing of the folders here."""
    command = command[:COMMAND_CHARS]
    at = command.find("<<")
    end = command.find("\n", at) if at >= 0 else -1
    here = command if end < 0 else command[:end]
    return None if _REMOTE_SHELL.search(here) else here


def made_folders(command: str, cwd: str | None) -> list[str]:
    """The folders the `mkdir` calls of a Bash command run here make, where each runs (after the
    `cd`s before it), each cut before the first name the shell expands (`app/{api,web}` makes
    `app`)."""
    if (here := commands_run_here(command)) is None:
        return []
    return [
        path
        for folder, part in _parts_where_run(here, cwd)
        if folder is not None and (call := _MKDIR.match(part))
        for word in _mkdir_operands(call.group(1))
        if (spelled := _EXPANDED.split(word, 1)[0].rstrip("/\\"))
        and (path := repo.resolve(spelled, folder)) is not None
    ]


# Where an operand of a command stops: a redirection, a subshell's end, a background `&`
_OPERAND_END = re.compile(r"[<>)&]")


def _mkdir_operands(arguments: str) -> list[str]:
    """The folders a `mkdir` names: its words past its options (and the mode `-m` takes), up to
    a redirection, a comment or the end of a subshell."""
    try:
        words = shlex.split(arguments, comments=True)
    except ValueError:  # an unclosed quote: the words as written
        words = arguments.split()
    operands: list[str] = []
    options = True
    skip = False
    for word in words:
        if skip:
            skip = False
        elif options and word == "--":
            options = False
        elif options and word.startswith("--"):
            skip = word == "--mode"
        elif options and word.startswith("-") and len(word) > 1:
            skip = word.endswith("m")  # `-m 755`, `-pm 755`: the mode is the next word
        else:
            operand = _OPERAND_END.split(word, 1)[0]
            if operand:
                operands.append(operand)
            if operand != word:
                break
    return operands


def cloned_into(folder: str | None, result: str) -> list[str]:
    """The repositories a `git clone` run in `folder` made, as git names them in its output."""
    made = (repo.resolve(name, folder) for name in _CLONING_INTO.findall(result))
    return [where for where in made if where is not None]


def git_commit_end(command: str) -> int | None:
    """Where the word `commit` of the first `git … commit` ends (both in one part of the command,
    no `|`, `;`, `&` or line end between them), or None. Each part is read once: the time is
    linear, whatever a hostile command repeats."""
    start = 0
    for end in [*(m.start() for m in _PART_END.finditer(command)), len(command)]:
        if (git := _GIT_WORD.search(command, start, end)) and (
            commit := _COMMIT_WORD.search(command, git.end(), end)
        ):
            return commit.end()
        start = end + 1
    return None


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
        self._origins: dict[str, list[Fact]] = {}  # origins set, waiting for the call's result
        self._listings: set[str] = set()  # `git worktree list` calls waiting for their result
        self._seen: set[str] = set()
        # What waits in each session's queue, in order: prompts typed while Claude Code worked,
        # and background tasks' notices (kept as None so that each removal pairs with its entry)
        self._queues: dict[str, list[_Queued | None]] = {}
        # A slash command with no request after it, waiting for the expansion Claude Code sends
        # the model in the next user record
        self._command: _Command | None = None
        self.repeats = 0  # records whose uuid an earlier record had: copies, the first kept
        self._account: dict[str, bool] = {}  # whether a cwd is a home directory (`_looked_at`)
        # Each session's last text from the assistant: the options a request that is only a
        # number picks from (`offered_choice`)
        self._said: dict[str, str] = {}

    def facts(
        self, lines: Iterable[tuple[Position, int, bytes | None]], subagent: bool
    ) -> Iterator[tuple[int, Fact]]:
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
                detail = (
                    "nested too deeply" if isinstance(exc, RecursionError) else type(exc).__name__
                )
                self.report(ImportRecordError(where, f"cannot be read ({detail})"))
                continue
            for fact in found:
                yield end, fact

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
        cwd = clean_text(r.get("cwd"), CWD_CHARS) if isinstance(r.get("cwd"), str) else None
        line = None if subagent else where.line
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
            found = [base, *self._tool_results(base, content)]
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
        typed = typed_text(written)
        if not typed and line is not None and (message := command_message(written)) is not None:
            self._command = _Command(base, message)
        if not typed or line is None or typed == _NO_CONTENT:
            return [base]
        plan = r.get("planContent") if isinstance(r.get("planContent"), str) else None
        text = typed[:REQUEST_CHARS]
        if (option := chosen_option(typed, self._said.get(sid))) is not None:
            request = Request(line, text, title_of(option), option=option)
            return [replace(base, event=request)]
        return [replace(base, event=Request(line, text, title_of(text, plan)))]

    def _root_marks(self, base: Fact, text: str) -> list[Fact]:
        if not base.cwd or ".git" not in text:
            return []
        return [
            Fact(base.uuid, base.session_id, None, None, None, root_mark=mark)
            for mark in repo.root_marks(text, base.cwd)
        ]

    def _queued(self, base: Fact, attachment: Any) -> list[Fact]:
        """A prompt typed while Claude Code worked, handed to it within the turn: a
        `queued_command` attachment in prompt mode (not a task's notification)."""
        if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
            return []
        prompt = attachment.get("prompt")
        if attachment.get("commandMode", "prompt") != "prompt" or not isinstance(prompt, str):
            return []
        return self._queued_request(base, prompt)

    def _queue_operation(self, r: dict[str, Any], where: Position, sid: str) -> list[Fact]:
        """The request of a prompt the queue handed over within the turn (`remove`), or none."""
        operation, content = r.get("operation"), r.get("content")
        queue = self._queues.setdefault(sid, [])
        if operation == "enqueue":
            stamp = r.get("timestamp") if isinstance(r.get("timestamp"), str) else ""
            typed = isinstance(content, str) and not _is_notice(content)
            at = parse_timestamp(r.get("timestamp"), where)
            queue.append(_Queued(where.line, at, stamp, content) if typed else None)
        elif operation == "remove" and queue:
            queued = queue.pop(0)
            if queued is not None:
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
        codebase…`), and the expansion is its context. A note Claude Code adds for the model
        (`<local-command-caveat>`, after `/context`) is no expansion."""
        base, message = command.base, command.message
        expansion = typed_text("\n\n".join(_text_parts(content)))
        if not expansion or base.line is None:
            return []
        text = expansion[:REQUEST_CHARS]
        request = Request(base.line, text, title_of(message), command=True)
        return [replace(base, event=request)]

    def _queued_request(self, base: Fact, prompt: str) -> list[Fact]:
        """The request a queued prompt carries (its tagged blocks left out), or none."""
        typed = typed_text(prompt)
        if not typed or base.line is None:
            return []
        text = typed[:REQUEST_CHARS]
        return [replace(base, event=Request(base.line, text, title_of(text), queued=True))]

    def _tool_calls(self, base: Fact, content: list[Any]) -> list[Fact]:
        out: list[Fact] = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "tool_use":
                continue
            tool_input = part.get("input") if isinstance(part.get("input"), dict) else {}
            name = part.get("name")
            for key in _PATH_INPUTS:
                if isinstance(named := tool_input.get(key), str):
                    out += self._root_marks(base, named)
            out += self._looked_at(base, name, tool_input)
            if name == "Bash" and isinstance(tool_input.get("command"), str):
                command = tool_input["command"]
                called = part.get("id")
                if (
                    base.line is not None
                    and isinstance(called, str)
                    and (where := where_it_changes(command)) is not None
                ):
                    shown = clean_text(command, COMMAND_CHARS) or command
                    change = ShellChange(base.line, shown, hosted=where == "code host")
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
                    self._origins[called] = origins
                committed_in = [folder for folder, commits in ran if commits]
                if "mkdir" in command:
                    out += [
                        Fact(base.uuid, base.session_id, None, None, None, made=folder)
                        for folder in made_folders(command, base.cwd)
                    ]
                if "clone" in command and _GIT_CLONE.search(command) and isinstance(called, str):
                    self._clones[called] = clone_folder(command, base.cwd)
                if (
                    "worktree" in command
                    and _WORKTREE_LIST.search(command)
                    and isinstance(called, str)
                ):
                    self._listings.add(called)
                if git_commit_end(command) is not None and isinstance(part.get("id"), str):
                    subject, body = commit_message(command) or (None, "")
                    self._pending[part["id"]] = _Pending(
                        base.uuid,
                        base.session_id,
                        base.line,
                        base.at,
                        base.cwd,
                        subject,
                        command[:COMMAND_CHARS],
                        body,
                        committed_in[-1] if committed_in else None,
                    )
            elif base.line is not None and (path := written_path(name, tool_input, base.cwd)):
                touched = FileTouched(base.line, clean_text(path, 1000) or path)
                out += self._made(base, part.get("id"), touched)
            elif base.line is not None and changes_on_server(name, tool_input, base.cwd):
                # made on the server alone: nothing in the working tree a commit could hold
                change = ShellChange(base.line, str(name), hosted=True)
                out += self._made(base, part.get("id"), change)
        return out

    def _origins_set(self, base: Fact, command: str) -> list[Fact]:
        """The remote a command sets as a repository's origin, with the folder it ran in (none of
        a command run on another machine, or written into a file)."""
        if (here := commands_run_here(command)) is None:
            return []
        return [
            Fact(base.uuid, base.session_id, None, None, None, git_in=folder, origin=name)
            for folder, part in _git_parts(here, base.cwd)
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
        if tool == "Bash" and isinstance(command := tool_input.get("command"), str):
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

    def _tool_results(self, base: Fact, content: list[Any]) -> list[Fact]:
        out: list[Fact] = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "tool_result":
                continue
            text = _result_text(part)
            out += self._root_marks(base, text)
            if "(fetch)" in text or "To " in text:
                out += [replace(base, remote=name) for name in repo.remote_names(text)]
            call_id = str(part.get("tool_use_id"))
            # an edit the person rejected, or a command that failed (`brew install gh` refused
            # for a licence not accepted), changed nothing; one whose result never came is not
            # known to have been made
            change = self._changes.pop(call_id, None)
            if change is not None and not part.get("is_error"):
                out.append(change)
            listed = call_id in self._listings
            self._listings.discard(call_id)
            if base.cwd and (
                main := repo.main_repository_in(text, base.cwd)
                or (repo.main_worktree_listed(text, base.cwd) if listed else None)
            ):
                out.append(Fact(base.uuid, base.session_id, None, None, None, None, main))
            if (origins := self._origins.pop(call_id, None)) and not part.get("is_error"):
                out += origins
            if call_id in self._clones:
                clones_in = self._clones.pop(call_id)
                made = [] if part.get("is_error") else cloned_into(clones_in, text)
                out += [Fact(base.uuid, base.session_id, None, None, None, cloned=m) for m in made]
            call = self._pending.pop(call_id, None)
            if call is None or part.get("is_error") or call.line is None:
                continue
            done = confirmed_commit(call.command, text, call.subject)
            if done is None:
                continue
            sha, printed = done
            subject = call.subject or printed
            if not subject:
                continue
            commit = Commit(call.line, sha, clean_text(subject, 1000) or subject, body=call.body)
            out.append(
                Fact(
                    call.uuid,
                    call.session_id,
                    call.line,
                    call.at,
                    call.cwd,
                    commit,
                    git_in=call.git_in,
                )
            )
        return out


def _below(path: str, folder: str) -> bool:
    """Whether `path` lies strictly below `folder`."""
    return repo.is_within(path, folder) and not repo.is_within(folder, path)


def _root_of(start: str, marks: set[tuple[str, bool]]) -> str | None:
    """Of the folders above `start` that `marks` show (folder, whether by its `.git`), the
    innermost shown by its `.git`, else the outermost."""
    above = [m for m in marks if m[0] != start and repo.is_within(start, m[0])]
    depth = {folder: len(repo.segments(folder)) for folder, _ in above}
    if gits := [folder for folder, git in above if git]:
        return max(gits, key=depth.__getitem__)
    return min(depth, key=depth.__getitem__, default=None)


@dataclass
class TranscriptSession:
    """The facts of one session (or of what was added to it since it was last closed)."""

    session_id: str
    file: Path
    facts: list[Fact] = field(default_factory=list)

    def project_path(self) -> str | None:
        cwd = next((f.cwd for f in self.facts if f.cwd), None)
        if cwd is None:
            return None
        shown = next((f.main_repository for f in self.facts if f.main_repository), None)
        cwd = self._committed_in(cwd) or self._cloned_into(cwd) or cwd
        found = (
            shown
            or repo.worktree_main(cwd)
            or self._branch_worktree_main(cwd)
            or self._root_above(cwd)
            or repo.above_hidden(cwd)
            or repo.normalise(cwd)
        )
        if found is None or not repo.is_account_folder(found):
            return self._made_in(found) or found
        # Started in the home directory or on the desktop: where it committed there, the home
        # directory is a repository (`/root` checked out); else the work is in the folder there
        # the session edited files in (a project it made or went into), or ran git in. With none, a
        # commit made there or the one remote its git showed says a repository is there after all
        # (dotfiles kept in git); else the folder its shell went into, or the one its person's
        # requests name, or the one it read, searched and named in commands most; else the
        # hidden folder every edit lies in (a tool's configuration worked on); else no project.
        if self._committed_at(found) or self._origin_set_at(found) is not None:
            return found  # the home directory is the repository, wherever in it the edits are
        edited = [f.event.path for f in self.facts if isinstance(f.event, FileTouched)]
        worked_in = repo.folder_worked_in(found, edited) or self._git_ran_in(found)
        kept_in_git = any(isinstance(f.event, Commit) for f in self.facts) or self._remote()
        if worked_in is None and kept_in_git:
            return found
        place = (
            worked_in
            or repo.project_edited_outside(found, edited)
            or self._shell_moved_to(found)
            or self._folder_named(found)
            or self._looked_into(found)
            or repo.hidden_folder_edited(found, edited)
        )
        return self._made_in(place) or place

    def _made_in(self, folder: str | None) -> str | None:
        """The folder the session made directly inside `folder` (`mkdir app`, `mkdir -p
        app/src`), went into with its shell and made every edit in (plans Claude Code writes by
        itself aside): a project it set up there ("make a project called dashboard-demo", from
        a folder that holds projects). Only where nothing shows a repository in `folder`: Claude
        Code found no branch where the session started, and it committed, cloned, set an origin
        and ran git nowhere in `folder`."""
        if folder is None or self._start_branch() is not None:
            return None
        for f in self.facts:
            if isinstance(f.event, Commit) or f.cloned or f.origin:
                return None
            if f.git_in is not None and repo.is_within(f.git_in, folder):
                return None
        edited = [
            f.event.path
            for f in self.facts
            if isinstance(f.event, FileTouched)
            and f.event.edited
            and not repo.written_by_tool(f.event.path)
        ]
        depth = len(repo.segments(folder))
        made = repo.distinct_folders(
            (
                repo.join(folder, names[depth])
                for f in self.facts
                if f.made
                and repo.is_within(f.made, folder)
                and len(names := repo.segments(f.made)) > depth
            ),
            folder,
        )
        went = [f.cwd for f in self.facts if f.cwd]
        projects = [
            m
            for m in made
            if repo.could_be_project(m)
            and edited
            and all(repo.is_within(path, m) for path in edited)
            and any(repo.is_within(cwd, m) for cwd in went)
        ]
        return projects[0] if projects else None  # edits in one made folder are in no other

    def _committed_at(self, folder: str) -> bool:
        """Whether a commit of the session ran in `folder` itself."""
        key = repo.folder_key(folder, repo.is_windows(folder))
        return any(
            isinstance(f.event, Commit)
            and f.git_in is not None
            and repo.folder_key(f.git_in, repo.is_windows(folder)) == key
            for f in self.facts
        )

    def _origin_set_at(self, folder: str) -> str | None:
        """The name of the origin the session last set for a repository in `folder` itself
        (`git remote add origin …` run there), or None."""
        key = repo.folder_key(folder, repo.is_windows(folder))
        names = [
            f.origin
            for f in self.facts
            if f.origin is not None
            and f.git_in is not None
            and repo.folder_key(f.git_in, repo.is_windows(folder)) == key
        ]
        return names[-1] if names else None

    def _looked_into(self, start: str) -> str | None:
        """The folder in `start` the session read, searched and named in commands most
        (`folder_worked_in`); where its git ran in repositories inside that folder (it holds
        them: `~/code`), the one of them it looked into most (None where two tie). Not where it
        edited a file in `start` itself (`/root/install.sh`): its work was there."""
        depth = len(repo.segments(start)) + 1
        for f in self.facts:
            if isinstance(f.event, FileTouched) and f.event.edited:
                names = repo.segments(f.event.path)
                if len(names) == depth and repo.is_within(f.event.path, start):
                    return None
        looked = [path for f in self.facts if f.looked for path in f.looked.paths()]
        folder = repo.folder_worked_in(start, looked)
        if folder is None:
            return None
        ran = repo.distinct_folders((f.git_in for f in self.facts if f.git_in), start)
        inside = [g for g in ran if repo.is_within(g, folder) and not repo.is_within(folder, g)]
        repositories = [g for g in inside if not any(_below(g, o) for o in inside)]
        if not repositories:
            return folder
        ranked = sorted(
            ((sum(repo.is_within(p, g) for p in looked), g) for g in repositories), reverse=True
        )
        if len(ranked) > 1 and ranked[0][0] == ranked[1][0]:
            return None
        return ranked[0][1]

    def _shell_moved_to(self, start: str) -> str | None:
        """The folder the session's shell went into from `start` and worked in (Claude Code writes
        each record's `cwd` after a `cd`): the one outermost such folder that could be a project's
        (`~/app`, where `~/app/src` is visited too)."""
        moved = repo.distinct_folders((f.cwd for f in self.facts if f.cwd), start)
        kept = [path for path in moved if repo.could_be_project(path)]
        outermost = [p for p in kept if not any(o != p and repo.is_within(p, o) for o in kept)]
        return outermost[0] if len(outermost) == 1 else None

    def _folder_named(self, start: str) -> str | None:
        """The one folder the person's own requests name by its path (`do you have access to
        C:\\Projects\\app?`), where the session worked nowhere: what it was about."""
        named = (
            folder
            for f in self.facts
            if isinstance(f.event, Request) and not f.event.command
            for folder in repo.folders_named(f.event.text, start)
        )
        folders = repo.distinct_folders(named, start)
        return folders[0] if len(folders) == 1 else None

    def _git_ran_in(self, start: str) -> str | None:
        """The one folder other than `start` the session's git commands ran in (`cd <folder> &&
        git status`, `git -C <folder> log`): from a home directory that edited nothing with the
        editor's tools, the repository it went into and worked on with the shell."""
        folders = repo.distinct_folders((f.git_in for f in self.facts if f.git_in), start)
        return folders[0] if len(folders) == 1 else None

    def _committed_in(self, start: str) -> str | None:
        """The folder every commit of the session ran in, where that is not the folder it started
        in, and the start folder shows no repository: Claude Code found no branch there, and no
        git command ran there. The session went into the repository it worked in, from a folder
        that holds repositories or from beside it; or it started inside the folder it committed
        in (a repository with no commit yet, where Claude Code finds no branch), whatever git
        ran where it started. Started in a repository: see `_moved_to_commit`."""
        if self._start_branch() is not None:
            return self._moved_to_commit(start)
        windows = repo.is_windows(start)

        def key(path: str | None) -> str | None:
            return repo.folder_key(path, windows)

        folders = {f.git_in for f in self.facts if isinstance(f.event, Commit)}
        if len({key(f) for f in folders}) != 1:
            return None
        folder, begun = folders.pop(), key(repo.normalise(start))
        if folder is None or key(folder) == begun:
            return None
        if repo.is_within(start, folder):
            return folder  # committed from a folder above the start: the start is inside it
        return None if any(key(f.git_in) == begun for f in self.facts) else folder

    def _moved_to_commit(self, start: str) -> str | None:
        """Where a session started in a repository: a commit from a folder in it (or above it)
        is its own, but where every commit ran in one folder outside it, and every file edited
        lies in that folder (one that could be a project's), the session worked there (started
        in one checkout, it kept the notes of another)."""
        folders = {f.git_in for f in self.facts if isinstance(f.event, Commit)}
        edited = [f.event.path for f in self.facts if isinstance(f.event, FileTouched)]
        if len(folders) != 1 or (folder := folders.pop()) is None or not edited:
            return None
        if repo.is_within(folder, start) or repo.is_within(start, folder):
            return None
        if not repo.could_be_project(folder):
            return None  # a worktree made in scratch space (`/tmp/…/scratchpad`) to verify
        return folder if all(repo.is_within(path, folder) for path in edited) else None

    def _start_branch(self) -> str | None:
        """The branch Claude Code found where the session started; None outside a repository
        (`HEAD`, or no branch written)."""
        branch = next((f.git_branch for f in self.facts if f.git_branch is not None), None)
        return None if branch in (None, "", "HEAD") else branch

    def _cloned_into(self, start: str) -> str | None:
        """The repository the session cloned, where it started in no repository, cloned one
        only, committed nothing, and edited nothing in the start folder outside it (a tool's
        hidden folder aside): the session went to work on what it cloned."""
        if self._start_branch() is not None or any(isinstance(f.event, Commit) for f in self.facts):
            return None  # a commit places the session (see `_committed_in`)
        made = {f.cloned for f in self.facts if f.cloned}
        if len(made) != 1:
            return None
        clone = made.pop()
        depth = len(repo.segments(start))
        for f in self.facts:
            if isinstance(f.event, FileTouched) and repo.is_within(f.event.path, start):
                below = repo.segments(f.event.path)[depth : depth + 1]
                hidden = bool(below) and below[0].startswith(".")  # a tool's own folder
                if not repo.is_within(f.event.path, clone) and not hidden:
                    return None
        return clone

    def _root_above(self, start: str) -> str | None:
        """The repository's root above the folder a session started in, where Claude Code found
        a branch there (a subfolder of the repository, `<repo>/backend`): the innermost folder
        above it whose `.git` the session showed, else the outermost whose `.gitignore` it
        showed, else the outermost it committed in (`cd <repo> && git commit`); None where the
        start folder's own `.git` showed, or nothing above it did."""
        if self._start_branch() is None or (begun := repo.normalise(start)) is None:
            return None
        marks = {f.root_mark for f in self.facts if f.root_mark is not None}
        if (begun, True) in marks:
            return None
        if (root := _root_of(begun, marks)) is not None:
            return root
        committed = {
            (f.git_in, False)
            for f in self.facts
            if f.git_in
            and f.git_in != begun
            and isinstance(f.event, Commit)
            and not repo.is_account_folder(f.git_in)
        }
        return _root_of(begun, committed)

    def _branch_worktree_main(self, cwd: str) -> str | None:
        """The repository of a worktree folder named after a branch, where the session started
        in a repository (Claude Code found a branch)."""
        if self._start_branch() is None:
            return None
        branches = {f.git_branch for f in self.facts if f.git_branch and f.git_branch != "HEAD"}
        return repo.branch_worktree_main(cwd, sorted(branches))

    def _remote(self) -> str | None:
        """The one remote the session's git commands showed (`git remote -v`, `git push`)."""
        remotes = {f.remote for f in self.facts if f.remote}
        return remotes.pop() if len(remotes) == 1 else None

    def _project_name(self, path: str | None) -> str | None:
        """The folder's name; for a home directory kept as a repository (dotfiles, or a checkout
        made there) or a hidden folder kept as one (`Documents/.claude`), the name its one remote
        shows: the folder's is the account's or a tool's."""
        name = repo.name_of(path)
        if path and (repo.is_account_folder(path) or (name or "").startswith(".")):
            return self._origin_set_at(path) or self._remote() or name
        return name

    def closed(self, segment: int = 1, project_path: str | None = None) -> ClosedSession | None:
        """As a closed session; None without a single timestamp."""
        times = [f.at for f in self.facts if f.at is not None]
        if not times:
            return None
        path = project_path or self.project_path()
        # A prompt read from the queue's records that the next request hands over (an attachment,
        # a user turn) is that request's.
        others = sorted(
            (f.line, f.event.text)
            for f in self.facts
            if isinstance(f.event, Request) and not f.from_queue and f.line is not None
        )

        other_lines = [line for line, _ in others]

        def handed_over(f: Fact) -> bool:
            if not (f.from_queue and isinstance(f.event, Request) and f.line is not None):
                return False
            after = bisect.bisect_right(other_lines, f.line)
            return after < len(others) and others[after][1] == f.event.text

        events = sorted(
            (
                f.event
                for f in self.facts
                if f.event is not None and f.line is not None and not handed_over(f)
            ),
            key=lambda e: e.line,
        )
        seen_files: set[str] = set()
        kept: list[Event] = []
        for e in events:
            if isinstance(e, FileTouched):
                e = replace(e, again=e.path in seen_files)
                seen_files.add(e.path)
            kept.append(e)
        first = min((f.line for f in self.facts if f.line is not None), default=1)
        return ClosedSession(
            "claude_code",
            self.session_id,
            str(self.file),
            path,
            self._project_name(path),
            min(times),
            max(times),
            first,
            kept,
            segment,
        )


def add_facts(
    sessions: dict[str, TranscriptSession], facts: Iterable[tuple[int, Fact]], path: Path
) -> None:
    """File each fact under its session (a session is named after the file it first appears
    in: the main transcript, read first)."""
    for _, fact in facts:
        session = sessions.get(fact.session_id)
        if session is None:
            session = sessions[fact.session_id] = TranscriptSession(fact.session_id, path)
        session.facts.append(fact)


def transcript_sessions(files: Sequence[Path]) -> list[ClosedSession]:
    """The sessions of one transcript group (the main transcript first, then its subagents'),
    each closed whole, as the importer would write it on a first import."""
    reader = TranscriptReader(lambda err: None)
    sessions: dict[str, TranscriptSession] = {}
    for path in files:
        before = LinesBefore(path, 0)
        with open_regular(path) as fh:
            lines = (
                (Position(before, n), end, raw)
                for n, end, raw in read_lines(
                    fh, 0, keep_unfinished=False, on_long_line=lambda n: None
                )
            )
            add_facts(sessions, reader.facts(lines, subagent=path.parent.name == SUBAGENTS), path)
    closed = (s.closed() for _, s in sorted(sessions.items()))
    return [c for c in closed if c is not None]
