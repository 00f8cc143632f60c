"""The promote policy as a table: every row of the design's fallback chain and the terminal-state
rules, with no database and no network."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from yzos_jobs.db.queue import ClaimedCandidate
from yzos_jobs.db.sighting_rows import fingerprint
from yzos_jobs.entity.policy import (
    Promote,
    Reject,
    Release,
    blocked_by_terminal_state,
    decide,
    display_name,
    meaningful_summary,
    normalize_name,
    prepare,
)
from yzos_jobs.inference.contract import ClassifyOutcome, ClassifyVerdict
from yzos_jobs.inference.errors import LlmFailed, LlmInvalidOutput, LlmStopped, LlmTimeout

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def candidate(raw: str = "YZOS Core", kind: str | None = "project") -> ClaimedCandidate:
    return ClaimedCandidate(1, raw, kind, "window_title", "s1", None, "Working on YZOS Core", 1, T0)


def verdict(kind: str | None, real: bool, name: str | None = None) -> ClassifyOutcome:
    v = ClassifyVerdict(
        is_real_entity=real, kind=kind, display_name=name, confidence=0.8, reason="because"
    )
    return ClassifyOutcome(v, None, "llm", "m1")


def failed(error: Exception) -> ClassifyOutcome:
    return ClassifyOutcome(None, error, None, "m1")  # type: ignore[arg-type]


# (candidate raw text, suggested kind, outcome, failure policy) -> expected decision
CHAIN = [
    pytest.param("yzos core", "project", verdict("project", True, "YZOS Core"), "fallback",
                 Promote("project", "YZOS Core", "llm", "m1", 0.8, None), id="real-verdict"),
    pytest.param("  yzos core ", "task", verdict("task", True), "fallback",
                 Promote("task", "yzos core", "llm", "m1", 0.8, None), id="real-no-display-name"),
    # a small model's name for something else: the candidate keeps its own
    pytest.param("tellmepedia", "project", verdict("project", True, "assistant"), "fallback",
                 Promote("project", "tellmepedia", "llm", "m1", 0.8, None),
                 id="real-display-name-for-something-else"),
    pytest.param("ehrql_llm", "project", verdict("project", True, "EHRQL LLM"), "fallback",
                 Promote("project", "EHRQL LLM", "llm", "m1", 0.8, None),
                 id="real-display-name-tidied"),
    pytest.param("alice", "person", verdict("person", True, "Alice Chen"), "fallback",
                 Promote("person", "Alice Chen", "llm", "m1", 0.8, None),
                 id="real-display-name-completed"),
    pytest.param("vscode", "project", verdict("project", True, "VS Code"), "fallback",
                 Promote("project", "VS Code", "llm", "m1", 0.8, None),
                 id="real-display-name-spaced-otherwise"),
    pytest.param("vscode-insiders", "project", verdict("project", True, "VS Code"), "fallback",
                 Promote("project", "VS Code", "llm", "m1", 0.8, None),
                 id="real-display-name-spelling-words-that-follow-one-another"),
    pytest.param("alicechen92", "person", verdict("person", True, "Alice Chen"), "fallback",
                 Promote("person", "Alice Chen", "llm", "m1", 0.8, None),
                 id="real-display-name-of-a-handle-with-digits"),
    pytest.param("jose.garcia@example.com", "person", verdict("person", True, "José García"),
                 "fallback", Promote("person", "José García", "llm", "m1", 0.8, None),
                 id="real-display-name-with-accents"),
    pytest.param("api", "project", verdict("project", True, "Rapid Deploy"), "fallback",
                 Promote("project", "api", "llm", "m1", 0.8, None),
                 id="real-display-name-holding-the-letters-elsewhere"),
    pytest.param("myapp", "project", verdict("project", True, "app"), "fallback",
                 Promote("project", "myapp", "llm", "m1", 0.8, None),
                 id="real-display-name-a-part-of-a-word"),
    pytest.param("YC", "project", verdict("project", True, "Y Combinator"), "fallback",
                 Promote("project", "Y Combinator", "llm", "m1", 0.8, None),
                 id="real-display-name-of-its-initials"),
    pytest.param("我想要做一個OSCE教案開發的系統", "task",
                 verdict("task", True, "OSCE教案開發系統"), "fallback",
                 Promote("task", "OSCE教案開發系統", "llm", "m1", 0.8, None),
                 id="real-display-name-cut-from-a-request-without-spaces"),
    pytest.param("Telegram", "project", verdict("app", False), "fallback",
                 Reject("app: because", None), id="app-rejected"),
    pytest.param("Submit", "task", verdict("noise", False), "release",
                 Reject("noise: because", None), id="noise-rejected-even-at-session-end"),
    pytest.param("Maybe", "task", verdict(None, False), "fallback",
                 Reject("not an entity: because", None), id="not-real-no-kind"),
    pytest.param("YZOS Core", "project", failed(LlmFailed("down")), "release",
                 Release("LlmFailed: down"), id="failure-at-session-end-releases"),
    pytest.param("/Users/me/Code", "project", failed(LlmTimeout("slow")), "fallback",
                 Reject("fallback: structural noise (LlmTimeout: slow)", None),
                 id="failure-structural-junk-rejected"),
    pytest.param("YZOS Core", "project", failed(LlmStopped("stopping")), "fallback",
                 Release("LlmStopped: stopping", unasked=True),
                 id="not-asked-while-stopping-waits"),
    pytest.param("YZOS Core", None, failed(LlmInvalidOutput("bad")), "fallback",
                 Release("no suggested kind to fall back on (LlmInvalidOutput: bad)"),
                 id="failure-no-suggested-kind-waits"),
    pytest.param("YZOS Core", "project", failed(LlmFailed("down")), "fallback",
                 Promote("project", "YZOS Core", "fallback", None, None, None),
                 id="failure-promoted-by-fallback"),
    pytest.param("YZOS Core", None, None, "fallback",
                 Reject("fallback: no suggested kind (attempts exhausted)", None),
                 id="exhausted-no-suggested-kind-rejected"),
    pytest.param("12345", "task", None, "fallback",
                 Reject("fallback: structural noise (attempts exhausted)", None),
                 id="exhausted-structural-junk-rejected"),
    pytest.param("YZOS Core", "project", None, "fallback",
                 Promote("project", "YZOS Core", "fallback", None, None, None),
                 id="exhausted-promoted-by-fallback"),
    pytest.param("YZOS Core", "project", None, "release",
                 Release("attempts exhausted"), id="exhausted-at-session-end-releases"),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "kind", "outcome", "policy", "expected"), CHAIN)
def test_fallback_chain(raw, kind, outcome, policy, expected) -> None:
    got = decide(candidate(raw, kind), outcome, policy)
    # The verdict's JSON is carried along; compare what the decision means.
    if isinstance(got, Promote | Reject) and got.verdict is not None:
        assert got.verdict["kind"] == outcome.verdict.kind
        got = type(got)(**{**got.__dict__, "verdict": None})
    assert got == expected


@pytest.mark.parametrize("raw", ["3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22", "/Users/me/Code", "42"])
def test_dry_run_rejects_structural_junk_before_passing_anything_through(raw: str) -> None:
    outcome = ClassifyOutcome(verdict("task", True).verdict, None, "dry_run", None)
    assert decide(candidate(raw, "task"), outcome, "fallback") == Reject(
        "dry_run: structural noise", None
    )


def test_dry_run_source_is_kept() -> None:
    outcome = ClassifyOutcome(verdict("person", True).verdict, None, "dry_run", None)
    got = decide(candidate("Alice Chen", "person"), outcome, "fallback")
    assert isinstance(got, Promote) and got.verdict_source == "dry_run" and got.model is None


@pytest.mark.parametrize(
    ("status", "blocked"),
    # Archived blocks; an active entity takes the candidate, even one an override pins (the
    # caller does not even say whether one does: it cannot matter).
    [("active", False), ("archived", True)],
)
def test_only_an_archived_entity_blocks_promotion(status: str, blocked: bool) -> None:
    reason = blocked_by_terminal_state(7, status)
    assert (reason is not None) == blocked
    if blocked:
        assert "entity 7" in reason and "archived" in reason


@pytest.mark.parametrize(
    ("raw", "key", "shown"),
    [
        ("  YZOS   Core ", "yzos core", "YZOS Core"),
        ("\u201cQuoted\u201d", "quoted", "Quoted"),
        ("ＦＵＬＬ width", "full width", "FULL width"),
        ("Straße", "strasse", "Straße"),
        # Balanced quotes and brackets stay; quotes around the whole name, or unpaired, go.
        (
            'Reply to the greeting with "Hey"',
            'reply to the greeting with "hey"',
            'Reply to the greeting with "Hey"',
        ),
        ('"Hey" and "Ho" buttons', '"hey" and "ho" buttons', '"Hey" and "Ho" buttons'),
        ("Fix the (login) redirect", "fix the (login) redirect", "Fix the (login) redirect"),
        ('Fix the login redirect"', "fix the login redirect", "Fix the login redirect"),
        ("\u00abПривет\u00bb", "привет", "Привет"),
    ],
)
def test_key_form_and_display_form(raw: str, key: str, shown: str) -> None:
    assert normalize_name(raw) == key
    assert display_name(raw) == shown


def test_display_form_of_nothing_is_none() -> None:
    assert display_name("  ") is None and display_name(None) is None


def test_summary_check_cuts_and_refuses_dumps() -> None:
    assert meaningful_summary("3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22") is None
    assert meaningful_summary('{"a": 1}') is None
    long = meaningful_summary("word " * 200)
    assert long is not None and len(long) == 500 and long.endswith("…")


def test_prepare_keys_a_promotion_and_fingerprints_its_sighting() -> None:
    c = candidate("yzos core")
    prepared = prepare(c, Promote("project", "YZOS Core", "llm", "m1", 0.9, None))
    assert prepared.key == ("project", "yzos core", "")
    assert prepared.summary == "Working on YZOS Core"
    assert prepared.fingerprint == fingerprint("s1", "Working on YZOS Core")
    assert prepare(c, Reject("no", None)).key == ("", "", "")


def test_projects_and_tasks_are_scoped_by_their_repository_persons_are_not() -> None:
    def seen_in(path: str | None, kind: str) -> tuple[str, str, str]:
        c = ClaimedCandidate(1, "api", kind, "ai_tool", "s1", None, None, 1, T0, path)
        return prepare(c, Promote(kind, "api", "llm", "m1", 0.9, None)).key

    assert seen_in("/Users/a/Code/api", "project") != seen_in("/Users/b/Code/api", "project")
    assert seen_in("/Users/a/Code/api", "task") != seen_in("/Users/b/Code/api", "task")
    assert seen_in("/Users/a/Code/api", "task")[2] == seen_in("/Users/a/Code/api", "project")[2]
    assert seen_in("/Users/a/Code/api", "person") == seen_in(None, "person")
