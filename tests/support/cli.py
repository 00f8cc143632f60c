"""Run the real `yzos-jobs` command in a child process, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def cli_env(db_url: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("YZOS_")}
    env["PYTHONPATH"] = str(REPO)
    if db_url:
        env["YZOS_DATABASE_URL"] = db_url
    env.update(extra)
    return env


def llm_cli_env(db_url: str, base_url: str, api_key: str) -> dict[str, str]:
    """A user's shell with the OpenAI-compatible backend at `base_url` and the key in the
    default variable."""
    return cli_env(
        db_url,
        YZOS_LLM_BACKEND="openai",
        YZOS_LLM_BASE_URL=base_url,
        YZOS_LLM_MODEL="double-7b",
        YZOS_LLM_API_KEY=api_key,
    )


def run_cli(
    *args: str,
    db_url: str | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    input_text: str | None = None,
    prefix: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """`prefix`: a command the CLI runs under (e.g. setpriv, to run without root's powers)."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "yzos_jobs", *args],
        cwd=cwd or REPO,
        env=env or cli_env(db_url),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input_text,
    )


# Every process spawn_cli started; the conftest kills what a failed test left running.
SPAWNED: list[subprocess.Popen[str]] = []


def kill_spawned() -> None:
    while SPAWNED:
        proc = SPAWNED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def spawn_cli(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen[str]:
    """Start the real `yzos-jobs` in the background (a daemon, or a job to kill mid-run)."""
    proc = _popen(args, env, cwd)
    SPAWNED.append(proc)
    return proc


def _popen(args: tuple[str, ...], env: dict[str, str], cwd: Path | None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "yzos_jobs", *args],
        cwd=cwd or REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def assert_one_line_error(
    result: subprocess.CompletedProcess[str], code: int, *needles: str
) -> str:
    """The command failed with `code` and said why in one line of stderr, without a traceback."""
    assert result.returncode == code, (result.returncode, result.stderr[-3000:])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]
