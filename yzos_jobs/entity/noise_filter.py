"""Structural noise checks. Structure only (length, digits, paths, identifiers, dumps): no word
lists. Whether "Cursor" is a project is the classifier's call, never this module's."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from pathlib import PurePosixPath, PureWindowsPath

from yzos_jobs.text import has_visible_character, without_format_characters

_UUID = re.compile(
    r"^\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$", re.IGNORECASE
)
# A hash or short commit id: 7+ hex digits in one case, with a digit and a letter, so that words
# spelt in hex letters ("Decade", "deadbeef") and mixed-case names ("Cafe2024") stay.
_HEX_HASH = re.compile(r"^(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,}$", re.IGNORECASE)
# Unfilled template placeholders: mustache/Jinja, shell/JS, str.format and printf styles.
_PLACEHOLDER = re.compile(
    r"""
      \{\{[^{}]*\}\}                                         # {{ name }}
    | \{%[^{}]*%\}                                           # {% block %}
    | \$\{[^{}]*\}                                           # ${NAME}
    | \{(?:\d+|[A-Za-z_][\w.]*)?(?:![rsa])?(?::[^{}]*)?\}      # {} {0} {name} {0:>8}
    | %(?:\(\w+\)|\d+\$)?[-+\ 0\#]*(?:[1-9]\d*)?(?:\.\d+)?[sdifuxXeEgGc@](?![A-Za-z])  # %s %(n)s
    """,
    re.VERBOSE,
)
_HEX_BLOB = re.compile(r"^(0x)?[0-9a-f]{16,}$", re.IGNORECASE)
_HEX_RUN = re.compile(r"[0-9a-fA-F]{32,}")  # both cases spelt out: IGNORECASE is slower
_WIN_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_STACK_LINE = re.compile(
    r'^\s*(File ".*", line \d+|at [\w.$<>]+\(.*\)|Traceback \(most recent)', re.M
)
_BARE_SEGMENT = re.compile(r"^[\w.\-]+$")
_SEPARATOR = re.compile(r"[\\/]")
_DIGITS_ONLY = re.compile(r"[\d\s.,:_\-+/#]+")


def _compact(text: str) -> str:
    return " ".join(text.split())


def is_path(text: str) -> bool:
    """An absolute, home- or dot-relative or Windows path, or segments joined by separators."""
    t = text.strip()
    if t.startswith(("/", "~/", "./", "../", "\\\\")) or t == "~" or _WIN_DRIVE.match(t):
        return True
    if ("/" not in t and "\\" not in t) or " " in t:
        return False  # no separator, or a segment with a space: not a bare segment
    parts = _SEPARATOR.split(t)
    return len(parts) > 1 and all(_BARE_SEGMENT.match(p) for p in parts if p)


def is_identifier(text: str) -> bool:
    """A UUID or a hex hash: machine ids, never a name."""
    t = text.strip()
    if " " in t:
        return False  # machine ids have no spaces
    if _UUID.match(t):
        return True
    digits = t[2:] if t[:2] in ("0x", "0X") else t
    return bool(_HEX_HASH.match(digits)) and digits in (digits.lower(), digits.upper())


def is_placeholder(text: str) -> bool:
    """Only unfilled template placeholders, with nothing but punctuation or spaces around them
    ("{{project_name}}", "${USER}", "%s", "{0} {1}"). A sentence that mentions one
    ("Replace %s with f-strings") is left to the classifier."""
    if "{" not in text and "$" not in text and "%" not in text:
        return False
    rest = _PLACEHOLDER.sub("", text)
    return rest != text and not any(ch.isalnum() for ch in rest)


# Machine tokens inside a text: UUIDs, hex runs of 8+ in one case with a digit and a letter,
# digit runs of 10+ (epoch timestamps, phone numbers), and digit runs of 6+ joined to another
# token by `-`, `_` or `.` (`req-98503908-1724`, `data-492210-f73…`). A number of 6 to 9 digits
# standing among words is one a person writes: a ticket, an issue, a build, a date ("Fix issue
# #1234567", "Deploy build 20261206").
_MACHINE_TOKEN = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|(?<![0-9A-Za-z])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}(?![0-9A-Za-z])"
    r"|(?<![0-9A-Za-z])(?=[0-9A-F]*[0-9])(?=[0-9A-F]*[A-F])[0-9A-F]{8,}(?![0-9A-Za-z])"
    r"|[0-9]{10,}"
    r"|(?<=[0-9A-Za-z][-_.])[0-9]{6,9}(?![0-9])"
    r"|(?<![0-9])[0-9]{6,9}(?=[-_.][0-9A-Za-z])"
)
MACHINE_SHARE = 0.4  # of a text's non-space characters in machine tokens: noise


def machine_share(text: str) -> float:
    """The share of the text's non-space characters that are machine tokens (a UUID or a long hex
    or digit run inside the text: `Request ID: 98503908-…`)."""
    letters = len(text) - text.count(" ")
    if letters <= 0 or not any(ch.isdigit() for ch in text):
        return 0.0
    return sum(m.end() - m.start() for m in _MACHINE_TOKEN.finditer(text)) / letters


def is_noise(text: str | None) -> bool:
    """Empty, whitespace or nothing visible (zero-width and bidi characters), a single
    character, digits only, a path or path segment, a UUID or hex hash, a bare template
    placeholder, or a text mostly made of machine tokens (UUIDs, hex and digit runs). Structure
    only: whether a name is real is the classifier's call."""
    if text is None:
        return True
    t = _compact(without_format_characters(text))
    if len(t) <= 1 or not has_visible_character(t):
        return True
    if _DIGITS_ONLY.fullmatch(t):
        return True  # digits with separators only: numbers, dates, versions, ids
    if is_identifier(t) or is_placeholder(t) or machine_share(t) >= MACHINE_SHARE:
        return True
    # A path may start from a placeholder: "${HOME}/Code", "{{root}}/src".
    if "{" in t or "%" in t:
        t = _PLACEHOLDER.sub("x", t)
    return is_path(t) or t.endswith(("/", "\\"))


