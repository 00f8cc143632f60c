"""What a shell command Claude Code ran, and what git printed in reply, say of git and of
folders: the commit a `git commit` makes (the message it passes, and whether its result shows the
commit made), the folder each part of the command runs in (after the `cd`s before it, or where
`git -C` points), the repository a `git clone` makes, the folders a `mkdir` makes, what a `mv`
moves. Only the part run here counts for folders: not a heredoc's body (text handed to a
program) nor what runs over `ssh`."""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Callable, Iterator

from yzos_jobs.importers import repository as repo
from yzos_jobs.importers.closed_session import has_words

_PART_END = re.compile(r"[\n|;&]")  # where `git … commit` cannot go on
_GIT_WORD = re.compile(r"\bgit\b")
_COMMIT_WORD = re.compile(r"\bcommit\b")
_COMMITTED = re.compile(r"^\[[^\]\n]+ ([0-9a-f]{7,40})\] (.+)$", re.MULTILINE)
_HEREDOC_START = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n")
_MESSAGE_OPTION = re.compile(r"(?:-m|--message)(?:=|\s)")
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
# A change of folder: `cd`, `pushd`, and PowerShell's `Set-Location` and `Push-Location`
# (any case); `popd` and `Pop-Location` go back to the folder before the last push.
_CHANGE_FOLDER = re.compile(
    r"""^\(?\s*(cd|pushd|(?i:set-location|push-location))(?:\s+("[^"]*"|'[^']*'|\S+))?\s*$"""
)
_FOLDER_CHANGE = re.compile(  # understood by the above or not
    r"\(?\s*(?:cd|pushd|popd|(?i:set-location|push-location|pop-location))(?:\s|$)"
)
_PUSHES = ("pushd", "push-location")
_GIT_FOLDER = re.compile(r"""\bgit\s+-C\s+("[^"]*"|'[^']*'|[^\s;&|]+)""")
# A git command that reads or writes the repository it runs in (not one that makes one, or only
# reads the user's settings).
_GIT_RUN = re.compile(
    r"(?:^|[\s;&|(])git\s+(?!(?:clone|init|help|--version|--help)\b|config\s+--global\b)"
)
_GIT_CALL = re.compile(r"(?:^|[\s;&|(])git\s+")  # git run, whatever it does
_GIT_CLONE = re.compile(r"(?:^|[\s;&|(])git\s+(?:-\S+\s+)*clone\b")
# What git prints when it clones: the new repository's folder as the command named it.
_CLONING_INTO = re.compile(r"^Cloning into (?:bare repository )?'([^'\n]+)'\.\.\.$", re.MULTILINE)
_MKDIR = re.compile(r"^\(?\s*(?:sudo\s+)?mkdir\s+(.+)$", re.DOTALL)
_MOVE = re.compile(r"^\(?\s*(?:sudo\s+)?(?:git\s+)?mv\s+(.+)$", re.DOTALL)
# A program run on another machine: what its command does there says nothing of the folder here
_REMOTE_SHELL = re.compile(r"(?:^|[\s;&|(])ssh\s")
# Where a name stops being one the command spelled out: what the shell expands or substitutes
_EXPANDED = re.compile(r"[{*?$`\[]")
COMMAND_CHARS = 20_000  # of a Bash command read: for its parts, what follows its commit, or shown
BODY_CHARS = 1000  # of a commit message's body kept as evidence


def heredoc_body(text: str) -> str | None:
    """The body of the first heredoc in `text` that ends (`<<EOF` … `EOF`), or None. Read line
    by line from each start, and from the first few starts only: a text made of starts with no
    end (`<<A` over and over) is read in time linear in its length."""
    found = _heredoc(text)
    return found[0] if found else None


def _heredoc(text: str) -> tuple[str, int] | None:
    """(body, where its closing line ends) of the first heredoc in `text` that ends."""
    for start in itertools.islice(_HEREDOC_START.finditer(text), _HEREDOC_STARTS_TRIED):
        delimiter, at = start.group(1), start.end()
        body: list[str] = []
        for line in text[at:].split("\n"):
            at += len(line) + 1
            if line.strip() == delimiter:
                return "\n".join(body), min(at, len(text))
            body.append(line)
    return None


# How many heredoc starts are tried for one that ends
_HEREDOC_STARTS_TRIED = 3


