"""Model-written text is kept as one clean line of bounded length, whatever the model wrote."""

from __future__ import annotations

import pytest

from yzos_jobs.entity.verdict_prompt import enforce_invariants
from yzos_jobs.inference.contract import ClassifyVerdict
from yzos_jobs.inference.fields import FIELD_MAX_CHARS, clean_model_text
from yzos_jobs.redact import mask_url_credentials


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("Fix\x00 login", "Fix login"),
        ("a\x00b", "ab"),
        ("line one\nline two\r\n\tend", "line one line two end"),
        ("  padded  ", "padded"),
        ("bell\x07 esc\x1b[31m del\x7f c1\x85\x9f", "bell esc[31m del c1"),
        ("lone \ud800 surrogate \udfff", "lone surrogate"),
        ("陈晓明\u2028确认", "陈晓明 确认"),
    ],
)
def test_controls_and_surrogates_are_removed_and_whitespace_collapsed(raw: str, kept: str) -> None:
    assert clean_model_text(raw, 100) == kept
    kept.encode("utf-8")  # storable as UTF-8


def test_long_text_is_cut_to_the_limit_with_an_ellipsis() -> None:
    cut = clean_model_text("word " * 1_000_000, 300)
    assert len(cut) == 300 and cut.endswith("…")
    assert clean_model_text("x" * 300, 300) == "x" * 300


def test_a_verdict_is_cleaned_before_anyone_sees_it() -> None:
    raw = ClassifyVerdict(
        is_real_entity=True,
        kind="project",
        display_name="\x00YZOS\nCore" + "e" * 10_000,
        confidence=0.9,
        reason="because\x00 " + "y" * 5_000_000,
    )
    verdict = enforce_invariants(raw)
    assert verdict.display_name is not None
    assert verdict.display_name.startswith("YZOS Core")
    assert len(verdict.display_name) == FIELD_MAX_CHARS["display_name"]
    assert verdict.reason.startswith("because y") and "\x00" not in verdict.reason
    assert len(verdict.reason) == FIELD_MAX_CHARS["reason"]


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("http://user:sk-abc123@host:8080/v1", "http://***@host:8080/v1"),
        (
            "cannot reach https://sk-abc123@api.example/v1: refused",
            "cannot reach https://***@api.example/v1: refused",
        ),
        ("http://u:p@ss@host/v1", "http://***@host/v1"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        # some services take the key as a query parameter
        (
            "POST http://host/v1/chat?api-key=sk-abc123&api-version=2024 failed",
            "POST http://host/v1/chat?api-key=***&api-version=*** failed",
        ),
        ("http://u:p@host/v1?key=sk-abc123#top", "http://***@host/v1?key=***#top"),
        ("a question? key=value", "a question? key=value"),
        ("(at http://h/v1?key=sk-abc123), then", "(at http://h/v1?key=***), then"),
    ],
)
def test_url_credentials_are_masked(text: str, masked: str) -> None:
    assert mask_url_credentials(text) == masked
