"""Model replies: whatever a server answers costs at most that one input.

The classifier talks to the loopback double through the real `openai` client; the CLI cases run
`yzos-jobs` in a child process and check that the user gets one line, never a traceback.
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.llm_env import llm_cli_env
from tests.support.cli import run_cli
from tests.support.llm import make_classifier
from yzos_jobs.config import LoggingSettings
from yzos_jobs.entity.classifier import ClassifyInput, LlmFailed, LlmInvalidOutput, LlmTimeout
from yzos_jobs.inference.client import MAX_REPLY_BYTES
from yzos_jobs.inference.fields import FIELD_MAX_CHARS
from yzos_jobs.logging import configure_logging, get_logger
from yzos_jobs.testing import (
    Body,
    Cut,
    Drip,
    Drop,
    OpenAIDouble,
    Raw,
    Reply,
    Status,
    candidate_of,
    nested,
    verdict,
)

pytestmark = pytest.mark.adversarial

KEY = "sk-embedded-secret-4242"
ALPHA = ClassifyInput("Alpha", "window_title", "w1", "project")


def _inputs(*names: str) -> list[ClassifyInput]:
    return [ClassifyInput(n, "window_title", f"w{i}", "project") for i, n in enumerate(names)]


def _by_name(replies: dict[str, Reply]) -> Any:
    """A responder: the reply for the candidate's raw_text, else a real project verdict."""

    def respond(body: dict[str, Any]) -> Reply:
        name = candidate_of(body).get("raw_text", "")
        return replies.get(name, verdict("project", name=name))

    return respond


def test_deeply_nested_reply_json_is_invalid_output_for_that_candidate_only() -> None:
    deep = Raw('{"is_real_entity": ' + nested(100_000) + "}")
    with OpenAIDouble(_by_name({"Deep": deep, "Deeper": Raw(nested(200_000))})) as llm:
        outcomes = (
            make_classifier(llm.base_url)
            .classify_many(_inputs("Alpha", "Deep", "Beta", "Deeper"))
            .outcomes
        )
    alpha, deep_out, beta, deeper = outcomes
    assert alpha.verdict and alpha.verdict.display_name == "Alpha"
    assert beta.verdict and beta.verdict.display_name == "Beta"
    assert isinstance(deep_out.error, LlmInvalidOutput) and deep_out.verdict is None
    assert isinstance(deeper.error, LlmInvalidOutput)


def test_deeply_nested_http_body_is_llm_failed() -> None:
    with OpenAIDouble(lambda b: Body(nested(200_000))) as llm, pytest.raises(LlmFailed):
        make_classifier(llm.base_url).classify(ALPHA)


def test_nul_bytes_and_control_characters_are_stripped_from_model_text() -> None:
    dirty = verdict("project", name="YZOS\x00 Core\x1b", reason="a\x00 repo\nwith\tlines\x7f")
    with OpenAIDouble(lambda b: dirty) as llm:
        result = make_classifier(llm.base_url).classify(ALPHA)
    assert result.display_name == "YZOS Core"
    assert result.reason == "a repo with lines"


@pytest.mark.parametrize(
    "body",
    [
        Body("<html><body>502 Bad Gateway</body></html>", "text/html"),
        Body("[1, 2, 3]"),
        Body('"just a string"'),
        Body('{"choices": "none"}'),
        Body('{"choices": [{"message": {"content": 42}}]}'),
        Body(""),
    ],
    ids=["html", "array", "string", "choices-not-a-list", "content-not-text", "empty"],
)
def test_http_200_with_a_body_that_is_not_a_completion_is_llm_failed(body: Body) -> None:
    with OpenAIDouble(lambda b: body) as llm, pytest.raises(LlmFailed, match="reply from"):
        make_classifier(llm.base_url).classify(ALPHA)


def test_html_body_through_the_cli_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    html = Body("<!doctype html><title>proxy login</title>", "text/html")
    with OpenAIDouble(lambda b: html) as llm:
        env = llm_cli_env(tmp_path, f"sqlite:///{tmp_path / 'y.db'}", llm.base_url)
        result = run_cli("classify", "Alpha", "--kind", "project", env=env, cwd=tmp_path)
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"] == "LlmFailed"
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("headers", [False, True], ids=["body-drips", "headers-drip"])
def test_a_server_dripping_one_byte_every_half_second_is_cut_at_timeout_s(headers: bool) -> None:
    """Every byte comes well within a read timeout, and the whole reply would take minutes:
    only a deadline on the whole request ends it. A reply that drips to its end within
    timeout_s is answered."""
    with OpenAIDouble(lambda b: Drip(0.5, headers=headers)) as llm:
        classifier = make_classifier(llm.base_url, timeout_s=3.0, max_retries=0)
        with pytest.raises(LlmTimeout):
            classifier.classify(ALPHA)
    with OpenAIDouble(lambda b: Drip(0.0005, headers=headers)) as llm:
        classifier = make_classifier(llm.base_url, timeout_s=30.0, max_retries=0)
        assert classifier.classify(ALPHA).kind == "noise"


