"""Benchmark: `yzos-jobs eval` on the shipped labelled set against a real llama.cpp server.

Starts the server `scripts/llm-server` built (Gemma 3 270M, Q4_K_M, two slots) on a free port and
runs the real CLI, `yzos-jobs eval datasets/classifier_eval.jsonl --json --no-cache`, once per
output constraint mode. Prints accuracy beside the trivial baselines on the same cases (answering
"noise" to every one, and dry_run), precision and recall per kind, calls, latency
percentiles and verdicts per second. A 270M model is a floor for the whole path, not a judge.

    .venv/bin/python bench/llm_eval.py [--constraint json_schema|grammar] [--timeout 60]
                                       [--dataset datasets/classifier_eval.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import _support

from yzos_jobs.testing.llama import MODEL_ALIAS, LlamaServer, cached_build

DATASET = _support.REPO / "datasets" / "classifier_eval.jsonl"
CONSTRAINTS = ("json_schema", "grammar")
SLOTS = 2


def _server_version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    lines = (out.stdout + out.stderr).strip().splitlines()
    return next((line for line in lines if line.startswith("version")), "version unknown")


def _eval(
    dataset: Path, base_url: str, constraint: str, timeout_s: float, work: Path
) -> dict[str, Any]:
    config = work / f"{constraint}.toml"
    config.write_text(
        "\n".join(
            [
                "[llm]",
                'backend = "openai"',
                f'base_url = "{base_url}"',
                f'model = "{MODEL_ALIAS}"',
                f'constraint = "{constraint}"',
                f"timeout_s = {timeout_s}",
                f"max_concurrency = {SLOTS}",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("YZOS_")}
    env |= {
        "YZOS_CONFIG": str(config),
        "YZOS_DATABASE_URL": f"sqlite:///{work / f'{constraint}.db'}",
    }
    started = time.perf_counter()
    result = subprocess.run(
        [_support.YZOS_JOBS, "eval", str(dataset), "--json", "--no-cache"],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"yzos-jobs eval ({constraint}) failed: {result.stderr.strip()}")
    report = json.loads(result.stdout)
    report["process_seconds"] = time.perf_counter() - started
    return report


def _print(constraint: str, report: dict[str, Any]) -> None:
    lat = report["latency_s"]
    rate = report["cases"] / report["seconds"] if report["seconds"] else 0.0
    print(f"\nconstraint = {constraint!r}")
    baselines = report["baselines"]
    print(
        f"  cases {report['cases']}  accuracy {report['accuracy']:.3f}  "
        f"failures {report['failures']}  llm calls {report['llm_calls']}"
    )
    print(
        f"  baselines on the same cases: always noise {baselines['always_noise']:.3f}  "
        f"dry_run {baselines['dry_run']:.3f}"
    )
    print(
        f"  latency per call  p50 {lat.get('p50', 0):.2f} s  p90 {lat.get('p90', 0):.2f} s  "
        f"p99 {lat.get('p99', 0):.2f} s"
    )
    print(f"  wall {report['seconds']:.1f} s  throughput {rate:.2f} verdicts/s")
    print(f"  {'kind':<8} {'precision':>9} {'recall':>7} {'support':>8}")
    for kind, m in report["per_kind"].items():
        print(f"  {kind:<8} {m['precision']:>9.3f} {m['recall']:>7.3f} {int(m['support']):>8}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--constraint", choices=CONSTRAINTS, action="append")
    parser.add_argument("--timeout", type=float, default=60.0, help="llm.timeout_s")
    parser.add_argument("--dataset", type=Path, default=DATASET)
    args = parser.parse_args()
    binary, model = cached_build(build=True)
    print(
        f"model: Gemma 3 270M, Q4_K_M ({Path(model).name}), llama.cpp llama-server "
        f"({_server_version(binary)}), {SLOTS} slots, {os.cpu_count()} CPUs; "
        f"llm.max_concurrency {SLOTS}, max_tokens default, cache off; "
        f"load average {os.getloadavg()[0]:.1f} at start"
    )
    with tempfile.TemporaryDirectory(prefix="yzos-llm-eval-") as tmp:
        work = Path(tmp)
        server = LlamaServer(binary, model, work / "server.log", slots=SLOTS).start()
        try:
            for constraint in args.constraint or CONSTRAINTS:
                report = _eval(args.dataset, server.base_url, constraint, args.timeout, work)
                _print(constraint, report)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
