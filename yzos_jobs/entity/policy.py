"""Pure policy: what a verdict, or its failure, means for a candidate, and the forms of a name.

No database, no network: `decide` maps (candidate, outcome, failure policy) to Promote, Reject or
Release, following the design's fallback chain; `prepare` computes what writing a decision needs.
The key form of a name (uniqueness) and its display form are different functions, owned here.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from yzos_jobs.db.entities import EntityDraft, project_key
from yzos_jobs.db.queue import ClaimedCandidate, QueuedCandidate
from yzos_jobs.db.sighting_rows import fingerprint
from yzos_jobs.entity import noise_filter
from yzos_jobs.inference.contract import ClassifyInput, ClassifyOutcome
from yzos_jobs.inference.errors import LlmStopped
from yzos_jobs.inference.fields import FIELD_MAX_CHARS, one_line
from yzos_jobs.kinds import is_entity_kind
from yzos_jobs.text import has_visible_character, without_format_characters

SUMMARY_CHARS = 500
# Quote marks and their closing partners: a pair enclosing a whole name is dropped; a mark
# without its partner at either end is dropped; a balanced pair inside a name stays.
_QUOTE_PAIRS = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "„": "“", "«": "»"}
_CLOSING = {close: open_ for open_, close in _QUOTE_PAIRS.items()}

# What a classifier failure means at a call site: the structural fallback (entity_promote), or
# hand the candidate back to the queue (session end: entity_promote decides it later).
FailurePolicy = Literal["fallback", "release"]


# One documented bound for every name, wherever it enters (a candidate, a model's display_name,
# a triage proposal): no index entry on names can come near PostgreSQL's btree limit.
NAME_CHARS = FIELD_MAX_CHARS["display_name"]


def _balanced(text: str, mark: str) -> bool:
    """Whether `mark` has its partner in `text` (as many openings as closings)."""
    opening = _CLOSING.get(mark, mark) if mark not in _QUOTE_PAIRS else mark
    closing = _QUOTE_PAIRS[opening]
    if opening == closing:
        return text.count(opening) % 2 == 0
    return text.count(opening) == text.count(closing)


def _trim_quotes(text: str) -> str:
    """Quotes that enclose the whole name dropped, a quote mark at either end without its partner
    dropped; balanced quotes (and brackets) inside or at the end of a name kept: `Reply with
    "Hey"` keeps its closing quote."""
    t = text.strip()
    while len(t) >= 2 and t[0] in _QUOTE_PAIRS and t[-1] == _QUOTE_PAIRS[t[0]]:
        inner = t[1:-1]
        if t[0] in inner or t[-1] in inner:
            break  # the marks belong to quotes inside: "a" and "b"
        t = inner.strip()
    if t and (t[0] in _QUOTE_PAIRS or t[0] in _CLOSING) and not _balanced(t, t[0]):
        t = t[1:].strip()
    if t and (t[-1] in _QUOTE_PAIRS or t[-1] in _CLOSING) and not _balanced(t, t[-1]):
        t = t[:-1].strip()
    return t


def normalize_name(name: str) -> str:
    """The key form, used for uniqueness: NFKC, no format characters (zero-width, bidi
    controls: `Kestrel\u200bBoard` is `KestrelBoard`), one line (no control characters), quotes
    trimmed as in the display form, case-folded, at most NAME_CHARS characters."""
    text = without_format_characters(unicodedata.normalize("NFKC", name))
    return _trim_quotes(one_line(text)).casefold()[:NAME_CHARS]


def display_name(name: str | None) -> str | None:
    """The display form: NFKC, one line (no control characters), quotes that enclose the whole
    name or have no partner dropped (balanced quotes and brackets kept), case kept, at most
    NAME_CHARS characters (a longer name is cut and ends with "…"). None for a name with no
    visible character (only spaces, zero-width or bidi controls)."""
    if name is None:
        return None
    cleaned = _trim_quotes(one_line(unicodedata.normalize("NFKC", name)))
    if len(cleaned) > NAME_CHARS:
        cleaned = cleaned[: NAME_CHARS - 1].rstrip() + "…"
    return cleaned if has_visible_character(cleaned) else None


# A word of a name: a run of letters, or of digits (`alicechen92` is two words, `ehrql_llm` two),
# or one character of a script written without spaces (Han, kana, Hangul), each a word of its own.
_SPACELESS = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_NAME_WORD = re.compile(rf"[{_SPACELESS}]|\d+|[^\W\d_{_SPACELESS}]+")


def name_words(name: str) -> list[str]:
    """The words of a name, in order, compared as a person reads them: case-folded, accents and
    other marks dropped (`José` is `jose`; a Devanagari or Thai word loses its vowel signs, the
    same way in both names compared)."""
    decomposed = unicodedata.normalize("NFKD", name)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _NAME_WORD.findall(unicodedata.normalize("NFKC", bare).casefold())


def names_the_same(model_name: str, raw_text: str) -> bool:
    """Whether a model's `display_name` for a candidate is a form of the candidate's own name:
    at least half its words are words of the candidate ("YZOS Core" for `yzos-core`, "Alice
    Chen" for `alice.chen@x.com` or `alice`, a request's title cut from it), it spells words of
    the candidate that follow one another spaced otherwise ("VS Code" for `vscode-insiders`,
    "Alice Chen" for `alicechen92`), or the candidate is its initials ("Y Combinator" for `YC`).
    A name for something else ("assistant" for the repository `tellmepedia`, as a small model
    answers) is not taken: a name is what the structure saw, which the model may tidy, never
    replace."""
    words, raw = name_words(model_name), name_words(raw_text)
    if not words:
        return False
    if 2 * len(set(words) & set(raw)) >= len(set(words)):
        return True
    joined = "".join(words)
    if _spells_a_run(joined, raw):
        return True
    initials = "".join(w[0] for w in words)
    return len(initials) > 1 and initials == "".join(raw)


def _spells_a_run(joined: str, words: list[str]) -> bool:
    """Whether `joined` is words of `words` that follow one another, written together."""
    text = "".join(words)
    bounds, at = {0}, 0
    for word in words:
        at += len(word)
        bounds.add(at)
    start = text.find(joined)
    while start >= 0:
        if start in bounds and start + len(joined) in bounds:
            return True
        start = text.find(joined, start + 1)
    return False


def meaningful_summary(text: str | None) -> str | None:
    """The summary worth keeping of a text (structural check), whitespace collapsed and cut."""
    if not noise_filter.is_meaningful_summary(text):
        return None
    assert text is not None
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


@dataclass(frozen=True)
class Promote:
    kind: str
    display_name: str
    verdict_source: str  # llm | cache | dry_run | fallback
    model: str | None
    confidence: float | None
    verdict: dict[str, Any] | None


@dataclass(frozen=True)
class Reject:
    reason: str
    verdict: dict[str, Any] | None


@dataclass(frozen=True)
class Release:
    reason: str
    unasked: bool = False  # the process was stopping: nothing was asked, no attempt spent


Decision = Promote | Reject | Release


def decide(
    candidate: ClaimedCandidate, outcome: ClassifyOutcome | None, on_failure: FailurePolicy
) -> Decision:
    """What a verdict (or its failure) means for one candidate. `outcome` None: not asked (the
    candidate exhausted its attempts), which is decided like a classifier failure."""
    if (
        outcome is not None
        and outcome.source == "dry_run"
        and noise_filter.is_noise(candidate.raw_text)
    ):
        # The structural layer stands before the DryRun pass-through: junk never gets in.
        return Reject(reason="dry_run: structural noise", verdict=None)
    if not has_visible_character(candidate.raw_text):
        # Nothing to see is nothing to name, whatever a judge said.
        return Reject(reason="structural noise: no visible character", verdict=None)
    if outcome is not None and outcome.verdict is not None:
        v = outcome.verdict
        if v.is_real_entity and is_entity_kind(v.kind):
            assert v.kind is not None
            name = v.display_name if has_visible_character(v.display_name) else None
            if name is not None and not names_the_same(name, candidate.raw_text):
                name = None  # the model's name for something else: the candidate keeps its own
            name = name or display_name(candidate.raw_text) or candidate.raw_text
            return Promote(
                kind=v.kind,
                display_name=name,
                verdict_source=outcome.source or "llm",
                model=outcome.model_id,
                confidence=v.confidence,
                verdict=v.model_dump(),
            )
        return Reject(reason=f"{v.kind or 'not an entity'}: {v.reason}", verdict=v.model_dump())
    error = outcome.error if outcome is not None else None
    why = f"{error.__class__.__name__}: {error}" if error else "attempts exhausted"
    if isinstance(error, LlmStopped):
        return Release(reason=why, unasked=True)  # the process is stopping: the next run asks
    if on_failure == "release":
        return Release(reason=why)
    # Fallback chain: the structural filter decides only what is obviously junk.
    if noise_filter.is_noise(candidate.raw_text):
        return Reject(reason=f"fallback: structural noise ({why})", verdict=None)
    if candidate.suggested_kind is None:
        if outcome is None:
            return Reject(reason=f"fallback: no suggested kind ({why})", verdict=None)
        return Release(reason=f"no suggested kind to fall back on ({why})")
    return Promote(
        kind=candidate.suggested_kind,
        display_name=display_name(candidate.raw_text) or candidate.raw_text,
        verdict_source="fallback",
        model=None,
        confidence=None,
        verdict=None,
    )


def blocked_by_terminal_state(entity_id: int, status: str) -> str | None:
    """Terminal states are irreversible for the jobs: a candidate naming an archived entity does
    not join it (its sighting still counts). An active entity takes the candidate, even one an
    override pins (a user restored or corrected it). Returns the reason."""
    if status == "archived":
        return f"entity {entity_id} is archived by override"
    return None


@dataclass(frozen=True)
class Prepared:
    """A decision with what writing it needs, computed before the write transaction opens."""

    candidate: ClaimedCandidate
    decision: Decision
    key: tuple[str, str, str] = ("", "", "")  # (kind, normalized_name, project_key) of a Promote
    summary: str | None = None
    fingerprint: str = ""
    judged: ClassifyOutcome | None = None  # what the classifier said (None: not asked)


def prepare(
    candidate: ClaimedCandidate, decision: Decision, judged: ClassifyOutcome | None = None
) -> Prepared:
    if not isinstance(decision, Promote):
        return Prepared(candidate, decision, judged=judged)
    summary = meaningful_summary(candidate.surrounding_text)
    return Prepared(
        candidate,
        decision,
        (decision.kind, normalize_name(decision.display_name), scope_key(decision.kind, candidate)),
        summary,
        fingerprint(candidate.source_id, summary),
        judged,
    )


def scope_key(kind: str, candidate: ClaimedCandidate) -> str:
    """A project and a task are scoped by the repository they were seen in; a person is not."""
    return project_key(candidate.project_path) if kind in ("project", "task") else ""


def candidate_input(candidate: QueuedCandidate) -> ClassifyInput:
    """What the judge is asked about a queued candidate (the verdict cache keys it by this)."""
    return ClassifyInput(
        raw_text=candidate.raw_text,
        source_kind=candidate.source_kind,
        source_id=str(candidate.id),
        suggested_kind=candidate.suggested_kind,
        app_bundle_id=candidate.app_bundle_id,
        surrounding_text=candidate.surrounding_text,
    )


def entity_drafts(promotions: Sequence[Prepared]) -> list[EntityDraft]:
    """One draft per entity key: the earliest sighting's name and time, the first summary."""
    drafts: dict[tuple[str, str, str], EntityDraft] = {}
    for item in promotions:
        p, c = item.decision, item.candidate
        assert isinstance(p, Promote)
        seen = drafts.get(item.key)
        if seen is None or c.created_at < seen.first_seen_at:
            kind, normalized, key = item.key
            drafts[item.key] = EntityDraft(
                kind,
                normalized,
                display_name=p.display_name,
                confidence=p.confidence,
                verdict_source=p.verdict_source,
                classified_model=p.model,
                first_seen_at=c.created_at,
                summary=item.summary or (seen.summary if seen else None),
                project_key=key,
                project_path=c.project_path if p.kind == "project" else None,
            )
        elif item.summary and seen.summary is None:
            drafts[item.key] = replace(seen, summary=item.summary)
    return list(drafts.values())
