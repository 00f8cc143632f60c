"""Reading aider chat histories: sessions, their requests, commits, files touched and repository.

A session starts at each header aider has written: `# aider chat started at <time>`, the
capitalised `# Aider chat started at` of its first versions, either after a UTF-8 BOM. In a
session, `#### ` lines are the user's (consecutive ones form one message), `> ` lines are aider's
own output (the command line, `Git repo: …`, `Commit <sha> <subject>`, `Added X to the chat`),
and so are unprefixed lines that continue such a line without a blank line between (a
multi-line `--message`, a dump); everything else is the assistant's. The first versions wrote
their output as `_…_` lines and a request as `#### > text`.

What is not a request, by structure: a command (`/add …`; `/ask`, `/code`, `/architect`,
`/context`, `/copy-context` carry the request after them, which aider then logs again), an answer
to one of aider's questions (`… (Y)es/(N)o … [Yes]: all`), the prompt aider writes in
watch-files mode (code excerpts marked `│ ⋮ █`), and an architect echo (the architect's reply,
logged again as a `####` message for the editor model: its first line is the first line of the
reply just above it). A commit that follows `Committing X before applying edits.` or the first
versions' `Commit before the chat proceeds [y/n/commit message]?` snapshots the user's own edits,
one right after `Added X to the chat` is an old `/add` auto-commit: they stay in the digest but
are not work items of their own. A last line still unfinished (no newline yet: aider may be
writing it, perhaps inside a UTF-8 sequence) is left for the next run, when it is complete.

Two sessions of one file with the same identity (header and start-up block, byte for byte) are
told apart by their order in the file: the second one's id ends in `:2`.

The repository (see `aider_repository.SessionRepository.root`), in this order: the `Git working
dir:` aider prints when started below the root (or `Git repository created in`, when it made one
where it ran); the `Git repo:` path, resolved against `Cur working dir:` when relative (a worktree's
admin directory naming its main repository); a `.git` path in aider's output; the absolute path
aider printed for a file it added to the chat. Without these, a relative `Git repo:` is resolved
against where aider wrote the history (aider writes it at the repository's root unless
`--chat-history-file` says otherwise): the directory that flag names, else the history file's
directory where a repository's `.git` sits beside it, else the repository the file's own sessions
show, else the history file's directory (unless the history was moved: see
`SessionRepository.moved_root` and `FileRoot`).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from blake3 import blake3

from yzos_jobs.files import open_regular
from yzos_jobs.importers import repository as repo
from yzos_jobs.importers.aider_repository import (
    MAX_ADDED_FILES,
    MAX_PATHS,
    MIN_RUN_DIR_DEPTH,
    SessionRepository,
    at_repository_root,
    root_shown_by,
)
from yzos_jobs.importers.base import parse_timestamp
from yzos_jobs.importers.closed_session import (
    ClosedSession,
    Commit,
    Event,
    FileTouched,
    Request,
    collapse,
    has_words,
    title_of,
)
from yzos_jobs.importers.reading import Line, LinesBefore, Position, read_lines
from yzos_jobs.importers.records import ImportRecordError

HISTORY_FILE = ".aider.chat.history.md"
HEADER = re.compile(
    rb"^(?:\xef\xbb\xbf)?# ([Aa])ider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})"
)
_BOM = b"\xef\xbb\xbf"
COMMIT = re.compile(r"^Commit ([0-9a-f]{6,40})(?: (.*))?$")
OLD_COMMIT = re.compile(r"^([0-9a-f]{7,40}) (.+)$")
GIT_REPO = re.compile(r"^Git repo: (.+?)(?: with [\d,]+ files)?$")
CUR_DIR = re.compile(r"^Cur working dir: (.+)$")
WORK_DIR = re.compile(r"^Git working dir: (.+)$")
# aider offers to create a repository where it runs when there is none, and says where it did
# (an absolute path; the first versions said "in the current working directory.").
CREATED_REPO = re.compile(r"^Git repository created in ((?:[A-Za-z]:[\\/]|/|\\\\).+)$")
# aider's options whose value is a file other than one to edit: a path after them says nothing
# of the repository.
FILE_OPTIONS = frozenset(
    {
        "--read",
        "--config",
        "-c",
        "--env-file",
        "--chat-history-file",
        "--input-history-file",
        "--llm-history-file",
        "--load",
        "--model-settings-file",
        "--model-metadata-file",
        "--aiderignore",
        "--analytics-log",
    }
)
# The prompt aider shows (`> `, `ask> `, `architect> `, `multi> `), copied with what was typed.
PROMPT = re.compile(r"^(?:(?:ask|code|architect|context|help)(?:\s+multi)?|multi)?> ")
ADDED = re.compile(r"^Added (.+?) to the chat(?: \(read-only\))?\.?$")
APPLIED = re.compile(r"^Applied edit to (.+)$")
SNAPSHOT = re.compile(r"^Committing .+ before applying edits\.?$")
# The first versions' question before a chat, answered on the same line; a commit that follows
# (or is glued to the answer) snapshots the user's own edits.
PRE_CHAT = re.compile(r"^Commit before the chat proceeds\b.*?\?\s*(.*)$")
GLUED_COMMIT = re.compile(r"Commit ([0-9a-f]{6,40}) (.+)$")
CONFIRM = re.compile(r"\(Y\)es/\(N\)o\b.*\]:\s*\S*$")
COMMAND_LINE = re.compile(r"^(?:\S*[\\/])?aider(?:\.exe)?(?:\s|$)|\s-m\s+aider(?:\s|$)")
MODE_COMMAND = re.compile(r"^/(?:ask|code|architect|context|copy-context)(?:\s+|$)")
OLD_TOOL = re.compile(r"^_(.*)_\s*$")
CREATING = re.compile(r"^Creating empty file (.+)$")
# aider's word about a file it could not read: the absolute path it printed, and the name it
# printed relative to the repository's root.
FILE_ERROR = re.compile(r"^((?:[A-Za-z]:)?[\\/][^:*?\"<>|]+?): \S")
UNREADABLE = re.compile(r"^Unable to read (.+)$")
# A path git tracks that aider could not map: an absolute path inside the repository.
MISSING_FROM_MAP = re.compile(r"^Repo-map can't include (.+?)(?:, it no longer exists)?$")
GIT_PATH = re.compile(r"(?<!\S)((?:[A-Za-z]:)?[\\/][^\s:*?\"<>|]*?)[\\/]\.git(?=[\\/:\s]|$)")
ERROR_HINT = re.compile(r"\", line \d|\.\w{1,8}:\d")  # cheaply: a text that may hold one
READ_ONLY = re.compile(r"^Added (.+?) to read-only files\.?$")
# aider asking to create a file a reply named, by its name from the repository's root: the name on
# the line before `Create new file?`, or in `Allow creation of new file src/app.py? y` (older).
CREATE_ASKED = re.compile(r"^Create new file\?")
CREATE_NAMED = re.compile(r"^Allow creation of new file (.+?)\?(?: \S*)?$")
# What a file's name looks like on a line of its own: no `word: ` (`Tokens: 4.1k sent…`), no
# sentence's end.
FILE_NAME_LINE = re.compile(r"^(?!.*:\s)[^\s\\/:*?\"<>|][^*?\"<>|]{0,254}(?<![.?!\s])$")
# A git command of aider's that failed, as it prints it: `cmdline: git add /abs/app/.env` (a file
# it made that .gitignore leaves out), `cmdline: git commit -m … [--no-verify] -- /abs/app/a.py`.
# The paths are of files aider added or edited, given absolute. A commit's message may run over
# several lines (a trailer last) and hold a ` -- ` of its own: the paths follow the command's
# last ` -- `, on the last line before git's `stdout:` or `stderr:`.
GIT_ADD_CMDLINE = re.compile(r"^cmdline: git add (?!-)(.+)$")
GIT_COMMIT_CMDLINE = re.compile(r"^cmdline: git commit ")
AFTER_DASHES = re.compile(r"(?:^|\s)-- (.+)$")  # greedy before it: the line's last ` -- `
GIT_OUTPUT = re.compile(r"^(?:stdout|stderr): ")
# Where one absolute path of several on a line starts (a space inside a path goes on with it).
NEXT_PATH = re.compile(r"\s+(?=[A-Za-z]:[\\/]|/|\\\\)")

# `/run cd <directory> …` (or `/!`; `cd /d` on Windows): the directory a shell command ran in.
RUN_CD = re.compile(
    r"^/(?:run|!)\s+cd\s+(?:/d\s+)?(\"[^\"]+\"|'[^']+'|(?:\\.|[^\s&;|\\])+)", re.IGNORECASE
)
CHAT_MODE = re.compile(r"^/chat-mode\s+(\S+)")
ASK_FLAG = re.compile(r"--chat-mode(?:=|\s+)ask\b")
REQUEST_CHARS = 2000  # of a request's text kept in memory
IDENTITY_BYTES = 4096
FILE_EVIDENCE_PATHS = 200  # paths and names kept per file to find a moved history's repository
PRINTED_LINES = 256  # distinct lines of aider's start-up block remembered per session


@dataclass
class AiderSession:
    """One session as read: where it is, what it shows, its events in order."""

    path: Path
    offset: int  # byte offset of its header line
    line: int  # its header line, counted from where reading started
    where: Position | str
    started_at: datetime
    old_format: bool
    repository: SessionRepository = field(default_factory=SessionRepository)
    events: list[tuple[int, Event]] = field(default_factory=list)  # (byte offset in session, e)
    end: int = 0  # byte offset where it ends (the next header, or the end read so far)
    ended_at: datetime | None = None  # the next header's time
    closed: bool = False  # a later header exists
    # Earlier sessions of the file read with the same identity bytes (the same second, the same
    # start-up): the position in the file tells them apart.
    repeat: int = 0
    _identity: bytearray = field(default_factory=bytearray)
    _identity_done: bool = False
    _external_id: tuple[int, str] | None = field(default=None, compare=False, repr=False)
    _message: list[tuple[int, str]] = field(default_factory=list)
    _message_at: int = 0
    _reply: str | None = None  # first line of the assistant's latest reply since the last message
    _previous: str = ""  # what the last non-blank line was: "user", "tool" or "assistant"
    _tool_before: bool = False  # the previous line was aider's output (a continuation follows)
    _last_tool: str = ""  # kind of aider's last output line: "snapshot", "added", other
    _last_tool_text: str = ""  # and its text and line
    _last_tool_line: int = 0
    _line: int = 0  # the line of aider's output being read
    # The paths of a failed `git commit` aider is printing (None: none is), kept once git's
    # output follows
    _commit_paths: list[str] | None = None
    _last_request: str | None = None
    _ask_mode: bool = False  # requests are sent in ask mode (`/ask`, `/chat-mode ask`)
    _files: set[str] = field(default_factory=set)
    # Hashes of the lines aider printed when it started (at most PRINTED_LINES): a message made
    # only of them is aider's start-up block pasted back at the prompt, not a request.
    _printed: set[int] = field(default_factory=set)

    # --- identity --------------------------------------------------------------------------

    def _identify(self, raw: bytes, blank: bool) -> None:
        """The identity bytes: the header and aider's start-up block (to its first blank line),
        at most IDENTITY_BYTES. Written at once when aider starts, so they do not change when
        the session grows later."""
        if self._identity_done:
            return
        if blank and len(self._identity) > 0 and self._identity.count(b"\n") > 1:
            self._identity_done = True
            return
        self._identity += raw[: IDENTITY_BYTES - len(self._identity)]
        self._identity_done = len(self._identity) >= IDENTITY_BYTES

    @property
    def external_id(self) -> str:
        """Its start time and the hash of its identity bytes: not the file's path, so a moved
        or copied history is not imported twice."""
        known = self._external_id
        if known is None or known[0] != len(self._identity):  # asked for again as it is written
            digest = blake3(bytes(self._identity)).hexdigest()[:20]
            known = (len(self._identity), f"{self.started_at:%Y%m%dT%H%M%S}:{digest}")
            self._external_id = known
        return known[1] if self.repeat == 0 else f"{known[1]}:{self.repeat + 1}"

    # --- lines -----------------------------------------------------------------------------

    def continues_reply(self) -> bool:
        """A plain line (see _PLAIN_START) here changes nothing: no message is open, the
        identity bytes are complete, and it continues the assistant's reply or aider's output."""
        return (
            not self._message
            and self._identity_done
            and (self._tool_before or self._previous == "assistant")
        )

    def add_line(self, line: int, at: int, raw: bytes) -> None:
        """One line of the session (not its header): `line` counted like the header's, `at`
        its byte offset in the file."""
        text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        blank = not text.strip()
        self._identify(raw, blank)
        if text.startswith("#### ") or text.rstrip() == "####":
            if not self._message:
                self._message_at = at - self.offset
            self._message.append((line, text[5:]))
            self._tool_before, self._previous = False, "user"
            return
        self.end_message()
        if blank:
            self._tool_before = False
            return
        tool = self._tool_text(text)
        if tool is not None:
            self._tool_line(line, at, tool)
            self._tool_before, self._previous = True, "tool"
        elif self._tool_before:
            pass  # aider's output continued on an unprefixed line
        else:
            if self._previous != "assistant":  # a reply starts (after the user's or aider's lines)
                self._reply = collapse(text, 200)
            self._previous = "assistant"

    def _name_line(self) -> str:
        """aider's output line before the one being read, where that is the line right before
        and a file's name, else ""."""
        if self._last_tool_line != self._line - 1 or not FILE_NAME_LINE.match(self._last_tool_text):
            return ""
        return self._last_tool_text

    def _follow_git_command(self, text: str) -> bool:
        """Read `text` as a line of a failed git command aider printed, if it is one."""
        if m := GIT_ADD_CMDLINE.match(text):
            self._keep_printed(git_paths(m.group(1)))
            return True
        if GIT_COMMIT_CMDLINE.match(text):
            self._end_git_command()
            m = AFTER_DASHES.search(text)
            self._commit_paths = git_paths(m.group(1)) if m else []
            return True
        if self._commit_paths is None:
            return False
        if GIT_OUTPUT.match(text):
            self._end_git_command()
            return False
        if (m := AFTER_DASHES.search(text)) and (paths := git_paths(m.group(1))):
            self._commit_paths = paths  # a later line of the message: the last one wins
        return True

    def _end_git_command(self) -> None:
        if self._commit_paths:
            self._keep_printed(self._commit_paths)
        self._commit_paths = None

    def _keep_printed(self, paths: list[str]) -> None:
        printed = self.repository.printed_paths
        printed.extend(paths[: max(0, MAX_PATHS - len(printed))])

    def _tool_text(self, text: str) -> str | None:
        if text.startswith("> ") or text.rstrip() == ">":
            return text[2:].strip()
        if self.old_format and (m := OLD_TOOL.match(text)):
            return m.group(1).strip()
        return None

    def _tool_line(self, line: int, at: int, text: str) -> None:
        self._line = line
        if not self._identity_done and len(self._printed) < PRINTED_LINES:
            self._printed.add(hash(text))  # the start-up block: it ends the identity bytes
        r = self.repository
        kind = "other"
        if self._follow_git_command(text):
            pass  # a line of a failed git command aider printed, read for its paths
        elif r.command is None and COMMAND_LINE.search(text):
            r.command = text
            self._ask_mode = bool(ASK_FLAG.search(text))
            # files to edit named on the command line by their absolute path, as `/add` would
            # name them; not the value of an option naming some other file (`--read`, `--config`)
            tokens = text.split()
            for before, token in itertools.pairwise(tokens):
                token = token.strip("\"'")
                if before in FILE_OPTIONS or not repo.is_absolute(token):
                    continue
                if len(r.given_paths) < MAX_PATHS:
                    r.given_paths.append(token)
        elif m := GIT_REPO.match(text):
            r.git_repo = r.git_repo or m.group(1).strip()
        elif m := CUR_DIR.match(text):
            r.cur_dir = r.cur_dir or m.group(1).strip()
        elif m := (WORK_DIR.match(text) or CREATED_REPO.match(text)):
            r.work_dir = r.work_dir or m.group(1).strip()
        elif SNAPSHOT.match(text):
            kind = "snapshot"
        elif m := PRE_CHAT.match(text):
            kind = "snapshot"
            if (glued := GLUED_COMMIT.search(m.group(1))) and has_words(glued.group(2)):
                self._event(at, Commit(line, glued.group(1), glued.group(2).strip(), work=False))
        elif m := ADDED.match(text):
            name = m.group(1).strip()
            names = r.printed_paths if repo.is_absolute(name) else r.root_names
            if len(names) < MAX_ADDED_FILES:
                names.append(name)
            self._touched(line, at, name, edited=False)
            kind = "added"
        elif (m := CREATING.match(text)) and len(r.printed_paths) < MAX_ADDED_FILES:
            r.printed_paths.append(m.group(1).strip())
        elif (m := UNREADABLE.match(text)) and len(r.root_names) < MAX_PATHS:
            r.root_names.append(m.group(1).strip())
        elif (m := FILE_ERROR.match(text)) and len(r.printed_paths) < MAX_PATHS:
            r.printed_paths.append(m.group(1))
        elif name := created_name(text, self._name_line):
            if not repo.is_absolute(name) and len(r.root_names) < MAX_PATHS:
                r.root_names.append(name)
        elif (m := MISSING_FROM_MAP.match(text)) and len(r.inside_paths) < MAX_PATHS:
            if repo.is_absolute(path := m.group(1).strip()):
                r.inside_paths.append(path)
        elif m := READ_ONLY.match(text):
            if repo.is_absolute(path := m.group(1).strip()):
                r.add_read_only(path)
        elif m := APPLIED.match(text):
            name = m.group(1).strip()
            self._touched(line, at, name, edited=True)
            fresh = name not in r.edited_names and len(r.edited_names) < MAX_PATHS
            if fresh and not repo.is_absolute(name):
                r.edited_names.append(name)  # aider names an edited file from the root
        elif m := (OLD_COMMIT if self.old_format else COMMIT).match(text):
            subject = (m.group(2) or "").strip()
            if has_words(subject):
                work = self._last_tool not in ("snapshot", "added")
                self._event(at, Commit(line, m.group(1), subject, work))
        elif ERROR_HINT.search(text):
            r.add_error_paths(text)  # an error aider printed (a lint, a command's output)
        found = None if r.git_path or text.startswith("Git repo:") else GIT_PATH.search(text)
        if found:
            r.git_path = found.group(1)
        self._last_tool, self._last_tool_text, self._last_tool_line = kind, text, line

    def _touched(self, line: int, at: int, path: str, edited: bool) -> None:
        """Every edit (the work items need each), a file added to the chat once."""
        again = path in self._files
        if edited or not again:
            self._files.add(path)
            self._event(at, FileTouched(line, path, edited, again))

    def _event(self, at: int, event: Event) -> None:
        self.events.append((at - self.offset, event))

    def end_message(self) -> None:
        """The user's message is complete: a request, or something structure sets aside."""
        if not self._message:
            return
        lines, self._message = self._message, []
        first_line = lines[0][0]
        texts = [t.strip() for _, t in lines]
        if self.old_format:
            texts = [t[1:].strip() if t.startswith(">") else t for t in texts]
        text = "\n".join(texts).strip()
        if not self.old_format and (prompt := PROMPT.match(text)):
            text = text[prompt.end() :].lstrip()  # aider's prompt, copied with what followed it
        reply, self._reply = self._reply, None
        self._last_tool = ""
        if not text:
            return
        if ERROR_HINT.search(text):
            self.repository.add_error_paths(text)  # a traceback or a compiler's error, pasted
        head = text.splitlines()[0].strip()
        asked = self._ask_mode
        if head.startswith("/"):
            if (run := RUN_CD.match(head)) and len(self.repository.run_dirs) < MAX_PATHS:
                target = run.group(1).replace("\\ ", " ").strip("\"'")  # `My\ Project`
                if repo.is_absolute(target) and len(repo.segments(target)) >= MIN_RUN_DIR_DEPTH:
                    self.repository.run_dirs.append(target)
            if mode := CHAT_MODE.match(head):
                self._ask_mode = mode.group(1) == "ask"
                return  # the mode the next requests are sent in
            if text.startswith("/add "):
                r = self.repository
                for name in text[5:].split()[:MAX_PATHS]:
                    (r.given_paths if repo.is_absolute(name) else r.given_names).append(name)
            m = MODE_COMMAND.match(text)
            if m is None:
                return  # a command
            command = m.group(0).strip()
            text = text[m.end() :].strip()
            if not text:
                self._ask_mode = command == "/ask"
                return  # a mode switch without a request
            asked = command == "/ask"  # this request only
        elif CONFIRM.search(head) and len(texts) == 1:
            return  # an answer to aider's question
        elif any(t.startswith("█") for t in texts) and any(t[:1] in "│⋮" for t in texts if t):
            return  # the prompt aider writes in watch-files mode
        elif all(hash(t) in self._printed for t in texts if t):
            return  # aider's start-up block, pasted back
        if reply is not None and collapse(texts_first(text), 200) == reply:
            return  # the architect's reply, logged again for the editor model
        if reply is None and text == self._last_request:
            return  # a mode command's request, logged again by aider
        self._last_request = text
        kept = text[:REQUEST_CHARS]
        self._event(
            self.offset + self._message_at, Request(first_line, kept, title_of(kept), asked)
        )

    def finish(self, end: int, ended_at: datetime | None, closed: bool) -> None:
        self.end_message()
        self._end_git_command()  # the history ended inside one
        self.end, self.ended_at, self.closed = end, ended_at, closed


