"""Helpers to run the real CLI against the OpenAI-protocol double."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.cli import cli_env


def llm_cli_env(tmp_path: Path, db_url: str | None, base_url: str, **llm: Any) -> dict[str, str]:
    """The environment for `yzos-jobs` pointed at `base_url`, with [llm] keys from `llm`."""
    values = {"max_retries": 0, "timeout_s": 5.0, "max_concurrency": 4, **llm}
    lines = ["[llm]", 'backend = "openai"', 'model = "double-7b"']
    lines += [f"{key} = {_toml(value)}" for key, value in values.items()]
    config = tmp_path / "config.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = cli_env(db_url, YZOS_CONFIG=str(config))
    env["YZOS_LLM_BASE_URL"] = base_url
    return env


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)
