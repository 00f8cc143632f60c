"""Real daemon processes for tests: start, wait for a condition, signal, collect output."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

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


class Daemon:
    """A running `yzos-jobs run`; its stderr is read as it comes, so a test can wait for a line
    the daemon logs."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self._lines: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, args=(stream, keep), daemon=True)
            for stream, keep in ((proc.stderr, True), (proc.stdout, False))
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: IO[str] | None, keep: bool) -> None:
        assert stream is not None
        for line in stream:
            if keep:
                self._lines.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self._lines)

    def logged(self, text: str) -> bool:
        return any(text in line for line in list(self._lines))

    def send_signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def wait(self, timeout: float) -> int:
        code = self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout)
        return code


def start_daemon(db_url: str, config: Path) -> Daemon:
    return Daemon(spawn_cli("run", env=cli_env(db_url, YZOS_CONFIG=str(config))))


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def stop(daemon: Daemon | subprocess.Popen[str], timeout: float = 60) -> tuple[int, str]:
    """SIGTERM (once), then the exit code and everything the daemon logged (a daemon started
    with spawn_cli: what is still in its pipes)."""
    if isinstance(daemon, subprocess.Popen):
        daemon = Daemon(daemon)
    if daemon.proc.poll() is None:
        daemon.send_signal(signal.SIGTERM)
    try:
        code = daemon.wait(timeout)
    except subprocess.TimeoutExpired:
        daemon.proc.kill()
        daemon.wait(timeout)
        raise AssertionError(
            f"daemon did not stop within {timeout}s:\n{daemon.stderr[-3000:]}"
        ) from None
    return code, daemon.stderr