def created_name(text: str, before: Callable[[], str]) -> str | None:
    """The file aider asks to create in `text` (its line before, `before()`, names it in newer
    versions), as aider named it."""
    if CREATE_ASKED.match(text):
        return before().strip() or None
    m = CREATE_NAMED.match(text)
    return m.group(1).strip() if m else None


def git_paths(paths: str) -> list[str]:
    """The absolute paths of a git command line aider printed, spaces inside them kept
    (`C:\\Users\\Mi Notebook\\app\\a.py C:\\Users\\Mi Notebook\\app\\b.py` is two)."""
    return [p for p in NEXT_PATH.split(paths.strip()) if repo.is_absolute(p)]


def texts_first(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


# First bytes of a line that can only be the assistant's text: printable ASCII that starts no
# user line (`#`), no aider output (`>`, `_` in the first versions) and no blank line.
_PLAIN_START = frozenset(range(0x21, 0x7F)) - {ord("#"), ord(">"), ord("_")}


def read_sessions(
    lines: Iterable[Line],
    before: LinesBefore,
    path: Path,
    report: Callable[[ImportRecordError], None],
) -> Iterator[AiderSession]:
    """Sessions in `lines` (read from byte offset `before.offset`, numbered from there), each
    finished: with its end offset, whether a later header closed it, and the next header's
    time. Lines are decoded leniently (CRLF and invalid UTF-8 are fine). A header whose date is
    impossible is reported, and the lines up to the next header belong to no session; lines
    before the first header belong to no session."""
    current: AiderSession | None = None
    offset = before.offset
    identities: dict[str, int] = {}

    def counted(session: AiderSession) -> AiderSession:
        base = session.external_id
        session.repeat = identities.get(base, 0)
        identities[base] = session.repeat + 1
        return session

    for line_no, end, raw in lines:
        line_start, offset = offset, end
        if raw is None:
            continue  # a line past the length bound, already reported
        if current is not None:
            if raw[0] in _PLAIN_START and current.continues_reply():
                continue  # most lines: more of the reply under way, nothing to note
            if raw[0] != 0x23 and raw[0] != 0xEF:  # neither "#" nor a BOM: not a header
                current.add_line(line_no, line_start, raw)
                continue
        header = HEADER.match(raw)
        if header is None:
            if current is not None:
                current.add_line(line_no, line_start, raw)
            continue
        where = Position(before, line_no)
        started: datetime | None
        try:
            started = parse_timestamp(header.group(2).decode(), where)
        except ImportRecordError as err:
            report(err)
            started = None
        if current is not None:
            current.finish(line_start, started, closed=True)
            yield counted(current)
        current = None
        if started is None:
            continue
        current = AiderSession(path, line_start, line_no, where, started, header.group(1) == b"A")
        current._identity += raw.removeprefix(_BOM)
    if current is not None:
        current.finish(offset, None, closed=False)
        yield counted(current)


class FileRoot:
    """What a history's own sessions show of the repository it was written in, found once,
    lazily, from the file's start: the first session that shows its repository and let aider
    place the history (at that repository's root), else the first that shows the history was
    moved (`SessionRepository.moved_root`), else, where no `.git` sits beside the history, the
    directory under which an absolute path one session showed is a file another session named
    from the root (`coeffs.py` edited in one, `/home/me/proj/coeffs.py` added read-only or in a
    traceback in another)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._shown: str | None = None
        self._moved: str | None = None
        self._done = False

    def __call__(self) -> str | None:
        """The repository a session shows, or None."""
        self._scan()
        return self._shown

    def moved(self) -> str | None:
        """Where the file's sessions show a moved history's repository is, or None."""
        self._scan()
        return self._moved

    def _scan(self) -> None:
        if self._done:
            return
        self._done = True
        here = repo.normalise(str(self.path.parent))
        before = LinesBefore(self.path, 0)
        with open_regular(self.path) as fh:
            lines = read_lines(fh, 0, keep_unfinished=True, on_long_line=lambda n: None)
            strong: dict[str, None] = {}  # ordered sets, as the file shows them
            weak: dict[str, None] = {}
            names: dict[str, None] = {}
            for session in read_sessions(lines, before, self.path, lambda err: None):
                r = session.repository
                shown = r.shown()
                if shown is not None and r.at_history_root:
                    self._shown = shown
                    return
                if self._moved is None and r.at_history_root:
                    moved = r.moved_root(self.path)
                    self._moved = moved if moved != here else None
                    if r.git_repo is None or r.git_repo.lower() == "none":
                        continue  # aider ran in no repository: its paths place none
                    for path in r.error_paths + r.printed_paths + r.given_paths:
                        if len(strong) < FILE_EVIDENCE_PATHS:
                            strong.setdefault(path)
                    for path in r.read_only_paths:
                        if len(weak) < FILE_EVIDENCE_PATHS:
                            weak.setdefault(path)
                    for name in r.root_names + r.edited_names:
                        if len(names) < FILE_EVIDENCE_PATHS:
                            names.setdefault(name)
        if self._moved is None and not at_repository_root(self.path):
            # A file a session worked on, named from the root, whose absolute path another
            # session showed (in a traceback, added, added read-only).
            found = root_shown_by(list(strong), list(weak), list(names))
            if found is not None and self.path.parent.name not in repo.segments(found):
                self._moved = found


def closed_session(
    s: AiderSession, first_line: int, root: str | None, mtime: datetime
) -> ClosedSession:
    """A session as written: its events with the file's line numbers (`first_line` is the
    number of the line reading started at, minus one)."""
    ended = s.ended_at if s.closed and s.ended_at else mtime
    return ClosedSession(
        "aider",
        s.external_id,
        str(s.path),
        root,
        repo.name_of(root),
        s.started_at,
        max(ended, s.started_at),
        first_line + s.line,
        [replace(e, line=e.line + first_line) for _, e in s.events],
    )


def history_sessions(path: Path) -> list[ClosedSession]:
    """Every session of a history file, closed or not, as the importer would write it whole
    (the last one ending at the file's modification time)."""
    path = path.resolve()
    before = LinesBefore(path, 0)
    file_root = FileRoot(path)
    with open_regular(path) as fh:
        mtime = datetime.fromtimestamp(os.fstat(fh.fileno()).st_mtime, UTC)
        lines = read_lines(fh, 0, keep_unfinished=True, on_long_line=lambda n: None)
        return [
            closed_session(s, 0, s.repository.root(path, file_root), mtime)
            for s in read_sessions(lines, before, path, lambda err: None)
        ]