def test_one_classify_is_bounded_by_timeout_times_requests() -> None:
    """A re-ask and a retry are separate requests, each with its own deadline, each cut."""
    replies = iter([Raw("not json"), Drip(0.2), Drip(0.2)])
    with OpenAIDouble(lambda b: next(replies)) as llm:
        classifier = make_classifier(llm.base_url, timeout_s=1.5, max_retries=1)
        with pytest.raises(LlmTimeout):
            classifier.classify(ALPHA)
    assert llm.calls == 3  # the question, the re-ask, the re-ask's retry


def test_a_megabyte_reason_is_capped() -> None:
    huge = verdict("noise", reason="spam " * 200_000)
    with OpenAIDouble(lambda b: huge) as llm:
        # the size is tested, not the clock: a busy machine may take seconds for a megabyte
        result = make_classifier(llm.base_url, timeout_s=120.0).classify(ALPHA)
    assert len(result.reason) == FIELD_MAX_CHARS["reason"] and result.reason.endswith("…")


def test_a_reply_past_the_size_bound_is_llm_failed_and_not_asked_again() -> None:
    """A server that answers with more than any reply could be (a base URL pointing at a file
    server, a proxy gone wrong) is not read into memory whole, nor asked again."""
    huge = verdict("noise", reason="spam " * (MAX_REPLY_BYTES // 5 + 1))
    with OpenAIDouble(lambda b: huge) as llm:
        classifier = make_classifier(llm.base_url, timeout_s=120.0, max_retries=2)
        with pytest.raises(LlmFailed, match=f"reply larger than {MAX_REPLY_BYTES} bytes"):
            classifier.classify(ALPHA)
    assert llm.calls == 1


def test_a_reply_cut_by_max_tokens_is_invalid_output_without_a_reask() -> None:
    cut = Cut('{"is_real_entity": true, "kind": "proj')
    with (
        OpenAIDouble(lambda b: cut) as llm,
        pytest.raises(LlmInvalidOutput, match="max_tokens = 99"),
    ):
        make_classifier(llm.base_url, max_tokens=99).classify(ALPHA)
    assert llm.calls == 1
    assert llm.requests[0]["max_tokens"] == 99


def test_outcomes_are_per_candidate_whatever_breaks() -> None:
    broken: dict[str, Reply] = {
        "Nested": Raw(nested(100_000)),
        "Html": Body("<html></html>", "text/html"),
        "Array": Body("[]"),
        "Dropped": Drop(),
        "Cut": Cut("{"),
        "Refused": Status(400),
    }
    names = ["Alpha", *broken, "Beta", "Gamma"]
    with OpenAIDouble(_by_name(broken)) as llm:
        classifier = make_classifier(llm.base_url, max_concurrency=2, breaker_threshold=50)
        outcomes = dict(zip(names, classifier.classify_many(_inputs(*names)).outcomes, strict=True))
    for name in ("Alpha", "Beta", "Gamma"):
        assert outcomes[name].verdict is not None and outcomes[name].source == "llm"
    for name in broken:
        assert outcomes[name].verdict is None and outcomes[name].error is not None, name
    assert isinstance(outcomes["Nested"].error, LlmInvalidOutput)
    assert isinstance(outcomes["Cut"].error, LlmInvalidOutput)
    assert all(isinstance(outcomes[n].error, LlmFailed) for n in ("Html", "Array", "Dropped"))


def test_an_error_no_layer_anticipated_is_each_inputs_outcome_not_the_batchs() -> None:
    # An unparsable base URL fails while the client is built, with a ValueError of its own.
    classifier = make_classifier("http://[::1/v1", breaker_threshold=50)
    outcomes = classifier.classify_many(_inputs("Alpha", "Beta")).outcomes
    assert all(isinstance(o.error, LlmFailed) for o in outcomes)
    assert all("unexpected" in str(o.error) for o in outcomes)


def test_api_key_in_base_url_never_appears_in_errors() -> None:
    with OpenAIDouble(lambda b: Status(503)) as llm:
        url = llm.base_url.replace("http://", f"http://user:{KEY}@")
        classifier = make_classifier(url, max_concurrency=1, breaker_threshold=2)
        outcomes = classifier.classify_many(_inputs("A", "B", "C", "D")).outcomes
    messages = [str(o.error) for o in outcomes]
    assert any("circuit open" in m for m in messages) and any("HTTP 503" in m for m in messages)
    assert all(KEY not in m and "user:" not in m for m in messages)
    assert "http://***@127.0.0.1" in messages[0]


def test_api_key_in_base_url_never_appears_in_cli_output_or_logs(tmp_path: Path) -> None:
    with OpenAIDouble(lambda b: Status(500)) as llm:
        url = llm.base_url.replace("http://", f"http://{KEY}@")
        env = llm_cli_env(tmp_path, f"sqlite:///{tmp_path / 'y.db'}", url)
        result = run_cli("classify", "Alpha", env=env, cwd=tmp_path)
        refused = run_cli(
            "classify",
            "Alpha",
            env=llm_cli_env(tmp_path, f"sqlite:///{tmp_path / 'y.db'}", f"http://{KEY}@[::1/v1"),
            cwd=tmp_path,
        )
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"] == "LlmFailed"
    assert refused.returncode == 2  # a URL the client cannot use is a bad setting
    for output in (result.stdout, result.stderr, refused.stdout, refused.stderr):
        assert KEY not in output
    assert "Traceback" not in refused.stderr


def test_log_lines_mask_url_credentials() -> None:
    stream = io.StringIO()
    configure_logging(LoggingSettings(format="json", level="info"), stream=stream)
    try:
        get_logger("test").warning("batch failed", error=f"HTTP 500 from http://u:{KEY}@h/v1")
        logging.getLogger("httpx2").warning("POST http://%s@h/v1 failed", KEY)
    finally:
        configure_logging(LoggingSettings())
    logged = stream.getvalue()
    assert "http://***@h/v1" in logged and logged.count("***@h") == 2
    assert KEY not in logged


def test_an_api_key_written_back_escaped_is_masked_in_what_the_model_wrote() -> None:
    """The key is looked for in the texts as decoded, however the server's JSON escaped them,
    and nowhere else: the reply's envelope is read as sent."""
    key = "sk-escaped-secret-0042-abcdef"
    content = json.dumps(verdict("noise", reason=f"Bearer {key}"))
    envelope = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "double-7b",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    # escaped in the reply's JSON, and in the verdict's JSON inside it
    outer = json.dumps(envelope).replace(key, key.replace("-", "\\u002d"))
    inner = json.dumps(envelope).replace(key, key.replace("-", "\\\\u002d"))
    for escaped in (outer, inner):
        assert key not in escaped
        with OpenAIDouble(lambda b, e=escaped: Body(e)) as llm:
            result = make_classifier(llm.base_url, api_key=key, max_retries=0).classify(ALPHA)
        assert result.reason == "Bearer ***", escaped


def _compressed(reason: str) -> str:
    content = json.dumps(verdict("noise", reason=reason))
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})