def commit_message(command: str) -> tuple[str, str] | None:
    """(subject, body) of the message a `git commit` command passes: `-m "…"` (its value may be a
    `$(cat <<EOF …)` heredoc), or a heredoc given on standard input (`-F -`, `--file=-`). Only
    what follows `git commit` counts: a heredoc that wrote a file before it is no message."""
    found = git_commit_end(command)
    if found is None:
        return None
    return _subject_and_body(_passed(command, found)[0])


def commit_messages(command: str) -> list[tuple[tuple[str, str] | None, bool]]:
    """(message, whether it amends the commit before) of each `git commit` of a command that
    commits more than once, in order, up to COMMITS_READ. A commit's message is one its own part
    of the command passes (a commit that passes none takes no other's), and the search for the
    next commit goes on after it: "git commit" in a message is no commit. Read in one pass."""
    text = command[:COMMAND_CHARS]
    found: list[tuple[tuple[str, str] | None, bool]] = []
    at = 0
    while len(found) < COMMITS_READ and (end := git_commit_end(text, at)) is not None:
        part = _PART_END.search(text, end)
        message, after = _passed(text, end, part.start() if part else len(text))
        part_end = _PART_END.search(text, after)
        rest_of_part = text[end : part_end.start() if part_end else len(text)]
        found.append((_subject_and_body(message), "--amend" in rest_of_part))
        at = after
    return found


def _passed(command: str, at: int, part_end: int | None = None) -> tuple[str | None, int]:
    """(the message a `git commit` whose `commit` word ends at `at` passes, or None; where what
    passed it ends). With `part_end`, only an option before it (in the commit's own part of the
    command) passes one."""
    limit = min(len(command), at + COMMAND_CHARS)
    option_end = limit if part_end is None else min(part_end, limit)
    if option := _MESSAGE_OPTION.search(command, at, option_end):
        m = _MESSAGE.match(command, option.start(), limit)
        if m is None:
            return None, at
        message = m.group(2)  # single-quoted: as written
        if (quoted := m.group(1)) is not None:
            if quoted.lstrip().startswith("$(") and (heredoc := heredoc_body(quoted)) is not None:
                message = heredoc.replace('\\"', '"')
            else:
                message = _DOUBLE_QUOTED_ESCAPE.sub(r"\1", quoted)  # `\$5`, `\"x\"` as the shell
        return message, m.end()
    if _STDIN_FILE.search(command, at, option_end) is None:
        return None, at
    heredoc = _heredoc(command[at:limit])
    return (heredoc[0], at + heredoc[1]) if heredoc else (None, at)


def _subject_and_body(message: str | None) -> tuple[str, str] | None:
    """(subject, body) of a commit message: its first line with words, and the lines after it
    (BODY_CHARS of them); None where its first line names nothing (or is a substitution)."""
    if not message:
        return None
    lines = [line.strip() for line in message.splitlines()]
    at = next((i for i, line in enumerate(lines) if line), 0)
    first = lines[at] if lines else ""
    if not has_words(first) or first.startswith("$("):
        return None
    return first, "\n".join(line for line in lines[at + 1 :] if line)[:BODY_CHARS]


def commits_printed(result: str) -> list[tuple[str, str]]:
    """(sha, subject) of each commit git's `[<branch> <sha>] <subject>` lines show made, in
    order, up to COMMITS_READ."""
    return [
        (m.group(1), m.group(2).strip())
        for m in itertools.islice(_COMMITTED.finditer(result), COMMITS_READ)
    ]


# Of one command that commits more than once, the commits read (a hostile one repeats them)
COMMITS_READ = 20


def commit_subject(command: str) -> str | None:
    """The subject of the message a `git commit` command passes (see `commit_message`)."""
    message = commit_message(command)
    return message[0] if message else None


