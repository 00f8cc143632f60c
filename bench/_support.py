"""Benchmark helpers: the repository on sys.path, peak RSS, a loopback LLM in its own process."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def peak_rss_mb(children: bool = False) -> float:
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024


@contextmanager
def llm_double_process(latency: float, slots: int, responder: str = "suggested") -> Iterator[str]:
    """The OpenAI-protocol double in its own process, so it does not share our GIL."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "yzos_jobs.testing",
            "--latency",
            str(latency),
            "--slots",
            str(slots),
            "--responder",
            responder,
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def run_measured(
    args: list[str], env: dict[str, str], poll_s: float = 0.05
) -> tuple[float, float, str]:
    """Run `yzos-jobs ARGS` in its own process: (seconds, peak RSS in MB, stdout)."""
    import psutil

    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "yzos_jobs", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
    )
    watched = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.NoSuchProcess:
            break
        time.sleep(poll_s)
    out = proc.communicate()[0]
    if proc.returncode != 0:
        raise SystemExit(f"yzos-jobs {' '.join(args)} failed: {out}")
    return time.perf_counter() - started, peak / 2**20, out.strip()
