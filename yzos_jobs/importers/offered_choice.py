"""A request that only picks one of the options the assistant offered: what it asks for.

An assistant often ends a reply with the next steps as a numbered list and a question ("Which
would you like next? 1. Implement the lesson API 2. Build the front end"), and the person answers
with the number alone ("1"), or names it in a few words ("Let's do option 1"). The typed text
names nothing; the option it picks is what was asked, and names the work that follows (a person
reading the session says "implemented the lesson API", not "1").

The offer is the numbered list that ends the assistant's last text: at most a few lines (the
question) follow its last item, so a summary numbered earlier in a reply offers nothing. A list
starts at 1 and goes on only by the next number at its own indentation: a list numbered inside
an item is that item's detail, and a time or a decimal in the text ("2:15", "1.5x") is no item.
An option's first line is the option, emphasis marks dropped; a code block holds no options.
"""

from __future__ import annotations

import re

from yzos_jobs.importers.closed_session import TITLE_CHARS
from yzos_jobs.importers.session_events import word_units

# The number alone, as typed: "1", "2.", "(3)", "２", "option 2", "#1"
_CHOICE = re.compile(r"^\s*(?:(?:option|choice)\s*|#)?\(?(\d{1,2})\)?[.)。]?\s*$", re.I)
# An option named by its number in a short reply ("Let's do option 1", "Option 2 of course",
# "okay try again option 1"): a reply this short that names one option and no other number
# only picks it
_NAMED_CHOICE = re.compile(r"(?<!\w)(?:option|choice)\s*#?(\d{1,2})(?!\w)", re.I)
_DIGIT = re.compile(r"\d")
NAMED_CHOICE_UNITS = 6
# "1. Do x", "**2.** Do y", "3) Do z", "- 4. Do w", "1、做 x"
_NUMBERED = re.compile(
    r"^(\s*)(?:[-*+]\s+)?(?:\*\*|__)?(\d{1,2})(?:[.)](?:\*\*|__)?\s+|[．、）](?:\*\*|__)?\s*)(\S.*)$"
)
# "### Option 1: Do v", "**Option 2**: Do u", "Option 3 — Do t"
_OPTION = re.compile(
    r"^(\s*)(?:[-*+]\s+)?(?:#{1,6}\s+)?(?:\*\*|__)?(?:option|choice)\s+(\d{1,2})"
    r"(?:\*\*|__)?\s*(?:[:.)]|[-–—]\s)?(?:\*\*|__)?\s*(\S.*)$",
    re.I,
)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_EMPHASIS = re.compile(r"\*\*|__")
# Lines after the offer's last item: the question that asks which ("Which first?"), a line
# saying what happens next; more is a reply that goes on past a list it numbered
TRAILING_LINES = 3


def chosen_number(typed: str) -> int | None:
    """The number a request that is only a choice, or a short reply naming one option, picks,
    or None."""
    if m := _CHOICE.match(typed):
        return int(m.group(1))
    named = _NAMED_CHOICE.findall(typed)
    if (
        len(named) == 1
        and len(_DIGIT.findall(typed)) == len(named[0])
        and word_units(typed) <= NAMED_CHOICE_UNITS
    ):
        return int(named[0])
    return None


def _indent(line: str) -> int:
    spaced = line.expandtabs(4)
    return len(spaced) - len(spaced.lstrip())


def _item(line: str) -> tuple[int, int, str] | None:
    """(indentation, number, text) of a line that is an item of a numbered list."""
    m = _NUMBERED.match(line) or _OPTION.match(line)
    if m is None:
        return None
    return _indent(line), int(m.group(2)), m.group(3)


def offered_options(said: str) -> dict[int, str]:
    """The options of the numbered list that ends an assistant's text, by number (none where
    the text goes on past its last list)."""
    options: dict[int, str] = {}
    indent = 0
    after = 0  # lines of the list's own level since its last item
    fence: str | None = None
    for line in said.splitlines():
        if m := _FENCE.match(line):
            mark = m.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        if fence is not None or not line.strip():
            continue
        found = _item(line)
        if found is not None and found[1] == 1 and (not options or found[0] <= indent):
            options, indent, after = {}, found[0], 0  # a list begins (again)
        elif found is not None and found[0] == indent and found[1] - 1 in options:
            after = 0  # the list's next item
        else:
            # a line of an item (indented below it), or text after the list
            if _indent(line) <= indent:
                after += 1
            continue
        option = _EMPHASIS.sub("", found[2]).strip().rstrip("?？").strip()
        options[found[1]] = option[:TITLE_CHARS]
    return options if after <= TRAILING_LINES else {}


def chosen_option(typed: str, said: str | None) -> str | None:
    """The option a request that is only a number (or names one in a few words) picks among
    those the assistant's last text (`said`) offered, or None (the request says more, or
    nothing was offered under its number)."""
    number = chosen_number(typed)
    if number is None or not said:
        return None
    return offered_options(said).get(number) or None
