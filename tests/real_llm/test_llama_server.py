"""Against a real llama.cpp server (Gemma 3 270M, two slots), in both output constraint modes.

The model is far too small to judge well; these tests hold what must be true of any model: every
reply is bounded and parsed into a verdict that respects the invariants, the server's parallel
slots are used, a server that dies mid-batch trips the circuit breaker, and the whole CLI path
runs end to end.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import cli_env, run_cli, spawn_cli
from tests.support.jobs import add_candidates, candidates, decisions, entities, make_ctx
from yzos_jobs.entity.classifier import AppMetadata, Classifier, ClassifyInput
from yzos_jobs.inference.fields import FIELD_MAX_CHARS
from yzos_jobs.inference.profile import InferenceProfile, LlmBackend
from yzos_jobs.kinds import ENTITY_KINDS, VERDICT_KINDS
from yzos_jobs.testing.llama import MODEL_ALIAS, LlamaServer

pytestmark = [pytest.mark.real_llm]

CONSTRAINTS = ["json_schema", "grammar"]
# Generous: these run alone, after the rest of the suite, but the machine may be shared. A call
# takes 2-5 s on an idle machine; before output was bounded, one grammar-constrained call ran
# for minutes.
TIMEOUT_S = 120.0

CASES = [
    ClassifyInput(
        "Telegram",
        "window_title",
        "r1",
        "project",
        "com.tdesktop.Telegram",
        AppMetadata("com.tdesktop.Telegram", "Telegram", "public.app-category.social-networking"),
        "Telegram — Saved Messages",
    ),
    ClassifyInput("3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22", "clipboard", "r2"),
    ClassifyInput("陈晓明", "clipboard", "r3", "person", surrounding_text="和陈晓明确认发布时间"),
    ClassifyInput("Fix lease renewal in the promote job", "ai_tool", "r4", "task"),
    ClassifyInput("yzos-core", "ai_tool", "r5", "project", surrounding_text="Git repo: yzos-core"),
]


def _profile(server: LlamaServer, constraint: str, **changes: Any) -> InferenceProfile:
    values: dict[str, Any] = {
        "llm_backend": LlmBackend.OPENAI,
        "base_url": server.base_url,
        "model": MODEL_ALIAS,
        "constraint": constraint,
        "timeout_s": TIMEOUT_S,
        "max_retries": 0,
        "max_concurrency": 2,
        **changes,
    }
    return InferenceProfile(**values)


def _config(tmp_path: Path, server: LlamaServer, constraint: str, **llm: Any) -> Path:
    values = {"timeout_s": TIMEOUT_S, "max_retries": 0, "max_concurrency": 2, **llm}
    lines = [
        "[llm]",
        'backend = "openai"',
        f'base_url = "{server.base_url}"',
        f'model = "{MODEL_ALIAS}"',
        f'constraint = "{constraint}"',
        *(f"{key} = {value}" for key, value in values.items()),
    ]
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_each_candidate_gets_a_bounded_parsed_verdict_that_respects_the_invariants(
    live_server: LlamaServer, constraint: str
) -> None:
    # No error: every request came back within timeout_s (one past it is an LlmTimeout).
    result = Classifier(_profile(live_server, constraint)).classify_many(CASES)
    for inp, outcome in zip(CASES, result.outcomes, strict=True):
        assert outcome.error is None, f"{inp.raw_text}: {outcome.error}"
        verdict = outcome.verdict
        assert verdict is not None and outcome.source == "llm"
        assert verdict.kind is None or verdict.kind in VERDICT_KINDS
        assert not verdict.is_real_entity or verdict.kind in ENTITY_KINDS
        assert 0.0 <= verdict.confidence <= 1.0
        assert len(verdict.reason) <= FIELD_MAX_CHARS["reason"]
        assert verdict.display_name is None or (
            0 < len(verdict.display_name) <= FIELD_MAX_CHARS["display_name"]
        )
    # At most one call and one re-ask per candidate, each cut by max_tokens at worst.
    assert result.usage.llm_calls <= 2 * len(CASES)


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_classify_many_keeps_both_server_slots_busy(
    live_server: LlamaServer, constraint: str
) -> None:
    peak = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, live_server.busy_slots())
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        inputs = [ClassifyInput(f"Project {i}", "ai_tool", f"s{i}", "project") for i in range(4)]
        outcomes = Classifier(_profile(live_server, constraint)).classify_many(inputs).outcomes
    finally:
        done.set()
        watcher.join(timeout=10)
    assert all(o.verdict is not None for o in outcomes)
    assert peak == live_server.slots == 2


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_killing_the_server_mid_batch_trips_the_breaker_and_candidates_fall_back(
    live_server: LlamaServer, db_url: str, tmp_path: Path, constraint: str
) -> None:
    ctx = make_ctx(db_url)
    junk = [{"raw_text": str(10_000 + i)} for i in range(6)]  # structural noise for the fallback
    names = [{"raw_text": f"Project {i}"} for i in range(6)]
    add_candidates(ctx, *[row for pair in zip(names, junk, strict=True) for row in pair])
    config = _config(tmp_path, live_server, constraint, breaker_threshold=2)
    job = spawn_cli(
        "once", "entity_promote", "--json", env=cli_env(db_url, YZOS_CONFIG=str(config))
    )
    deadline = time.monotonic() + TIMEOUT_S
    while live_server.busy_slots() == 0:
        assert job.poll() is None and time.monotonic() < deadline, "the job never asked the model"
        time.sleep(0.05)
    live_server.kill()
    out, err = job.communicate(timeout=TIMEOUT_S * 2)
    assert job.returncode == 0, err
    stats = json.loads(out)
    assert stats["failed"] >= 3 and stats["fallback"] >= 1
    rows = candidates(ctx)
    assert all(c.status in ("promoted", "rejected") for c in rows)
    reasons = " ".join(c.reject_reason or "" for c in rows)
    assert "circuit open after 2 consecutive failures" in reasons
    assert "fallback: structural noise" in reasons
    assert any(e.verdict_source == "fallback" for e in entities(ctx))


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_once_entity_promote_end_to_end_on_a_jsonl_file(
    live_server: LlamaServer, db_url: str, tmp_path: Path, constraint: str
) -> None:
    records = [
        ("YZOS Core", "project", "README.md — YZOS Core"),
        ("Telegram", "project", "Telegram — Saved Messages"),
        ("Alice Chen", "person", "Review with Alice Chen at 3pm"),
        ("Fix lease renewal", "task", "TODO: fix lease renewal in the promote job"),
    ]
    feed = tmp_path / "feed.jsonl"
    feed.write_text(
        "".join(
            json.dumps(
                {
                    "record_id": f"r{i}",
                    "session_id": "s1",
                    "type": "candidate",
                    "raw_text": name,
                    "suggested_kind": kind,
                    "source_kind": "window_title",
                    "surrounding_text": context,
                    "observed_at": "2026-11-06T09:05:00Z",
                }
            )
            + "\n"
            for i, (name, kind, context) in enumerate(records)
        ),
        encoding="utf-8",
    )
    env = cli_env(db_url, YZOS_CONFIG=str(_config(tmp_path, live_server, constraint)))
    imported = run_cli("import", "jsonl", str(feed), env=env, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    promoted = run_cli(
        "once", "entity_promote", "--json", env=env, cwd=tmp_path, timeout=TIMEOUT_S * 4
    )
    assert promoted.returncode == 0, promoted.stderr
    stats = json.loads(promoted.stdout)
    assert stats["failed"] == 0 and stats["fallback"] == 0
    assert stats["llm_calls"] >= len(records)
    ctx = make_ctx(db_url)
    rows = candidates(ctx)
    assert len(rows) == len(records)
    assert all(c.status in ("promoted", "rejected") and c.verdict for c in rows)
    # Every candidate was decided by the model, whatever it decided; each one promoted is an
    # entity the model judged.
    trail = decisions(ctx)
    assert len(trail) == len(records)
    assert all(d.source == "llm" and d.model for d in trail)
    promoted_ids = {c.id for c in rows if c.status == "promoted"}
    assert {d.candidate_id for d in trail if d.outcome == "promoted"} == promoted_ids
    assert len(entities(ctx)) == len(promoted_ids) == stats["promoted"]
    assert all(e.verdict_source == "llm" and e.classified_model for e in entities(ctx))
    status = run_cli("status", "--check", env=env, cwd=tmp_path)
    assert status.returncode == 0, status.stderr
