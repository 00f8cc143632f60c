"""Benchmark helpers: the product as a user runs it (the installed `yzos-jobs` command, the
shipped config.toml), peak RSS, a loopback LLM in its own process. Nothing here imports the
test suite; the shared test kit is `yzos_jobs.testing`."""

from __future__ import annotations

import compileall
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHIPPED_CONFIG = REPO / "config.toml"
OUT = REPO / "bench" / "out"
# The command a user runs: the console script installed beside this interpreter.
YZOS_JOBS = str(Path(sys.executable).with_name("yzos-jobs"))

# A user's yzos-jobs runs from bytecode: pip compiles a wheel's modules as it installs them, and
# an editable install's first run writes them. Where the environment says not to write bytecode
# (PYTHONDONTWRITEBYTECODE), every command would compile the package's source again (some 40-70 ms
# of each start-up), so the benchmarks compile it once first, as an install would have.
compileall.compile_dir(REPO / "yzos_jobs", quiet=1)


def cores() -> int:
    return len(os.sched_getaffinity(0))


def peak_rss_mb(children: bool = False) -> float:
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024


def cli_env(db_url: str | None = None, config: Path | None = None) -> dict[str, str]:
    """The environment of a user's shell: no YZOS_* left over, the database (and config) given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("YZOS_")}
    if db_url:
        env["YZOS_DATABASE_URL"] = db_url
    if config:
        env["YZOS_CONFIG"] = str(config)
    return env


@contextmanager
def new_database(workdir: Path, name: str, postgres: bool) -> Iterator[str]:
    """The URL of a new database: SQLite (a file in `workdir`) migrated by its first use,
    PostgreSQL migrated by `db upgrade` as an operator would, and dropped afterwards."""
    if not postgres:
        yield f"sqlite:///{workdir / (name + '.db')}"
        return
    from yzos_jobs.testing import databases

    db = databases.create_pg_database()
    try:
        url = databases.pg_url(db)
        run_measured(["db", "upgrade"], cli_env(url))
        yield url
    finally:
        databases.drop_pg_database(db)


def shipped_config(target: Path, changes: Mapping[tuple[str, str], Any] | None = None) -> Path:
    """A copy of the shipped config.toml with some keys changed ((section, key) -> value); the
    rest as shipped."""
    lines, section = [], ""
    for line in SHIPPED_CONFIG.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^\[([\w.]+)\]$", line):
            section = m.group(1)
        elif m := re.match(r"^(\w+) = ", line):
            key = (section, m.group(1))
            if changes and key in changes:
                line = f"{m.group(1)} = {_toml(changes[key])}"
        lines.append(line)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


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
    args: list[str], env: dict[str, str], poll_s: float = 0.05, cwd: Path | None = None
) -> tuple[float, float, str]:
    """Run `yzos-jobs ARGS` as a user would: (seconds, peak RSS in MB, stdout)."""
    import psutil

    started = time.perf_counter()
    # stderr to a file: a pipe nobody reads while polling could fill and stall the command.
    with tempfile.TemporaryFile(mode="w+") as errors:
        proc = subprocess.Popen(
            [YZOS_JOBS, *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            cwd=cwd or REPO,
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
        errors.seek(0)
        said = errors.read()[-2000:]
    if proc.returncode != 0:
        raise SystemExit(f"yzos-jobs {' '.join(args)} failed ({proc.returncode}): {out}{said}")
    return time.perf_counter() - started, peak / 2**20, out.strip()


def median_seconds(command: list[str], env: dict[str, str], cwd: Path, repeat: int = 7) -> float:
    """The median wall time of a command over `repeat` runs (one warm-up run first)."""
    times = []
    for i in range(repeat + 1):
        started = time.perf_counter()
        subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=True)
        if i:
            times.append(time.perf_counter() - started)
    return statistics.median(times)
