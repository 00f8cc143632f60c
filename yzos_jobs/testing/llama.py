"""A real llama.cpp server from the build `scripts/llm-server` caches, on a free loopback port.

Used by the `real_llm` tests and by `bench/llm_eval.py`. The server runs in its own process
group with two parallel slots; `kill()` is a SIGKILL, as a crash would be.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "llm-server"
MODEL_ALIAS = "gemma-3-270m"


class ServerUnavailable(Exception):
    """The server is not built, cannot be built, or does not start."""


def cached_build(build: bool) -> tuple[str, str]:
    """(server binary, model file); builds them first (about 15 minutes) when `build`."""
    result = subprocess.run(
        [str(SCRIPT), "--path" if build else "--cached"],
        capture_output=True,
        text=True,
        timeout=3 * 3600,
    )
    if result.returncode != 0:
        detail = result.stderr.strip().splitlines()[-1:] or ["not built"]
        raise ServerUnavailable(f"no local llama.cpp server: {detail[0]}")
    binary, model = result.stdout.split()
    return binary, model


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    def __init__(self, binary: str, model: str, log_path: Path, slots: int = 2) -> None:
        self.binary = binary
        self.model = model
        self.log_path = log_path
        self.slots = slots
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout_s: float = 180.0) -> LlamaServer:
        self.port = _free_port()
        args = [self.binary, "-m", self.model, "--host", "127.0.0.1", "--port", str(self.port)]
        args += ["-np", str(self.slots), "-c", str(4096 * self.slots), "-a", MODEL_ALIAS]
        args += ["--no-webui"]
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.running:
                raise ServerUnavailable(f"llama-server exited at start-up: {self._log_tail()}")
            if self._health() == 200:
                return self
            time.sleep(0.25)
        self.stop()
        raise ServerUnavailable(f"llama-server not ready within {timeout_s:.0f}s")

    def ensure_running(self) -> None:
        if not self.running:
            self.start()

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would."""
        if self._proc is not None:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait(timeout=10)

    def stop(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def busy_slots(self) -> int:
        """How many slots are generating right now (llama.cpp's /slots)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/slots", timeout=5) as resp:
            return sum(bool(slot.get("is_processing")) for slot in json.load(resp))

    def _health(self) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                return int(r.status)
        except urllib.error.HTTPError as exc:
            return exc.code  # 503 while the model loads
        except OSError:
            return 0

    def _log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "no log"
        return " | ".join(lines[-3:])
