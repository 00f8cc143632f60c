"""Model replies as stored: through `yzos-jobs once …` on SQLite and PostgreSQL, what
the model wrote reaches the database clean and bounded, one candidate's broken reply leaves the
others' verdicts alone, and an API key in the base URL is stored nowhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.adversarial.llm_env import llm_cli_env
from tests.support.cli import run_cli
from tests.support.jobs import add_candidates, candidates, entities, make_ctx
from yzos_jobs.db.models import Base, VerdictCacheRow
from yzos_jobs.inference.fields import FIELD_MAX_CHARS
from yzos_jobs.testing import (
    Body,
    OpenAIDouble,
    Raw,
    Reply,
    Status,
    candidate_of,
    nested,
    verdict,
)

pytestmark = pytest.mark.adversarial


def _promote(tmp_path: Path, db_url: str, base_url: str, **llm: Any) -> dict[str, Any]:
    env = llm_cli_env(tmp_path, db_url, base_url, **llm)
    result = run_cli("once", "entity_promote", "--json", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def _all_text(db_url: str) -> str:
    """Every row of every table, as text."""
    ctx = make_ctx(db_url)
    with ctx.sessions() as s:
        return "\n".join(
            repr(tuple(row))
            for table in Base.metadata.sorted_tables
            for row in s.execute(select(table))
        )


def test_nul_bytes_in_model_text_never_reach_the_database(db_url: str, tmp_path: Path) -> None:
    def judge(body: dict[str, Any]) -> Reply:
        if candidate_of(body)["raw_text"] == "Telegram":
            return verdict("app", reason="an\x00 app\x00")
        return verdict("project", name="YZOS\x00 Core", reason="a\x00 repo\x01")

    add_candidates(make_ctx(db_url), {"raw_text": "yzos core"}, {"raw_text": "Telegram"})
    with OpenAIDouble(judge) as llm:
        stats = _promote(tmp_path, db_url, llm.base_url)
        assert (stats["promoted"], stats["rejected"]) == (1, 1)
        purge = run_cli(
            "once", "entity_purge", env=llm_cli_env(tmp_path, db_url, llm.base_url), cwd=tmp_path
        )
    assert purge.returncode == 0, purge.stderr
    [entity] = entities(make_ctx(db_url))
    assert entity.display_name == "YZOS Core"
    yz, tg = candidates(make_ctx(db_url))
    assert yz.verdict["reason"] == "a repo"
    assert tg.reject_reason == "app: an app"
    stored = _all_text(db_url)
    assert "\\x00" not in stored and "\\x01" not in stored


def test_a_megabyte_reason_is_capped_before_it_is_stored_or_cached(
    db_url: str, tmp_path: Path
) -> None:
    huge = verdict("noise", reason="spam " * 200_000)  # within the reply's size bound
    ctx = make_ctx(db_url)
    # More candidates than the model is asked about at once (4): 5 MB of replies in all.
    add_candidates(ctx, *({"raw_text": f"Thing {i}"} for i in range(5)))
    db_file = Path(db_url.removeprefix("sqlite:///")) if db_url.startswith("sqlite") else None
    size_before = db_file.stat().st_size if db_file else 0
    with OpenAIDouble(lambda b: huge) as llm:
        # Four 1 MB replies at once on a busy machine can take longer than the usual 5 s; the
        # size is what is tested here, so no reply is lost to the clock.
        stats = _promote(tmp_path, db_url, llm.base_url, timeout_s=120.0)
    assert stats["rejected"] == 5
    limit = FIELD_MAX_CHARS["reason"]
    for cand in candidates(ctx):
        assert len(cand.verdict["reason"]) == limit
        assert len(cand.reject_reason) <= limit + len("noise: ")
    with ctx.sessions() as s:
        cached = list(s.scalars(select(VerdictCacheRow)))
    assert len(cached) == 5 and all(len(c.verdict["reason"]) == limit for c in cached)
    if db_file:
        assert db_file.stat().st_size - size_before < 1_000_000


def test_one_broken_reply_leaves_the_others_verdicts_alone(db_url: str, tmp_path: Path) -> None:
    """The model called Telegram an app and "Some label" noise: neither may become an entity
    because another candidate's reply broke (the fallback is only for the broken one)."""
    replies: dict[str, Reply] = {
        "Telegram": verdict("app"),
        "Some label": verdict("noise"),
        "YZOS Core": verdict("project", name="YZOS Core"),
        "Deep": Raw(nested(100_000)),
        "Html": Body("<html>bad gateway</html>", "text/html"),
    }
    ctx = make_ctx(db_url)
    add_candidates(ctx, *({"raw_text": name} for name in replies))
    with OpenAIDouble(lambda b: replies[candidate_of(b)["raw_text"]]) as llm:
        stats = _promote(tmp_path, db_url, llm.base_url, breaker_threshold=10)
    assert stats["failed"] == 2
    by_name = {c.raw_text: c for c in candidates(ctx)}
    assert by_name["Telegram"].status == "rejected"
    assert by_name["Telegram"].reject_reason.startswith("app")
    assert by_name["Some label"].status == "rejected"
    made = {e.display_name: e.verdict_source for e in entities(ctx)}
    assert made["YZOS Core"] == "llm"
    assert "Telegram" not in made and "Some label" not in made
    # The two broken replies went down the fallback chain, each on its own.
    assert made.get("Deep") == made.get("Html") == "fallback"


def test_an_api_key_in_base_url_is_stored_nowhere(db_url: str, tmp_path: Path) -> None:
    key = "sk-stored-nowhere-9876"
    ctx = make_ctx(db_url)
    add_candidates(ctx, *({"raw_text": f"/tmp/path/{i}"} for i in range(4)))
    with OpenAIDouble(lambda b: Status(500)) as llm:
        url = llm.base_url.replace("http://", f"http://me:{key}@")
        env = llm_cli_env(tmp_path, db_url, url, breaker_threshold=2, max_concurrency=1)
        result = run_cli("once", "entity_promote", "--json", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    reasons = [c.reject_reason or "" for c in candidates(ctx)]
    assert any("HTTP 500 from http://***@127.0.0.1" in r for r in reasons)
    assert any("circuit open" in r for r in reasons)
    for text in (result.stdout, result.stderr, _all_text(db_url)):
        assert key not in text


def test_an_api_key_a_server_writes_back_is_stored_shown_and_cached_nowhere(
    db_url: str, tmp_path: Path
) -> None:
    # a proxy or a server that echoes the request's headers into the model's text
    key = "sk-echoed-secret-0042-abcdef"
    echo = f"Authorization: Bearer {key}"
    add_candidates(make_ctx(db_url), {"raw_text": "Echo Test"}, {"raw_text": "Other Test"})
    with OpenAIDouble(lambda b: verdict("noise", reason=echo, name=key)) as llm:
        env = llm_cli_env(tmp_path, db_url, llm.base_url)
        env["YZOS_LLM_API_KEY"] = key
        promoted = run_cli("once", "entity_promote", "--json", env=env, cwd=tmp_path)
        classified = run_cli("classify", "Third Test", "--kind", "project", env=env, cwd=tmp_path)
        shown = run_cli("explain", "c:1", env=env, cwd=tmp_path)
    assert promoted.returncode == classified.returncode == shown.returncode == 0
    assert json.loads(promoted.stdout)["rejected"] == 2
    assert "Bearer ***" in classified.stdout
    for output in (promoted, classified, shown):
        assert key not in output.stdout + output.stderr
    assert key not in _all_text(db_url)