def confirmed_commit(
    command: str,
    result: str,
    subject: str | None = None,
    printed: list[tuple[str, str]] | None = None,
) -> tuple[str, str | None] | None:
    """(sha, subject git printed) when a `git commit` call's result shows the new commit: git's
    `[<branch> <sha>] <subject>` line, or (after `-q`) a `git log` or `git push` chained with
    `&&` naming it, or a `git log` run after it in the same command (on a line of its own, after
    a heredoc's message) printing the commit's `subject`. None when nothing shows it was made.
    `printed`: the result's commit lines (`commits_printed`), where the caller read them."""
    if printed is None:
        printed = commits_printed(result)
    if printed:  # the one with the subject passed, where another command printed a line alike
        named = [p for p in printed if subject is not None and p[1] == subject.strip()]
        return (named or printed)[0]
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
    """(folder, part) for each part of a shell command other than a change of folder (`cd`,
    `pushd`, `popd`, PowerShell's `Set-Location`, `Push-Location`, `Pop-Location`), in order:
    the folder the parts before it changed into, else the record's cwd (Claude Code writes the
    shell's). None where the folder cannot be told (`cd -`, `cd "$DIR"`, `cd` alone, `cd ~/My\
    App 2>/dev/null`)."""
    folder = cwd
    pushed: list[str | None] = []  # the folders `pushd` left, for `popd`
    for part in _COMMAND_PARTS.split(command[:COMMAND_CHARS]):
        part = part.strip()
        if _FOLDER_CHANGE.match(part):
            change = _CHANGE_FOLDER.match(part)
            if change is None:  # `popd`, or a change not understood
                back = part.lstrip("( ").split(None, 1)[0].casefold() in ("popd", "pop-location")
                folder = pushed.pop() if back and pushed else None
                continue
            if change.group(1).casefold() in _PUSHES:
                pushed.append(folder)
            target = change.group(2)
            folder = repo.resolve(target, folder) if target and folder else None
            if folder is not None and len(repo.segments(folder)) > _DEEPEST_FOLDER:
                folder = None  # `cd a && cd a && …` thousands deep: no folder anyone keeps
        else:
            yield folder, part


# Deeper than this, a folder is no one's (and resolving paths against it would take time that
# grows with the square of the command's length)
_DEEPEST_FOLDER = 64


