"""Whether a shell command a coding tool ran changed something: wrote, moved, linked or removed a
file, installed or removed a package, stopped a process or a service, set a setting. A request
carried out that way (link the app into /Applications, restart the server, uninstall a router's
cloud services over ssh) is work done as much as one carried out with the editor's tools; one
answered with `ls`, `cat`, `grep` or a test run is not.

Read from the command's structure, program by program: the programs that change the files they
are given, package and service managers with a subcommand that changes something, `sed -i`,
output redirected into a file, and what `ssh` runs on the other machine. Scratch space (`/tmp`,
`/dev`) changes nothing the person keeps. Version control is left out: a commit is read as a
commit, and a push or a merge carries out the work before it, not work of its own.
"""

from __future__ import annotations

import re

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
        "tee",
        "touch",
        "unzip",
    }
)
# Of these, the ones that change only their last path (a copy's or a link's destination).
_DESTINATION_LAST = frozenset({"cp", "install", "ln", "rsync"})
# Package managers, and their subcommands that install or remove something.
_PACKAGE_CHANGES = {
    "apt": {"install", "remove", "purge"},
    "apt-get": {"install", "remove", "purge"},
    "brew": {"install", "uninstall", "reinstall", "upgrade", "link", "services"},
    "bun": {"add", "install", "i", "remove", "rm"},
    "cargo": {"add", "install", "remove"},
    "gem": {"install", "uninstall"},
    "go": {"get", "install"},
    "npm": {"install", "i", "add", "uninstall", "remove", "rm", "un", "link", "update"},
    "pip": {"install", "uninstall"},
    "pip3": {"install", "uninstall"},
    "pnpm": {"add", "install", "i", "remove", "rm", "update"},
    "poetry": {"add", "remove", "install"},
    "uv": {"add", "remove", "pip"},
    "yarn": {"add", "install", "remove", "upgrade"},
    "apk": {"add", "del"},
    "choco": {"install", "uninstall", "upgrade"},
    "dnf": {"install", "remove", "upgrade"},
    "opkg": {"install", "remove", "upgrade"},
    "scoop": {"install", "uninstall", "update"},
    "snap": {"install", "remove", "refresh"},
    "winget": {"install", "uninstall", "upgrade"},
    "yum": {"install", "remove", "update"},
    # services and settings
    "launchctl": {"load", "unload", "bootstrap", "bootout", "kickstart", "enable", "disable"},
    "systemctl": {"start", "stop", "restart", "reload", "enable", "disable", "mask", "unmask"},
    "uci": {"set", "commit", "delete", "add", "add_list", "del_list", "rename"},
    "defaults": {"write", "delete"},
    "crontab": {"-r", "-"},
}
# What a service script (`/etc/init.d/<name> stop`, `service <name> stop`) is told to do.
_SERVICE_ACTIONS = frozenset({"start", "stop", "restart", "reload", "enable", "disable"})
# Programs whose run is itself the change.
_ACTIONS = frozenset({"reboot", "shutdown", "poweroff"})
# ssh's options that take a value (`-p 22`, `-i key`): the host is the first word after them.
_SSH_VALUED = frozenset("BbcDEeFIiJLlmOopQRSWw")
# Words before the program that leave it the program: `sudo rm`, `FOO=1 npm install`.
_PREFIXES = frozenset({"sudo", "command", "exec", "nohup", "time", "env"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;", "|&"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
# A shell line's tokens: a quoted string whole, an operator, or a run of other characters (a lone
# quote left open matches nothing and is skipped).
_TOKEN = re.compile(
    r"""
    '[^']*'                                 # a single-quoted string
    | "(?:\\.|[^"\\])*"                      # a double-quoted string
    | &&|\|\||;;|\|&|&>>|&>|>>|>\||[;&|()<>]    # an operator
    | [^\s;&|()<>'"]+                        # a word, or its unquoted part
    """,
    re.VERBOSE,
)
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")
_SCRATCH = ("/tmp/", "/dev/", "/private/tmp/", "/var/folders/")
# Whether a line can change anything at all, before it is read word by word (most commands a
# session runs only read: `ls`, `cat`, `grep`, tests): one of the programs above as a word of its
# own, or output sent into a file (not `2>&1`, `>/dev/null`, `->`, `=>`).
_PROGRAMS = frozenset({*_CHANGING, *_PACKAGE_CHANGES, *_ACTIONS, "sed", "perl", "service", "ssh"})
_INTO_FILE = re.compile(r">{1,2}(?!\s*(?:&|/dev/null))")


def changes_something(command: str) -> bool:
    """Whether `command` (a shell command line, heredocs and all) changes a file, a package or a
    process outside scratch space."""
    if not _may_change(command):
        return False
    return any(_simple_changes(words) for words in _simple_commands(command))


def _simple_commands(command: str) -> list[list[str]]:
    """The words of each simple command, a heredoc's body left out (it is text, not commands)."""
    out: list[list[str]] = []
    ending: str | None = None
    for line in command.splitlines():
        if ending is not None:
            if line.strip() == ending:
                ending = None
            continue
        if m := _HEREDOC.search(line):
            ending = m.group(1)
        if not _may_change(line):
            continue
        words: list[str] = []
        for token in _TOKEN.findall(line):
            if token in _SEPARATORS:
                out.append(words)
                words = []
            elif token.startswith("#"):
                break  # a comment to the end of the line
            else:
                words.append(_unquoted(token))
        out.append(words)
    return [w for w in out if w]


def _unquoted(token: str) -> str:
    if len(token) > 1 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    return token


def _may_change(text: str) -> bool:
    if not _PROGRAMS.isdisjoint(text.split()) or "/init.d/" in text:
        return True
    return ">" in text and any(
        m.start() == 0 or text[m.start() - 1] not in "0123456789&=-"
        for m in _INTO_FILE.finditer(text)
    )


def _simple_changes(words: list[str]) -> bool:
    for at, word in enumerate(words[:-1]):
        if word in _REDIRECTS and _kept(words[at + 1]) and not _fd_before(words, at):
            return True
    while words and (words[0] in _PREFIXES or _ASSIGNMENT.match(words[0])):
        words = words[1:]
    if not words:
        return False
    program = words[0].rsplit("/", 1)[-1]
    args = [w for w in words[1:] if w not in _REDIRECTS and not w.startswith("<")]
    if program in _CHANGING:
        paths = [a for a in args if not a.startswith("-")]
        if program in _DESTINATION_LAST:
            paths = paths[-1:]
        return not paths or any(_kept(p) for p in paths)
    if program == "ssh":
        return _remote_changes(args)
    if program in _ACTIONS:
        return True
    if program == "service" or "/init.d/" in words[0]:
        action = args[1:2] if program == "service" else args[:1]
        return bool(action) and action[0] in _SERVICE_ACTIONS
    if program == "sed":
        return any(a.startswith("-i") or a == "--in-place" for a in args)
    if program == "perl":
        return any(re.match(r"^-[a-zA-Z]*i", a) for a in args)
    changes = _PACKAGE_CHANGES.get(program)
    return changes is not None and bool(args) and args[0] in changes


def _remote_changes(args: list[str]) -> bool:
    """Whether what `ssh [options] host command…` runs on the other machine changes something
    there (a bare `ssh host` opens a shell: nothing the log shows)."""
    at = 0
    while at < len(args) and args[at].startswith("-"):
        valued = len(args[at]) == 2 and args[at][1] in _SSH_VALUED
        at += 2 if valued else 1
    remote = args[at + 1 :]
    return bool(remote) and changes_something(" ".join(remote))


def _fd_before(words: list[str], at: int) -> bool:
    """`2> file`: the lexer splits a descriptor's number from its redirect; an error log is
    output, not a change."""
    return at > 0 and words[at - 1].isdigit()


def _kept(path: str) -> bool:
    """A path outside scratch space (and not a file descriptor: `>&2`)."""
    return not path.startswith(("&", *_SCRATCH)) and path not in ("/tmp", "/dev/null")
