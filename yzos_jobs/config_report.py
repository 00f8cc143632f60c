"""`yzos-jobs config`: the effective settings, section by section, each with where it came from
(the default, the config file, or an environment variable). The API key is never shown: only
whether the variable `llm.api_key_env` names is set. Credentials in URLs are masked."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from yzos_jobs.config import setting_origins
from yzos_jobs.redact import mask_url
from yzos_jobs.shipped import config_template

API_KEY = "llm.api_key"
ORIGIN_COLUMN = 40


class ConfigExists(Exception):
    """`config --init` never overwrites a file."""


def effective(path: str | None, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One entry per key: key, value (masked where it may hold a secret), origin."""
    env = dict(os.environ) if env is None else env
    settings, origins = setting_origins(path, env)
    values = _flat(settings.model_dump())
    rows = [{"key": key, "value": _masked(values[key]), "origin": origins[key]} for key in values]
    var = settings.llm.api_key_env
    key_set = bool(env.get(var))
    at = next(i for i, row in enumerate(rows) if row["key"] == "llm.api_key_env") + 1
    rows.insert(
        at,
        {"key": API_KEY, "value": "***" if key_set else None, "origin": f"env {var}"},
    )
    return rows


def _flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _masked(value: Any) -> Any:
    # A setting that is a URL is one URL end to end: a password in it may hold a space.
    return mask_url(value) if isinstance(value, str) else value


def render(rows: list[dict[str, Any]]) -> str:
    """TOML-like, grouped by section, each value followed by its origin as a comment; a key
    with no value is shown commented out."""
    lines: list[str] = []
    section = None
    # Origins line up after ordinary values; a long list pushes only its own origin along.
    width = min(ORIGIN_COLUMN, max(len(_assignment(row)) for row in rows))
    for row in rows:
        head, _, _ = row["key"].rpartition(".")
        if head != section:
            if lines:
                lines.append("")
            lines.append(f"[{head}]")
            section = head
        lines.append(f"{_assignment(row):<{width}}  # {row['origin']}")
    return "\n".join(lines)


def _assignment(row: dict[str, Any]) -> str:
    name = row["key"].rpartition(".")[2]
    if row["value"] is None:
        return f"# {name} = (not set)"
    return f"{name} = {json.dumps(row['value'], ensure_ascii=False)}"


def write_template(target: Path) -> None:
    """Write the commented config.toml (every key at its default, with its range) to `target`;
    refuse if anything is there."""
    text = config_template().read_text(encoding="utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(target, "x", encoding="utf-8") as fh:
            fh.write(text)
    except FileExistsError:
        raise ConfigExists(f"{target} exists; not overwritten") from None
