"""What a coding session's log shows, event by event: a request the user typed, a commit the tool
made, a file it added to the chat or edited, a shell command that changed something, a tool it
worked with. Each rests on a line of the file it was read from."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A conventional commit prefix: `feat:`, `fix(scope):`, `refactor!:`, the old `aider:`; a
# gitmoji before it (`✨ feat:`, `:bug: fix:`) marks the same type and goes with it.
_EMOJI = r"[\U0001F000-\U0001FAFF\u2300-\u23FF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D]"
_GITMOJI = rf"(?:{_EMOJI}{{1,4}}|:[a-z0-9_+-]{{2,30}}:)\s*"
_PREFIX = re.compile(rf"^(?:{_GITMOJI})?([a-z]{{2,12}})(\([^()\s]{{1,40}}\))?!?:\s+(\S.*)$")


def split_prefix(subject: str) -> tuple[str | None, str]:
    """(conventional prefix, title) of a commit subject: `fix(api): x` → ("fix(api)", "x"),
    `🐛 fix(api): x` too."""
    m = _PREFIX.match(subject.strip())
    if m is None:
        return None, subject.strip()
    return m.group(1) + (m.group(2) or ""), m.group(3).strip()


# A word of a commit subject that can name what it changes (five letters or more: `derivative`,
# `timeline`), and those that say what kind of change it is, or name no one thing
_SUBJECT_WORD = re.compile(r"[^\W\d_]\w{4,}")
_CHANGE_WORDS_SPELLED = """
added adding allow better branch change changed changes clean cleanup commit config correct
create created dependencies disable documentation enable ensure error errors feature features
files first fixed fixes format formatting handle implement implementation implemented improve
improved initial issue issues merge merged minor missing other phase project properly readme
refactor release remove removed rename renamed replace script scripts should small stage step
steps style support tests unused update updated updates using version
"""
_CHANGE_WORDS = frozenset(_CHANGE_WORDS_SPELLED.split())
# A trailer that tags a commit subject: one word after a dash, or a bracketed tag, at its end
_TRAILER = re.compile(r"\s+(?:[-\u2013\u2014]\s+\S+|[(\[][^)\]\n]*[)\]])\s*$")


def shared_subject_words(subject: str, other: str) -> set[str]:
    """The words two commit subjects share that can name what they change: not a word of
    `_CHANGE_WORDS`, nor one of a trailer both end with, which tags every subject alike
    ("… - claude", "… (spotter-gqc)")."""
    titles = [split_prefix(s)[1].casefold() for s in (subject, other)]
    tails = [_TRAILER.search(t) for t in titles]
    if tails[0] and tails[1] and tails[0].group(0).strip() == tails[1].group(0).strip():
        titles = [t[: tail.start()] for t, tail in zip(titles, tails, strict=True) if tail]
    first, second = (set(_SUBJECT_WORD.findall(t)) for t in titles)
    return (first & second) - _CHANGE_WORDS


# Characters of scripts written without spaces between words (Thai, kana, CJK ideographs):
# each counts as a word unit.
UNSPACED_CHARS = r"\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
UNSPACED = re.compile(f"[{UNSPACED_CHARS}]")


def word_units(text: str) -> int:
    """Whitespace-separated words, a word in a script without spaces counting one unit per
    character of that script."""
    units = 0
    for word in text.split():
        unspaced = len(UNSPACED.findall(word))
        units += unspaced if unspaced > 1 else 1
    return units


# A greeting or an address alone on a request's first line: one word ending in "!" or ","
# ("hi!", "Hello,", "สวัสดีครับ!"), with the request on the lines after it.
_GREETING = re.compile(r"^\S+[!,！，、]$")


# A frame drawn around a banner's words (`╔═══╗`, `║ TEAM SESSION ║`, `┌──┐`): box-drawing and
# block characters.
_FRAME = "".join(chr(c) for c in range(0x2500, 0x25A0)) + " \t"


def _drawn(line: str) -> bool:
    """A line drawn rather than written: no letter or digit (`=====`, `╔═══╗`, `---`, `/**`)."""
    return not any(c.isalnum() for c in line)


def naming_line(text: str) -> str:
    """The line of a request that names it: its first non-empty line (the words of a banner
    drawn around it, past the lines drawn above them: a rule, a frame's top), or the one after
    it where the first is only a greeting. A request with nothing but drawn lines is named by
    its first."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    written = [framed for line in lines if (framed := line.strip(_FRAME)) and not _drawn(framed)]
    lines = written[:2] or lines[:1]
    if len(lines) == 2 and _GREETING.match(lines[0]):
        return lines[1]
    return lines[0] if lines else ""


@dataclass(frozen=True)
class Request:
    line: int  # the first line of the request (1-based line of the file)
    text: str  # the request as typed (bounded): its naming line names it, the rest is context
    title: str
    asked: bool = False  # sent in a mode that answers without editing (aider's `/ask`)
    # Typed while the tool was working and handed to it within that turn (Claude Code's queued
    # prompt): it bears on the work in progress rather than starting the next item.
    queued: bool = False
    # A slash command with no words of a request after it (`/init`), whose expansion Claude Code
    # sent the model: like a queued prompt it joins the work in progress (`/commit` after edits),
    # and starts an item only where none is in progress; it names one only where nothing typed
    # does.
    command: bool = False
    # The option the assistant offered that a request typed as only its number picks
    # (`offered_choice`): it names the request, which says nothing itself
    option: str = ""

    @property
    def asked_for(self) -> str:
        """What the request asks for: its text, and the option it picked."""
        return f"{self.text}: {self.option}" if self.option else self.text

    @property
    def question(self) -> bool:
        """Asked, not ordered: sent in ask mode, or both the line naming it and its last line end
        with a question mark ("Is this open source?" followed by what to fix in it orders)."""
        if self.asked:
            return True
        last = next((line for line in reversed(self.text.splitlines()) if line.strip()), "")
        return all(s.rstrip().endswith(("?", "？")) for s in (naming_line(self.text), last))


@dataclass(frozen=True)
class Commit:
    line: int
    sha: str
    subject: str
    work: bool = True  # False: a snapshot of the user's own edits, or an /add auto-commit
    body: str = ""  # the message's lines after the subject, where the log shows them


@dataclass(frozen=True)
class FileTouched:
    line: int
    path: str
    edited: bool = True  # False: only added to the chat
    again: bool = False  # the session touched the file before: not in the digest again


@dataclass(frozen=True)
class ShellChange:
    """A shell command the tool ran that changed something (`shell_effects`), or work a subagent
    did that edited files: the request it was run for was carried out, though no file was
    edited with the editor's tools."""

    line: int
    command: str
    # made on the code host alone (`gh issue create`): nothing in the working tree to commit
    hosted: bool = False


@dataclass(frozen=True)
class ToolCall:
    """The tool worked on the request before it with one of its tools (read, searched, ran a
    command, asked a subagent, edited). A request answered after such work, with nothing edited,
    was carried out all the same (a review, an analysis), unless the work `tried` to change
    something that did not come through (an edit rejected, a command that failed) or the person
    stopped it (a call rejected, the turn interrupted): a failed start. Git alone, showing the
    work done or carrying it to the remote, is no such work. The first call after a request
    stands for the calls after it, and the first that tried a change or was stopped for those."""

    line: int
    tried: bool = False  # tried to change something, or stopped by the person


Event = Request | Commit | FileTouched | ShellChange | ToolCall