GZIP = ("Content-Encoding", "gzip")


@pytest.mark.parametrize(
    "headers",
    [(GZIP,), (("Content-Encoding", "identity"), GZIP), (("Content-Encoding", "none, gzip"),)],
    ids=["gzip", "identity-then-gzip", "none-then-gzip"],
)
def test_a_compressed_reply_is_read_within_the_bound_as_decoded(
    headers: tuple[tuple[str, str], ...],
) -> None:
    """Some gateways compress whatever they are asked: such a reply is read, and the size
    bound counts what it inflates to (65 KB of gzip can inflate to 64 MB), however the header
    says it."""
    fine = Body(_compressed("a gateway's reply"), gzip=True, headers=headers)
    bomb = Body(_compressed(" " * (MAX_REPLY_BYTES + 1)), gzip=True, headers=headers)
    replies = iter([fine, bomb])
    with OpenAIDouble(lambda b: next(replies)) as llm:
        classifier = make_classifier(llm.base_url, max_retries=2)
        assert classifier.classify(ALPHA).reason == "a gateway's reply"
        with pytest.raises(LlmFailed, match=f"reply larger than {MAX_REPLY_BYTES} bytes"):
            classifier.classify(ClassifyInput("Beta", "window_title", "w2", "project"))
        asked = llm.headers[-1].get("accept-encoding")
    assert llm.calls == 2 and asked == "identity"


def test_a_reply_in_a_coding_that_cannot_be_read_bounded_is_llm_failed() -> None:
    body = Body(_compressed("brotli"), headers=(("Content-Encoding", "br"),))
    with OpenAIDouble(lambda b: body) as llm:
        classifier = make_classifier(llm.base_url, max_retries=2)
        with pytest.raises(LlmFailed, match=r"cannot be read bounded \(br\)"):
            classifier.classify(ALPHA)
    assert llm.calls == 1


def test_an_error_status_in_a_coding_that_cannot_be_read_is_still_its_status() -> None:
    """A 429 is waited on and asked again whatever its body came in."""
    replies = iter([Status(429, headers={"Content-Encoding": "br", "Retry-After": "0"})])
    with OpenAIDouble(lambda b: next(replies, verdict("project", name="Alpha"))) as llm:
        result = make_classifier(llm.base_url, max_retries=1).classify(ALPHA)
    assert result.kind == "project" and llm.calls == 2