# Lines a terminal shows: a shell prompt (`$ `, `me@host:~/app$ `, `me@mac app % `, PowerShell's
# `PS C:\app> `, cmd's `C:\app>`, `[me@host app]# `, each perhaps after the environments a conda
# or virtualenv prompt names: `(base) me@host:~$ `), a log line that starts with a date and
# time, or a program given options alone (`ls -l`, `aider --help`: a command typed at the chat's
# prompt).
_TERMINAL = re.compile(
    r"""^(?:
        (?:\([^()\s]+\)\s+)*
        (?:
            PS\s+[A-Za-z]:\\[^>]*>
          | [A-Za-z]:\\[^>\s]*>
          | [\w.-]+@[\w.-]+(?::[^\s$#%]*|\s+[^\s$#%]+)?\s*[$#%]\s
          | \[[\w.-]+@[\w.-]+(?:\s+[^\]\n]*)?\]\s*[$#%]\s
          | \$\s
        )
      | \[?\d{4}-\d{2}-\d{2}[T\ ]\d{2}:\d{2}
      | \[?\d{2}:\d{2}:\d{2}
      | [\w.-]+(?:\s+--?[A-Za-z][\w-]*(?:=\S*)?)+\s*$
    )""",
    re.VERBOSE,
)
# Other lines pasted rather than written as a request: a Markdown table row or image, a log line
# that starts with a bracketed level or with the process it came from as a process manager
# prints it (pm2's `0|api  | …`, Docker Compose's `web-1  | …`), an environment assignment
# typed as a command (`export A=1`, `set A=1`, `setx NAME value`).
_PASTED = re.compile(
    r"""^(?:
        \|.*\|\s*$
      | !\[[^\]]*\]\(
      | \[[A-Z]{3,9}\]
      | (?:\d+\|[\w.@-]+|[\w.-]+[-_]\d+)\s*\|\s
      | [A-Za-z]+\s+[A-Za-z_][A-Za-z0-9_]*=
      | [A-Za-z]+\s+[A-Z][A-Z0-9]*_[A-Z0-9_]+(?:[\s:=]|$)
    )""",
    re.VERBOSE,
)


def looks_pasted(line: str) -> bool:
    """A line with the shape of pasted output (a table row, an image, a log or stack line, a
    shell command): structure, not words. Such a line names no work."""
    t = line.strip()
    return bool(_PASTED.match(t)) or looks_like_terminal(t)


def looks_like_terminal(line: str) -> bool:
    """A line with the shape of what a terminal shows: a command line, a prompt, a log line
    stamped with a date and time, a stack frame. Typed at a coding tool's prompt, it answers the
    tool (the command it asked for, the failure it caused) rather than asking for something."""
    t = line.strip()
    return bool(_TERMINAL.match(t) or _STACK_LINE.match(t)) or is_command_line(t)


# The parts of a command line typed at a chat's prompt (`git log --oneline --stat`, `curl -fsSL
# https://…/install.sh | bash`, `git commit -m "…"`): a program, an option, an operator joining
# commands, a plain word where a program, its subcommand or an option's value goes, and other
# arguments: a path, an assignment, a number, or what no sentence has (an operator, a URL, a
# quoted or `$` string).
_PROGRAM = re.compile(r"[a-z][a-z0-9._-]*")
_OPTION = re.compile(r"--?(?:[A-Za-z][\w-]*(?:=\S*)?|\d+)?")
_OPERATORS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "2>&1"})
_PLAIN_WORD = re.compile(r"[A-Za-z][\w.-]*")
_UNLIKE_PROSE = re.compile(r"\w+://\S*|\$\S*|\S*[\"']")
_ARGUMENT = re.compile(r"\S*[/\\~=]\S*|\.\S*|[\d.:]+")
# A command line is short; a longer line is prose or pasted text (and shlex's time grows with
# the square of a token's length)
_COMMAND_CHARS = 1000


