"""Benchmark: classify_many throughput against a loopback LLM with 100 ms latency and 16 slots.

Ideal throughput is slots / latency = 160 verdicts/s; the target is >= 90% of it. A second run
with half the inputs repeated checks that LLM calls equal distinct inputs.

    .venv/bin/python bench/classify.py [--n 2000] [--latency 0.1] [--slots 16]
"""

from __future__ import annotations

import argparse
import time

import _support

from yzos_jobs.config import Settings
from yzos_jobs.entity.classifier import ClassifyInput
from yzos_jobs.runtime import build_classifier


def _inputs(n: int, prefix: str) -> list[ClassifyInput]:
    return [ClassifyInput(f"{prefix} project {i}", "ai_tool", f"s{i}", "project") for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--slots", type=int, default=16)
    args = parser.parse_args()
    ideal = args.slots / args.latency
    with _support.llm_double_process(args.latency, args.slots) as url:
        llm = {
            "backend": "openai",
            "base_url": url,
            "max_concurrency": args.slots,
            "timeout_s": 30.0,
            "max_retries": 0,
        }
        classifier = build_classifier(Settings.model_validate({"llm": llm}), None)
        classifier.classify_many(_inputs(args.slots * 2, "warmup"))  # open the connection pool
        started = time.perf_counter()
        result = classifier.classify_many(_inputs(args.n, "distinct"))
        elapsed = time.perf_counter() - started
        failures = sum(o.verdict is None for o in result.outcomes)
        achieved = args.n / elapsed
        calls = result.usage.llm_calls
        print(
            f"distinct inputs      {args.n}  in {elapsed:.2f} s  failures {failures}  calls {calls}"
        )
        print(f"achieved             {achieved:.1f} verdicts/s")
        shape = f"{args.slots} slots x {args.latency * 1000:.0f} ms"
        print(f"ideal                {ideal:.1f} verdicts/s ({shape})")
        print(f"ratio                {achieved / ideal:.3f}  (target >= 0.90)")

        half = args.n // 2
        repeated = _inputs(half, "repeat") + _inputs(half, "repeat")
        started = time.perf_counter()
        calls = classifier.classify_many(repeated).usage.llm_calls
        elapsed = time.perf_counter() - started
        print(
            f"repeated batch       {len(repeated)} inputs, {half} distinct -> {calls} LLM calls "
            f"in {elapsed:.2f} s  ({'ok' if calls == half else 'MISMATCH'})"
        )


if __name__ == "__main__":
    main()