def git_parts(command: str, cwd: str | None) -> Iterator[tuple[str | None, str]]:
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
    repository (see `git_parts` for the folder)."""
    return [
        (folder, git_commit_end(part) is not None)
        for folder, part in git_parts(command, cwd)
        if _GIT_RUN.search(part)
    ]


def runs_clone(command: str) -> bool:
    """Whether a Bash command runs `git clone`."""
    return "clone" in command and _GIT_CLONE.search(command) is not None


def clone_folder(command: str, cwd: str | None) -> str | None:
    """The folder the last `git clone` of a Bash command ran in (where the folder git prints,
    `Cloning into '<folder>'...`, is relative to), or None."""
    found = None
    for folder, part in git_parts(command, cwd):
        if _GIT_CLONE.search(part):
            found = folder
    return found


def commands_run_here(command: str) -> str | None:
    """A Bash command up to the body of its first heredoc (text handed to a program: a file
    written, a message; not commands), or None for one that runs on another machine (`ssh`):
    what it does there says nothing of the folders here. A line continued with `\\` is one
    line with the next, as the shell reads it (`mv \\⏎ lib \\⏎ budget/`)."""
    command = command[:COMMAND_CHARS]
    at = command.find("<<")
    end = command.find("\n", at) if at >= 0 else -1
    here = _CONTINUED.sub("", command if end < 0 else command[:end])
    return None if _REMOTE_SHELL.search(here) else here


_CONTINUED = re.compile(r"\\\r?\n")


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


# Longer than this, a path moved is no one's (a hostile command's name of thousands of characters,
# each move lengthening what the edits under it are called)
MOVED_PATH_CHARS = 1000
# `git mv -n`, `--dry-run`: shows what it would move, moves nothing
_DRY_RUN = re.compile(r"\s(?:-[a-zA-Z]*n[a-zA-Z]*|--dry-run)(?:\s|$)")


def moved_paths(command: str, cwd: str | None) -> list[tuple[str, str]]:
    """(from, to) for each file or folder the `mv` (or `git mv`) calls of a Bash command run here
    move, where each runs: into the folder named last where it names several, where that ends
    with a separator or `-t` names it (`mv src app.py "My Project/"`), else to the name given
    (renamed, or into a folder of that name: either way what was in `from` is below `to`'s
    folder). Names the shell expands (`src/*`) move nothing that can be told."""
    if "mv" not in command or (here := commands_run_here(command)) is None:
        return []
    found: list[tuple[str, str]] = []
    for folder, part in _parts_where_run(here, cwd):
        if folder is None or (call := _MOVE.match(part)) is None:
            continue
        if part.lstrip("( ").startswith(("git", "sudo git")) and _DRY_RUN.search(part):
            continue
        sources, target, into = _move_operands(call.group(1))
        if target is None or _EXPANDED.search(target):
            continue
        destination = repo.resolve(target, folder)
        for source in sources:
            if _EXPANDED.search(source) or destination is None:
                continue
            moved = repo.resolve(source, folder)
            name = repo.name_of(moved)
            if moved is None or name is None:
                continue
            to = repo.join(destination, name) if into else destination
            if to is not None and max(len(moved), len(to)) <= MOVED_PATH_CHARS:
                found.append((moved, to))
    return found


def _move_operands(arguments: str) -> tuple[list[str], str | None, bool]:
    """What a `mv` names: (what it moves, where to, whether into that folder)."""
    operands, options = _operands(arguments, _takes_value_of_mv)
    target = options.get("--target-directory") or next(
        (value for option, value in options.items() if _cluster_ending(option, "t")), None
    )
    if target is not None:
        return operands, target, True
    if len(operands) < 2:
        return [], None, False
    *sources, last = operands
    return sources, last, len(sources) > 1 or last.endswith(("/", "\\"))


def _mkdir_operands(arguments: str) -> list[str]:
    """The folders a `mkdir` names."""
    return _operands(arguments, _takes_mode)[0]


def _takes_mode(option: str) -> bool:
    """A `mkdir` option whose next word is the mode: `--mode`, `-m`, `-pm`."""
    return option == "--mode" or _cluster_ending(option, "m")


def _takes_value_of_mv(option: str) -> bool:
    """A `mv` option whose next word is its value: the target folder (`-t`, `-vt`,
    `--target-directory`) or the backup suffix (`-S`, `--suffix`)."""
    return option in ("--target-directory", "--suffix") or _cluster_ending(option, "tS")


def _cluster_ending(option: str, letters: str) -> bool:
    """A short option, or a cluster of them (`-vt`), whose last letter is one of `letters`."""
    return not option.startswith("--") and option[-1:] in letters and len(option) > 1


# Where an operand of a command stops: a redirection, a subshell's end, a background `&`
_OPERAND_END = re.compile(r"[<>)&]")


def _operands(
    arguments: str, takes_value: Callable[[str], bool]
) -> tuple[list[str], dict[str, str]]:
    """The words a command's arguments name past its options, up to a redirection, a comment or
    the end of a subshell; and the values of its options (`--x=y`, and `-x y` for an option
    `takes_value` says takes the next word)."""
    try:
        words = shlex.split(arguments, comments=True)
    except ValueError:  # an unclosed quote: the words as written
        words = arguments.split()
    operands: list[str] = []
    values: dict[str, str] = {}
    options = True
    words_left = iter(words)
    for word in words_left:
        if options and word == "--":
            options = False
        elif options and word.startswith("-") and len(word) > 1:
            name, equals, value = word.partition("=")
            if equals and word.startswith("--"):
                values[name] = value
            elif takes_value(word) and (value := next(words_left, None)) is not None:
                values[word] = value
        else:
            operand = _OPERAND_END.split(word, 1)[0]
            if operand != word and operand.isdigit() and word[len(operand)] in "<>":
                break  # a file descriptor redirected (`2>/dev/null`, `2>&1`): no operand
            if operand:
                operands.append(operand)
            if operand != word:
                break
    return operands, values


def cloned_into(folder: str | None, result: str) -> list[str]:
    """The repositories a `git clone` run in `folder` made, as git names them in its output."""
    made = (repo.resolve(name, folder) for name in _CLONING_INTO.findall(result))
    return [where for where in made if where is not None]


def git_commit_end(command: str, start: int = 0) -> int | None:
    """Where the word `commit` of the first `git … commit` from `start` on ends (both in one part
    of the command, no `|`, `;`, `&` or line end between them), or None. Each part is read once,
    up to the first that commits: the time is linear, whatever a hostile command repeats."""
    ends = itertools.chain((m.start() for m in _PART_END.finditer(command, start)), [len(command)])
    for end in ends:
        if (git := _GIT_WORD.search(command, start, end)) and (
            commit := _COMMIT_WORD.search(command, git.end(), end)
        ):
            return commit.end()
        start = end + 1
    return None
