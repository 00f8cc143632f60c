"""Hostile settings, as a user gives them: a config path that is no file, numbers out of range,
an in-memory database. Each is one line naming what is wrong, exit 2, and nothing is written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import REPO, assert_one_line_error, cli_env, run_cli
from yzos_jobs.config import MAX_CONFIG_BYTES

pytestmark = pytest.mark.adversarial

EXIT_USAGE = 2
# A hang or a runaway read must fail the test, not stall the suite.
TIMEOUT_S = 60


def _config_path(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"{kind}.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "binary":
        path.write_bytes(Path("/bin/sh").resolve().read_bytes()[:4096])
    elif kind == "huge":
        path.write_text("# padding\n" * (MAX_CONFIG_BYTES // 10 + 1))
    elif kind == "deeply-nested":
        path.write_text("a = " + "[" * 100_000)
    elif kind == "long-integer":
        path.write_text("[llm]\nmax_retries = " + "9" * 5000 + "\n")
    return path


CONFIG_PATHS = {
    "fifo": "not a regular file (a FIFO)",
    "dev-zero": "not a regular file (a device)",
    "directory": "not a regular file (a directory)",
    "binary": "not UTF-8 text",
    "huge": f"larger than {MAX_CONFIG_BYTES} bytes",
    "deeply-nested": "nested too deeply",
    "long-integer": "a number too long to read",
}


@pytest.mark.parametrize(("kind", "says"), CONFIG_PATHS.items(), ids=list(CONFIG_PATHS))
def test_config_path_that_is_no_usable_file_is_one_line(
    tmp_path: Path, kind: str, says: str
) -> None:
    path = _config_path(tmp_path, kind)
    result = run_cli("--config", str(path), "db", "current", cwd=tmp_path, timeout=TIMEOUT_S)
    assert_one_line_error(result, EXIT_USAGE, str(path), says)
    assert not (tmp_path / "yzos.db").exists()


@pytest.mark.parametrize("how", ["YZOS_CONFIG", "./config.toml"])
def test_a_fifo_config_is_refused_however_it_is_named(tmp_path: Path, how: str) -> None:
    if how == "YZOS_CONFIG":
        path = _config_path(tmp_path, "fifo")
        env = cli_env(YZOS_CONFIG=str(path))
    else:
        path = tmp_path / "config.toml"
        os.mkfifo(path)
        env = cli_env()
    result = run_cli("db", "current", cwd=tmp_path, env=env, timeout=TIMEOUT_S)
    assert_one_line_error(result, EXIT_USAGE, "config.toml" if how != "YZOS_CONFIG" else "fifo")


OUT_OF_RANGE = [
    ("llm", "cache_ttl_s", "100000000000000"),
    ("jobs", "run_lease_s", "100000000000000"),
    ("jobs.entity_purge_v06", "interval_h", "1e300"),
    ("jobs.entity_purge_v06", "interval_h", "1e-12"),
    ("jobs.entity_purge_v06", "interval_h", "inf"),
    ("jobs.entity_promote", "lease_s", "1000000000000"),
    ("jobs.entity_promote", "interval_s", "0"),
    ("llm", "timeout_s", "inf"),
    ("llm", "timeout_s", "nan"),
    ("llm", "timeout_s", "-1.0"),
    ("llm", "timeout_s", "1" + "0" * 400),
    ("jobs", "max_fallback_share", "nan"),
    ("llm", "max_retries", "99999999999999999999999999"),
    ("importers", "session_idle_s", "-1"),
    ("decisions", "retention_days", "9223372036854775808"),
]


@pytest.mark.parametrize(
    ("section", "key", "value"), OUT_OF_RANGE, ids=[f"{k}={v[:12]}" for _, k, v in OUT_OF_RANGE]
)
def test_number_out_of_range_is_one_line_naming_file_and_key(
    tmp_path: Path, section: str, key: str, value: str
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[{section}]\n{key} = {value}\n")
    for command in (("db", "current"), ("run",)):
        result = run_cli("--config", str(cfg), *command, cwd=tmp_path, timeout=TIMEOUT_S)
        assert_one_line_error(result, EXIT_USAGE, str(cfg), f"'{section}.{key}'", "must be from")


def test_the_shipped_config_is_accepted(tmp_path: Path) -> None:
    for command in (["db", "upgrade"], ["db", "current"]):
        result = run_cli("--config", str(REPO / "config.toml"), *command, cwd=tmp_path)
        assert result.returncode == 0, result.stderr


IN_MEMORY_URLS = [
    "sqlite://",
    "sqlite:///:memory:",
    "sqlite:///file::memory:?cache=shared&uri=true",
    "sqlite:///file:scratch?mode=memory&cache=shared&uri=true",
]


@pytest.mark.parametrize("url", IN_MEMORY_URLS)
def test_in_memory_database_is_refused(tmp_path: Path, url: str) -> None:
    observations = str(REPO / "examples" / "observations.jsonl")
    result = run_cli("import", "jsonl", observations, db_url=url, cwd=tmp_path)
    assert_one_line_error(result, EXIT_USAGE, "YZOS_DATABASE_URL", "in-memory")
    assert not list(tmp_path.iterdir())  # no stray file named after the URL either


def test_in_memory_database_in_the_config_file_names_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[database]\nurl = "sqlite:///:memory:"\n')
    result = run_cli("--config", str(cfg), "once", "entity_promote", cwd=tmp_path)
    assert_one_line_error(result, EXIT_USAGE, str(cfg), "'database.url'", "in-memory")


def test_a_config_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    # Notepad writes one first
    path = tmp_path / "marked.toml"
    path.write_bytes(b"\xef\xbb\xbf[jobs.entity_promote]\ninterval_s = 77\n")
    result = run_cli("--config", str(path), "config", "--json", cwd=tmp_path, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    [setting] = [
        s for s in json.loads(result.stdout) if s["key"] == "jobs.entity_promote.interval_s"
    ]
    assert (setting["value"], setting["origin"]) == (77, f"file {path}")
