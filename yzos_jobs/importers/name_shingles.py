"""How close two names are, by structure alone: the Jaccard similarity of their character
shingles (three characters of the case-folded words, one space between words kept). Used to
tell the same work named twice: a work item and an open task of its project (`same_work`), and
a request asked again right after an attempt at it (`ClosedSession.tasks`)."""

from __future__ import annotations

import re

SHINGLE = 3
_WORD = re.compile(r"\w+")


def shingles(name: str) -> frozenset[str]:
    """The name's character shingles (of its case-folded words, one space between them)."""
    text = " ".join(_WORD.findall(name.casefold()))
    if len(text) <= SHINGLE:
        return frozenset([text]) if text else frozenset()
    return frozenset(text[i : i + SHINGLE] for i in range(len(text) - SHINGLE + 1))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """The Jaccard similarity of two shingle sets: 0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
