"""A request that only picks one of the options the assistant offered: what it asks for.

An assistant often ends a reply with the next steps as a numbered list and a question ("Which
would you like next? 1. Implement the lesson API 2. Build the front end"), and the person answers
with the number alone ("1"). The typed text names nothing; the option it picks is what was
asked, and names the work that follows (a person reading the session says "implemented the
lesson API", not "1").

The options are the last numbered list of the assistant's last text before the request: a list
starts again at 1, so a reply that numbers its summary first and its offer last is read by its
offer, and goes on only by the next number (a time or a year in the text is no option). An
option's first line is the option; emphasis marks around it are not its words; a code block
holds no options.
"""

from __future__ import annotations

import re

# The number alone, as typed: "1", "2.", "(3)", "option 2", "#1"
_CHOICE = re.compile(r"^\s*(?:(?:option|choice|no\.?)\s*|#)?\(?(\d{1,2})\)?[.)]?\s*$", re.I)
# An option: "1. Do x", "**2.** Do y", "3) Do z", "- 4. Do w", "### Option 1: Do v",
# "**Option 2**: Do u"
_OPTION = re.compile(
    r"^\s*(?:[-*]\s+)?(?:#{1,6}\s*)?(?:\*\*|__)?(?:option\s+)?(\d{1,2})(?:[.):]|\*\*|__)+\s*(\S.*)$",
    re.I,
)
_EMPHASIS = re.compile(r"\*\*|__")


def chosen_number(typed: str) -> int | None:
    """The number a request that is only a choice picks, or None."""
    m = _CHOICE.match(typed)
    return int(m.group(1)) if m else None


def offered_options(said: str) -> dict[int, str]:
    """The options of the last numbered list in an assistant's text, by number."""
    options: dict[int, str] = {}
    fenced = False
    for line in said.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else _OPTION.match(line)
        if m is None:
            continue
        number = int(m.group(1))
        if number == 1:
            options = {}  # a list begins again: the offer is the last list
        elif number - 1 not in options:
            continue  # not the list's next item (a time, a year, a list's own sub-numbering)
        option = _EMPHASIS.sub("", m.group(2)).strip().rstrip("?？").strip()
        if option:
            options[number] = option
    return options


def chosen_option(typed: str, said: str | None) -> str | None:
    """The option a request that is only a number picks among those the assistant's last text
    (`said`) offered, or None (the request says more, or nothing was offered under its number)."""
    number = chosen_number(typed)
    if number is None or not said:
        return None
    return offered_options(said).get(number)
