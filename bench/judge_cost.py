"""Benchmark: what the judge costs a user on the real corpus (tests/fixtures/real), with session
triage on, against the loopback OpenAI-protocol double.

The whole corpus (aider histories and Claude Code transcripts, laid out as bench/extraction.py
lays them out, at rest so every session is closed) is imported with the real CLI into a new
SQLite database with `backend = "openai"` pointed at the double (in its own process), then
`once entity_promote` triages the closed sessions and judges what is left. What it cost is read
from the database's own ledger of the day (llm_usage_days: calls and the tokens the double's
replies reported, about one token per four characters of prompt and reply, as BPE tokenizers
give for English and JSON), and divided by the closed sessions and by the tasks made.

Printed beside graphiti's published figures: 24,000 LLM calls for one ingest
(getzep/graphiti#290) and about $0.018 per episode (getzep/graphiti#467). The price of a token
is an assumption, given on the command line (default: gpt-4o-mini's list price, $0.15 per
million prompt tokens and $0.60 per million completion tokens).

    nice .venv/bin/python bench/judge_cost.py [--price-in 0.15] [--price-out 0.60]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import _support

if str(_support.REPO) not in sys.path:
    sys.path.insert(0, str(_support.REPO))

from extraction import labels, lay_out_aider, lay_out_claude
from sqlalchemy import func, select

from yzos_jobs.db.connection import create_db_engine
from yzos_jobs.db.llm_usage import LLM_USAGE_DAYS
from yzos_jobs.db.models import ActivitySession, Entity

GRAPHITI_CALLS_PER_INGEST = 24_000  # getzep/graphiti#290
GRAPHITI_DOLLARS_PER_EPISODE = 0.018  # getzep/graphiti#467


def lay_out_corpus(root: Path) -> tuple[list[Path], Path]:
    histories = [lay_out_aider(source, root / "aider") for source in labels("labels.jsonl")]
    for source in labels("labels-claude-code.jsonl"):
        lay_out_claude(source, root / "claude")
    return histories, root / "claude" / "projects"


def totals(db_url: str) -> dict[str, int]:
    engine = create_db_engine(db_url)
    u = LLM_USAGE_DAYS.c
    with engine.connect() as conn:
        usage = conn.execute(
            select(
                func.sum(u.calls),
                func.sum(u.prompt_tokens),
                func.sum(u.completion_tokens),
                func.sum(u.unknown_usage_calls),
            )
        ).one()
        sessions = conn.scalar(select(func.count()).where(ActivitySession.status == "ended"))
        tasks = conn.scalar(
            select(func.count()).where(Entity.kind == "task", Entity.status == "active")
        )
    engine.dispose()
    calls, prompt, completion, unknown = (int(v or 0) for v in usage)
    return {
        "calls": calls,
        "prompt": prompt,
        "completion": completion,
        "unknown": unknown,
        "sessions": int(sessions or 0),
        "tasks": int(tasks or 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--price-in", type=float, default=0.15, help="$ per million prompt tokens")
    parser.add_argument("--price-out", type=float, default=0.60, help="$ per million completion")
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        _support.llm_double_process(args.latency, 16) as base_url,
    ):
        work = Path(tmp)
        histories, claude = lay_out_corpus(work / "corpus")
        db_url = f"sqlite:///{work / 'yzos.db'}"
        config = _support.shipped_config(
            work / "config.toml",
            {
                ("llm", "backend"): "openai",
                ("llm", "base_url"): base_url,
                ("llm", "max_retries"): 0,
            },
        )
        env = _support.cli_env(db_url, config)
        steps = (
            ["import", "aider", *map(str, histories)],
            ["import", "claude-code", str(claude)],
            ["once", "entity_promote"],
        )
        seconds = 0.0
        for step in steps:
            elapsed, _, _ = _support.run_measured(step, env)
            seconds += elapsed
        t = totals(db_url)
    cost = (t["prompt"] * args.price_in + t["completion"] * args.price_out) / 1e6
    tokens = t["prompt"] + t["completion"]
    print(
        f"the judge's cost on the real corpus, triage on, loopback double ({seconds:.1f} s, "
        f"{_support.cores()} cores):"
    )
    print(
        f"  {t['sessions']} closed sessions, {t['tasks']} tasks made: {t['calls']} LLM calls, "
        f"{t['prompt']} prompt + {t['completion']} completion tokens "
        f"({t['unknown']} calls without usage)"
    )
    for what, n in (("closed session", t["sessions"]), ("task made", t["tasks"])):
        if n:
            print(
                f"  per {what:<15} {t['calls'] / n:7.2f} calls  {tokens / n:9.0f} tokens  "
                f"${cost / n:.5f}"
            )
    print(
        f"  at ${args.price_in}/M prompt and ${args.price_out}/M completion tokens: "
        f"${cost:.4f} for the whole corpus"
    )
    print(
        f"  graphiti, published: {GRAPHITI_CALLS_PER_INGEST} LLM calls for one ingest "
        f"(getzep/graphiti#290); about ${GRAPHITI_DOLLARS_PER_EPISODE} per episode "
        "(getzep/graphiti#467)"
    )


if __name__ == "__main__":
    main()