def is_command_line(line: str) -> bool:
    """Whether a line reads as a shell command line: a program and an option, every word where a
    command line has it, and either something no sentence has (an operator, a URL, a quoted
    string) or options alone after the program and its subcommand (`git add -A`). A command
    typed at the prompt names no work; a sentence about options ("fix the --verbose flag",
    "rename -v to --verbose", "add -o ./out") is a request."""
    text = line.removesuffix("…")  # a title cut at its bound ends in "…"
    first = text.split(maxsplit=1)
    if (
        len(text) > _COMMAND_CHARS
        or len(first) < 2
        or "-" not in first[1]
        or not _PROGRAM.fullmatch(first[0])
    ):
        return False  # no program, or no option: most lines end here
    try:
        tokens = shlex.split(text, posix=False)  # a quoted argument is one token, quotes kept
    except ValueError:  # a quote left open: cut at the bound, or prose
        tokens = text.split()
    after = tokens[2:] if _PLAIN_WORD.fullmatch(tokens[1]) else tokens[1:]  # past a subcommand
    if after and all(_OPTION.fullmatch(token) for token in after):
        return True  # options alone: `git add -A`, `git log --oneline --stat`
    options = 0
    unlike_prose = False
    words_may_follow = 1  # the program's subcommand
    for token in tokens[1:]:
        if _OPTION.fullmatch(token):
            options += 1
            words_may_follow = 1  # the option's value
        elif token in _OPERATORS:
            unlike_prose = True
            words_may_follow = 2  # the next program and its subcommand
        elif _PLAIN_WORD.fullmatch(token):
            if not words_may_follow:
                return False
            words_may_follow -= 1
        elif token[0] in "\"'" or _UNLIKE_PROSE.fullmatch(token):
            unlike_prose = True
            words_may_follow = 0
        elif _ARGUMENT.fullmatch(token):
            words_may_follow = 0
        else:
            return False
    return options > 0 and unlike_prose


def is_meaningful_summary(text: str | None) -> bool:
    """Not empty, not a UUID, not a bare path, not a machine dump (hex blob, JSON, stack trace)."""
    if text is None or is_noise(text):
        return False
    t = text.strip()
    if _UUID.match(t) or _HEX_BLOB.match(t):
        return False
    if t[0] in "{[" and t[-1] in "}]":
        return False  # a JSON or literal dump
    if _STACK_LINE.search(t) or (_has_hex_run(t) and len(_HEX_RUN.sub("", t).strip()) < 8):
        return False
    return _letters(t) >= max(2, len(t) // 5)


_HEX_DIGITS = b"0123456789abcdefABCDEF"
# Every byte to "x" if it is a hex digit, else to a space (the same table serves any text).
_HEX_MASK = bytes(ord("x") if b in _HEX_DIGITS else ord(" ") for b in range(256))
_HEX_RUN_MASK = b"x" * 32


def _has_hex_run(text: str) -> bool:
    """Whether `_HEX_RUN` occurs in the text: for ASCII text, a byte mask searched in C (the
    regular expression tries a match at each of the many hex letters of plain English)."""
    if text.isascii():
        return _HEX_RUN_MASK in text.encode("ascii").translate(_HEX_MASK)
    return _HEX_RUN.search(text) is not None


_ASCII_LETTERS = bytes(range(ord("A"), ord("Z") + 1)) + bytes(range(ord("a"), ord("z") + 1))


def _letters(text: str) -> int:
    """How many characters are letters (str.isalpha), counted in C for ASCII text."""
    if text.isascii():
        raw = text.encode("ascii")
        return len(raw) - len(raw.translate(None, _ASCII_LETTERS))
    return sum(map(str.isalpha, text))


def _segments(path: str) -> list[str]:
    if "\\" in path or _WIN_DRIVE.match(path):
        return list(PureWindowsPath(path).parts)
    return list(PurePosixPath(path).parts)


def is_plausible_project_path(path: str | None, work_dir_segments: Iterable[str]) -> bool:
    """The path runs through a real work directory (one of the configured structural markers)
    and names something below it."""
    if not path or not path.strip():
        return False
    segments = _segments(normalize_project_path(path))
    markers = set(work_dir_segments)
    for index, segment in enumerate(segments):
        if segment in markers and index < len(segments) - 1:
            return True
    return False


_FILE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,8}$")


def normalize_project_path(path: str) -> str:
    """Strip whitespace, quotes, trailing separators, a trailing file name and `.git`."""
    p = path.strip().strip("\"'").rstrip("/\\") or path.strip()
    name = _SEPARATOR.split(p)[-1]
    sep = "\\" if "\\" in p and "/" not in p else "/"
    looks_like_file = bool(name and _FILE_SUFFIX.search(name) and not name.startswith("."))
    if os.path.isdir(os.path.expanduser(p)):
        looks_like_file = False  # a directory named like a file ("socket.io") stays
    if name == ".git" or looks_like_file:
        head = p[: len(p) - len(name)].rstrip("/\\")
        p = head or sep
    return p
