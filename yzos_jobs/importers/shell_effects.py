"""Whether a shell command a coding tool ran changed something: wrote, moved, linked or removed a
file, installed or removed a package, stopped a process or a service, set a setting, saved a
download (`curl -o`, `wget`). A request
carried out that way (link the app into /Applications, restart the server, uninstall a router's
cloud services over ssh) is work done as much as one carried out with the editor's tools; one
answered with `ls`, `cat`, `grep` or a test run is not.

Read from the command's structure, program by program: the programs that change the files they
are given, package and service managers with a subcommand that changes something, `sed -i`,
output redirected into a file, and what `ssh`, `sh -c`, `xargs` and `find -exec` run. Scratch
space (`/tmp`, `/dev`, Windows' `AppData\\Local\\Temp`, a folder named by `$TMPDIR`) is not what a
person keeps. A heredoc's body is text handed to a program, not commands, unless the program is a
shell or `ssh`. Version control is left out: a commit is read as a commit, and a push, a merge or
a pull request opened carries out the work before it, not work of its own. What is made on the code
host itself (`gh issue create`, a label, a release) is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

# Programs that change the files (or processes) they are given.
_CHANGING = frozenset(
    {
        "chmod",
        "chown",
        "cp",
        "install",
        "kill",
        "killall",
        "ln",
        "mkdir",
        "mv",
        "pkill",
        "rm",
        "rmdir",
        "rsync",
        "scp",
        "tee",
        "touch",
        "unzip",
    }
)
# Of these, the ones that change only their last path (a copy's or a link's destination).
_DESTINATION_LAST = frozenset({"cp", "install", "ln", "rsync", "scp"})
# ... and the ones whose first word is no path: a mode or an owner (`chmod +x run.sh`).
_SETTING_FIRST = frozenset({"chmod", "chown"})
# Options with which they only look: `kill -0` (is it running), `unzip -l` (list).
_LOOKING = {"kill": {"-0", "-l"}, "unzip": {"-l", "-t", "-v", "-Z"}}
# Package, service and settings managers, and their subcommands that change something (one of
# the first words after the program that are not options: `npm --prefix web install x`).
_SUBCOMMANDS = {
    "apk": {"add", "del"},
    "apt": {"install", "remove", "purge"},
    "apt-get": {"install", "remove", "purge"},
    "brew": {"install", "uninstall", "reinstall", "upgrade", "link", "start", "stop", "restart"},
    "bun": {"add", "install", "i", "remove", "rm"},
    "cargo": {"add", "install", "remove"},
    "choco": {"install", "uninstall", "upgrade"},
    "dnf": {"install", "remove", "upgrade"},
    "gem": {"install", "uninstall"},
    "go": {"get", "install"},
    "npm": {"install", "i", "add", "uninstall", "remove", "rm", "un", "link", "update"},
    "opkg": {"install", "remove", "upgrade"},
    "pip": {"install", "uninstall"},
    "pip3": {"install", "uninstall"},
    "pnpm": {"add", "install", "i", "remove", "rm", "update"},
    "poetry": {"add", "remove", "install"},
    "scoop": {"install", "uninstall", "update"},
    "snap": {"install", "remove", "refresh"},
    "uv": {"add", "remove", "install", "uninstall"},
    "winget": {"install", "uninstall", "upgrade"},
    "yarn": {"add", "install", "remove", "upgrade"},
    "yum": {"install", "remove", "update"},
    "launchctl": {"load", "unload", "bootstrap", "bootout", "kickstart", "enable", "disable"},
    "systemctl": {"start", "stop", "restart", "reload", "enable", "disable", "mask", "unmask"},
    "uci": {"set", "commit", "delete", "add", "add_list", "del_list", "rename"},
    "defaults": {"write", "delete"},
    "crontab": {"-r", "-"},
}
# What GitHub's `gh` makes or changes on the code host: `gh issue create`, `gh release delete`.
_HOSTED = {
    "issue": {"create", "edit", "close", "reopen", "delete", "comment", "transfer"},
    "label": {"create", "edit", "delete", "clone"},
    "release": {"create", "edit", "delete", "upload"},
}
SUBCOMMAND_WORDS = 3  # of the words after the program, how many may name its subcommand
# What a service script (`/etc/init.d/<name> stop`, `service <name> stop`) is told to do.
_SERVICE_ACTIONS = frozenset({"start", "stop", "restart", "reload", "enable", "disable"})
# Programs whose run is itself the change.
_ACTIONS = frozenset({"reboot", "shutdown", "poweroff"})
# Shells whose `-c` script (or heredoc) is commands.
_SHELLS = frozenset({"sh", "bash", "zsh", "dash"})
# ssh's options that take a value (`-p 22`, `-i key`): the host is the first word after them.
_SSH_VALUED = frozenset("BbcDEeFIiJLlmOopQRSWw")
# Words before the program that leave it the program (`sudo -u www rm`, `timeout 5 rm`): they and
# their options are passed over.
_PREFIXES = frozenset({"sudo", "command", "exec", "nohup", "time", "env", "nice", "timeout"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;", "|&", "\n"})
# A shell command's tokens: a quoted string whole (an unclosed one runs to the end: no token is
# looked for twice), an output redirect with the descriptor before it, an operator, a word.
_TOKEN = re.compile(
    r"""
    '[^']*'?
    | "(?:\\.|[^"\\])*"?
    | \d*(?:>>|>\||>&|>)
    | &>>|&>|<<<|<<-?|<
    | &&|\|\||;;|\|&|[;&|()\n]
    | [^\s;&|()<>'"]+
    """,
    re.VERBOSE,
)
_REDIRECT = re.compile(r"^(?:\d*(?:>>|>\||>&|>)|&>>?)$")
# A heredoc's start (not a here-string, `<<<`): the word that ends its body.
_HEREDOC = re.compile(r"(?<!<)<<(?!<)-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")
_SCRATCH = ("/tmp/", "/dev/", "/private/tmp/", "/var/folders/")
# Windows' temporary folder (where Claude Code keeps a session's scratchpad), and the variables
# that name a temporary folder.
_TEMPORARY = re.compile(
    r"(?:^|[/\\])AppData[/\\]Local[/\\]Temp(?:[/\\]|$)|^(?:\$\{?(?:TMPDIR|TEMP|TMP)\b|%(?:TEMP|TMP)%)",
    re.IGNORECASE,
)
# `NAME=value` as a command of its own: what `$NAME` stands for in the commands after it.
_ASSIGNED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(\S*)")
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
# Whether a command can change anything at all, before it is read token by token (most commands a
# session runs only read: `ls`, `cat`, `grep`, tests): a program above as a word of its own (a
# manager with one of its changing subcommands, `find` with `-delete` or `-exec`, a shell given a
# script), or output sent into a file (not `2>&1`, `>/dev/null`, `->`, `=>`).
_DIRECT = frozenset(
    {*_CHANGING, *_ACTIONS, "sed", "perl", "service", "ssh", "xargs", "curl", "wget"}
)
_MANAGERS = frozenset(_SUBCOMMANDS)
_MANAGER_CHANGES = frozenset(word for words in _SUBCOMMANDS.values() for word in words)
_WORD_BREAKS = re.compile(r"[\s;&|()`/'\"]+")
_INTO_FILE = re.compile(r"(?<![0-9&=\-])>{1,2}(?!\s*(?:&|/dev/null))")
# Downloaders' short options that take a value (`curl -H 'Accept: x' -o out.zip`): the value
# follows in the same word or the next. `curl -o`/`wget -O` name the file written.
_CURL_VALUED = frozenset("AbcCdDeEFHKmorTuUwxXyYz")
_WGET_VALUED = frozenset("aADeilNoOPQTtUw")
EXPANDED_CHARS = 4096  # of variables' values put into one word
MAX_DEPTH = 4  # commands within commands (`ssh h "sh -c '…'"`) read at most this deep


def changes_something(command: str, depth: int = 0) -> bool:
    """Whether `command` (a shell command line, heredocs and all) changes a file, a package, a
    service or a process outside scratch space."""
    return next(_changing_commands(command, depth), None) is not None


def where_it_changes(command: str) -> Literal["here", "code host"] | None:
    """Where `command` changes something: "code host" where all it changes is there (`gh issue
    create`: nothing in the working tree that a commit could hold), "here" where it changes a
    file, a package, a service or a process, None where it changes nothing."""
    found: Literal["code host"] | None = None
    for words in _changing_commands(command, 0):
        if _program_of(words) != "gh":
            return "here"
        found = "code host"
    return found


# Commands that only move between folders or cut down what another printed (`git log | head`)
_BESIDE_GIT = frozenset({"cd", "pushd", "popd", "head", "tail", "grep", "wc", "sort", "uniq"})
# What git does that shows the work done or carries it to the remote: not work of its own
_GIT_SHOWS_OR_SHIPS = frozenset(
    {"status", "log", "diff", "show", "add", "push", "pull", "fetch", "remote", "rev-parse"}
    | {"ls-files", "shortlog", "blame", "reflog"}
)
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree"})


def only_version_control(command: str) -> bool:
    """Whether `command` only shows the work done or carries it to the remote with git (`git
    status`, `git log | head`, `git add -A && git push`; a `cd` between them aside): version
    control, which carries out the work before it rather than working on a request. A tag, a
    merge, a rebase or a reset made is work of its own."""
    ran_git = False
    for words in _simple_commands(command):
        program = _program_of(words)
        if program == "git":
            if _git_subcommand(_run_of(words)[1:]) not in _GIT_SHOWS_OR_SHIPS:
                return False
            ran_git = True
        elif program not in _BESIDE_GIT:
            return False
    return ran_git


def _git_subcommand(args: list[str]) -> str:
    """`-C repo --no-pager log -5` → `log`."""
    at = 0
    while at < len(args) and args[at].startswith("-"):
        at += 2 if args[at] in _GIT_VALUED else 1
    return args[at] if at < len(args) else ""


def _changing_commands(command: str, depth: int) -> Iterator[list[str]]:
    """The words of each simple command of `command` that changes something."""
    if depth > MAX_DEPTH or not _may_change(command):
        return
    assigned: dict[str, str] = {}  # `SCRATCH="$TMP/x"; mkdir "$SCRATCH/out"` writes scratch
    for words in _simple_commands(command):
        if (values := _assignments(words)) is not None:
            assigned.update(values)
            continue
        if assigned:
            words = [_expanded(w, assigned) for w in words]
        if _simple_changes(words, depth):
            yield words


def _program_of(words: list[str]) -> str:
    """The program a simple command runs (`sudo`, `timeout` and assignments before it left out)."""
    run = _run_of(words)
    return run[0].rsplit("/", 1)[-1] if run else ""


def _run_of(words: list[str]) -> list[str]:
    """A simple command's words as run: unquoted, `sudo`, `timeout` and assignments left out."""
    return _without_prefixes([_unquoted(w) for w in words])


def _assignments(words: list[str]) -> dict[str, str] | None:
    """The variables a command made only of assignments sets (`A=1 B="two"`, `export A=1`: a
    quoted value is a word of its own after `B=`), or None for any other command."""
    if "=" not in words[0] and words[0] != "export":
        return None  # most commands: not one assignment
    values: dict[str, str] = {}
    at = 1 if words[:1] == ["export"] and len(words) > 1 else 0
    while at < len(words):
        if not (m := _ASSIGNED.fullmatch(words[at])):
            return None
        value = m.group(2)
        if not value and at + 1 < len(words) and words[at + 1][:1] in ("'", '"'):
            at += 1
            value = words[at]
        values[m.group(1)] = _unquoted(value)
        at += 1
    return values


def _expanded(word: str, assigned: dict[str, str]) -> str:
    """The word with the variables the command assigned replaced by their values; past
    EXPANDED_CHARS of values put in, the rest of the word is left as written (a path is short,
    and a word of many long variables must not take the import's memory)."""
    if "$" not in word:
        return word
    budget = EXPANDED_CHARS

    def value(m: re.Match[str]) -> str:
        nonlocal budget
        found = assigned.get(m.group(1) or m.group(2))
        if found is None or len(found) > budget:
            return m.group(0)
        budget -= len(found)
        return found

    return _VARIABLE.sub(value, word)


def _may_change(text: str) -> bool:
    if ">" in text and _INTO_FILE.search(text):
        return True
    if "/init.d/" in text:
        return True
    words = set(_WORD_BREAKS.split(text))  # `/bin/rm`: `bin`, `rm`
    if not _DIRECT.isdisjoint(words):
        return True
    if not _MANAGERS.isdisjoint(words) and not _MANAGER_CHANGES.isdisjoint(words):
        return True
    if "gh" in words and not words.isdisjoint(_HOSTED):
        return True
    if "find" in words and ("-delete" in words or "-exec" in text or "-ok" in text):
        return True
    return not _SHELLS.isdisjoint(words) and ("-c" in words or "<<" in text)


def _simple_commands(command: str) -> list[list[str]]:
    """The words of each simple command; a heredoc's body left out unless a shell or `ssh` runs
    it (then its lines are commands too)."""
    kept: list[str] = []
    ending: str | None = None
    body_runs = False
    for line in command.splitlines():
        if ending is not None:
            if line.strip() == ending:
                ending = None
            elif body_runs:
                kept.append(line)
            continue
        if kept and kept[-1].endswith("\\") and not kept[-1].endswith("\\\\"):
            kept[-1] = kept[-1][:-1] + " " + line  # a line continued: one command
        else:
            kept.append(line)
        if m := _HEREDOC.search(line):
            ending = m.group(1)
            before = _WORD_BREAKS.split(line[: m.start()])
            body_runs = any(w.rsplit("/", 1)[-1] in (*_SHELLS, "ssh") for w in before)
    out: list[list[str]] = []
    words: list[str] = []
    comment = False  # from a word starting with `#` to the end of its line
    for token in _TOKEN.findall("\n".join(kept)):
        if token == "\n":
            comment = False
        if comment:
            continue
        if token in _SEPARATORS:
            out.append(words)
            words = []
        elif token.startswith("#"):
            comment = True
        else:
            words.append(token)
    out.append(words)
    return [w for w in out if w]


def _unquoted(token: str) -> str:
    if token[:1] in ("'", '"'):
        inner = token[1:]
        return inner[:-1] if inner.endswith(token[0]) else inner
    return token


def _simple_changes(words: list[str], depth: int) -> bool:
    args: list[str] = []
    skip = False
    for at, word in enumerate(words):
        if skip:
            skip = False
            continue
        if _REDIRECT.match(word):
            target = _unquoted(words[at + 1]) if at + 1 < len(words) else ""
            # output into a file; `2> err.log` is an error log, `2>&1` a descriptor
            stdout = not word[:1].isdigit() or word[:1] == "1"
            if stdout and not word.endswith(">&") and _kept(target):
                return True
            skip = True
        elif word in ("<", "<<", "<<-", "<<<"):
            skip = True
        else:
            args.append(_unquoted(word))
    return bool(args) and _program_changes(args, depth)


def _program_changes(words: list[str], depth: int) -> bool:
    words = _without_prefixes(words)
    if not words:
        return False
    program, args = words[0].rsplit("/", 1)[-1], words[1:]
    if program in _CHANGING:
        if set(args) & _LOOKING.get(program, set()):
            return False
        paths = [a for a in args if not a.startswith("-")]
        if program in _DESTINATION_LAST:
            paths = paths[-1:]
        elif program in _SETTING_FIRST:
            paths = paths[1:]
        return any(_kept(p) for p in paths)
    if program in ("curl", "wget"):
        return _downloads(program, args)
    if program == "ssh":
        return _remote_changes(args, depth)
    if program in _SHELLS:
        script = args[args.index("-c") + 1] if "-c" in args[:-1] else None
        return script is not None and changes_something(script, depth + 1)
    if program == "xargs":  # the paths come from the input: the program decides
        first = next((at for at, a in enumerate(args) if not a.startswith("-")), len(args))
        run = args[first:]
        if run and run[0].rsplit("/", 1)[-1] in _CHANGING:
            return not set(run) & _LOOKING.get(run[0].rsplit("/", 1)[-1], set())
        return bool(run) and _program_changes(run, depth)
    if program == "find":
        return _find_changes(args, depth)
    if program in _ACTIONS:
        return True
    if program == "service" or "/init.d/" in words[0]:
        action = args[1:2] if program == "service" else args[:1]
        return bool(action) and action[0] in _SERVICE_ACTIONS
    if program == "sed":
        return any(a.startswith(("-i", "--in-place")) for a in args)
    if program == "perl":
        return any(re.match(r"^-[0aclnpsw]*i", a) for a in args)
    if program.startswith("python") and args[:2] == ["-m", "pip"]:
        return _program_changes(args[1:], depth)
    if program == "gh":  # `gh [-R owner/repo] issue create …`: the verb after its noun
        noun = next((at for at, a in enumerate(args) if a in _HOSTED), None)
        verbs = [a for a in args[noun + 1 :] if not a.startswith("-")] if noun is not None else []
        return bool(verbs) and verbs[0] in _HOSTED[args[noun]]
    changes = _SUBCOMMANDS.get(program)
    if changes is None:
        return False
    named = [a for a in args if not a.startswith("-") or a in changes][:SUBCOMMAND_WORDS]
    return any(a in changes for a in named)


def _without_prefixes(words: list[str]) -> list[str]:
    """`sudo -u www rm x` → `rm x`; `timeout 5 rm x` → `rm x`; `FOO=1 npm i` → `npm i`."""
    while words:
        first = words[0].rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(words[0]):
            words = words[1:]
        elif first in _PREFIXES:
            words = words[1:]
            while words and (words[0].startswith("-") or _ASSIGNMENT.match(words[0])):
                valued = words[0] in ("-u", "-g", "-n", "-s", "-k", "-C")
                words = words[2:] if valued else words[1:]
            if first in ("timeout", "nice") and words and words[0][:1].isdigit():
                words = words[1:]  # the duration, the niceness
        else:
            return words
    return words


def _find_changes(args: list[str], depth: int) -> bool:
    """`find … -delete`, or `find … -exec rm {} \\;`."""
    if "-delete" in args:
        return True
    for at, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            run = []
            for word in args[at + 1 :]:
                if word in (";", "\\;", "+"):
                    break
                run.append(word)
            if run and _program_changes(run, depth):
                return True
    return False


def _downloads(program: str, args: list[str]) -> bool:
    """Whether `curl` or `wget` saves what it fetches into a file kept: curl with `-o FILE` or
    `-O` (the remote name, in the working folder); wget unless its output goes to standard
    output (`-O -`) or it only checks (`--spider`)."""
    saved: list[str] = []  # the files named for the output; "" for the remote name
    valued = _CURL_VALUED if program == "curl" else _WGET_VALUED
    output = "o" if program == "curl" else "O"
    at = 0
    while at < len(args):
        arg = args[at]
        at += 1
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name in ("output", "output-document"):
                saved.append(value if eq else args[at] if at < len(args) else "-")
                at += 0 if eq else 1
            elif name in ("remote-name", "remote-name-all"):
                saved.append("")
            elif name == "spider":
                return False
            continue
        if not arg.startswith("-") or arg == "-":
            continue
        for n, flag in enumerate(arg[1:], 1):
            if program == "curl" and flag == "O":
                saved.append("")
            elif flag in valued:
                value = arg[n + 1 :]
                if not value:
                    value = args[at] if at < len(args) else ""
                    at += 1
                if flag == output:
                    saved.append(value)
                break
    if program == "wget" and not saved:
        return True  # saved under the remote name, in the working folder
    return any(path == "" or (path != "-" and _kept(path)) for path in saved)


def _remote_changes(args: list[str], depth: int) -> bool:
    """Whether what `ssh [options] host command…` runs on the other machine changes something
    there (a bare `ssh host` opens a shell: nothing the log shows)."""
    at = 0
    while at < len(args) and args[at].startswith("-"):
        valued = len(args[at]) == 2 and args[at][1] in _SSH_VALUED
        at += 2 if valued else 1
    remote = args[at + 1 :]
    return bool(remote) and changes_something(" ".join(remote), depth + 1)


def _kept(path: str) -> bool:
    """A path outside scratch space (and not a file descriptor: `>&2`)."""
    return (
        bool(path)
        and not path.startswith(("&", *_SCRATCH))
        and path not in ("/tmp", "/dev/null")
        and not (
            ("$" in path or "%" in path or "appdata" in path.lower()) and _TEMPORARY.search(path)
        )
    )
