"""Benchmark helpers: the repository on sys.path, peak RSS, a loopback LLM in its own process."""

from __future__ import annotations

import resource
import subprocess
import sys
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
            "tests.support.openai_double",
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
