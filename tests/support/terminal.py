"""Run the real `yzos-jobs` with stdout and stderr each on a pseudo-terminal of its own, as in a
user's terminal: both are TTYs (colours, progress bars, the console log format), and what each
printed can still be told apart."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
COLUMNS = 80


@dataclass(frozen=True)
class Printed:
    returncode: int
    stdout: str  # ANSI sequences removed, line ends as "\n"
    stderr: str

    @staticmethod
    def lines(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.strip()]


def _terminal() -> tuple[int, int]:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    return master, slave


def _clean(raw: bytes) -> str:
    text = ANSI.sub("", raw.decode("utf-8", errors="replace"))
    # A transient progress bar redraws its line with carriage returns: keep what was left.
    lines = [line.rsplit("\r", 1)[-1] for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines)


def run_in_terminal(*args: str, env: dict[str, str], cwd: Path, timeout: float = 120) -> Printed:
    out_master, out_slave = _terminal()
    err_master, err_slave = _terminal()
    env = {**env, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "yzos_jobs", *args],
        stdin=subprocess.DEVNULL,
        stdout=out_slave,
        stderr=err_slave,
        env=env,
        cwd=cwd,
    )
    os.close(out_slave)
    os.close(err_slave)
    received = {out_master: bytearray(), err_master: bytearray()}
    open_fds = set(received)
    deadline = time.monotonic() + timeout
    try:
        while open_fds and time.monotonic() < deadline:
            ready, _, _ = select.select(list(open_fds), [], [], 0.5)
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the other end closed (the process exited)
                    chunk = b""
                if chunk:
                    received[fd] += chunk
                else:
                    open_fds.discard(fd)
        returncode = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(out_master)
        os.close(err_master)
    return Printed(
        returncode, _clean(bytes(received[out_master])), _clean(bytes(received[err_master]))
    )
