"""Real daemon processes for tests: start, wait for a condition, signal, collect output."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.cli import cli_env, spawn_cli


def write_config(path: Path, llm_url: str | None, **sections: dict[str, object]) -> Path:
    lines: list[str] = []
    # A test's daemon imports only the sources it names: never the home of the user running
    # the suite, nor the machine's application folders.
    sections.setdefault("sources", {"claude_code": [], "apps": False})
    if llm_url:
        sections.setdefault("llm", {})
        sections["llm"] = {
            "backend": "openai",
            "base_url": llm_url,
            "max_retries": 0,
            "timeout_s": 10.0,
            **sections["llm"],
        }
    for name, values in sections.items():
        lines.append(f"[{name}]")
        for key, value in values.items():
            lines.append(f"{key} = {_toml(value)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def start_daemon(db_url: str, config: Path) -> subprocess.Popen[str]:
    return spawn_cli("run", env=cli_env(db_url, YZOS_CONFIG=str(config)))


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def stop(proc: subprocess.Popen[str], timeout: float = 30) -> tuple[int, str]:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"daemon did not stop within {timeout}s:\n{err[-3000:]}") from None
    return proc.returncode, err
