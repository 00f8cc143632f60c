"""Run the `yzos-jobs` command as a user would: in this process by default (the same click entry,
config and environment handling, stdout and stderr apart), or in a child process where the
process boundary is what a test is about (signals, kill -9, several daemons, start-up)."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
import structlog
from click.testing import CliRunner

from tests.support.watchdog import ends_within
from yzos_jobs.cli import cli

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


def without_root_powers() -> list[str]:
    """The prefix under which a command obeys file modes as any user does. As root, chmod
    blocks nothing (CAP_DAC_OVERRIDE): the command then runs with every capability dropped
    (setpriv)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file modes cannot be made to bind")
    return [setpriv, "--inh-caps=-all", "--bounding-set=-all", "--"]


def run_cli(
    *args: str,
    db_url: str | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    input_text: str | None = None,
    process: bool = False,
    prefix: Sequence[str] = (),
    charset: str = "utf-8",
) -> subprocess.CompletedProcess[str]:
    """The command's exit code, stdout and stderr. `process`: run it in a child process (a
    fresh interpreter); `prefix` is a command that child runs under (e.g. setpriv, to run without
    root's powers) and implies one. `charset`: the encoding of the in-process stdout and stderr
    (a Latin-1 terminal's: "latin-1"). A command still running after `timeout` fails the test:
    the child is killed, or this process dumps every thread's stack and exits."""
    env = env or cli_env(db_url)
    if process or prefix:
        return subprocess.run(
            [*prefix, sys.executable, "-m", "yzos_jobs", *args],
            cwd=cwd or REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input_text,
        )
    return _run_in_process(list(args), env, cwd or REPO, timeout, input_text, charset)


def _run_in_process(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    timeout: float,
    input_text: str | None,
    charset: str,
) -> subprocess.CompletedProcess[str]:
    with ends_within(timeout), _fresh_process_state(env, cwd):
        runner = CliRunner(charset=charset)
        result = runner.invoke(cli, args, input=input_text, prog_name="yzos-jobs")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        # What the interpreter prints for an exception nothing caught.
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(
        ["yzos-jobs", *args], result.exit_code, result.stdout, stderr
    )


@contextmanager
def _fresh_process_state(env: dict[str, str], cwd: Path) -> Iterator[None]:
    """The command sees `env` as its whole environment and `cwd` as its directory, as a child
    would; afterwards the environment, directory and logging configuration it changed are put
    back, so the next command and the test itself start from the state they would have had."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_structlog = structlog.get_config()
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        structlog.reset_defaults()
        structlog.configure(**saved_structlog)
        structlog.contextvars.clear_contextvars()
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)


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
        preexec_fn=_as_from_a_terminal,
    )


def _as_from_a_terminal() -> None:
    """In the child: SIGHUP as a command started from a terminal has it, whatever the suite was
    started under (`nohup make test` ignores it, and an ignored signal stays ignored)."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


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
