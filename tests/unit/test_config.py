"""Settings: the shipped config.toml documents every key with its default; overrides apply."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from yzos_jobs.config import ConfigError, Settings, format_bound, load_settings, numeric_range

REPO = Path(__file__).resolve().parents[2]


def _keys(model: dict, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for key, value in model.items():
        name = f"{prefix}{key}"
        out |= _keys(value, name + ".") if isinstance(value, dict) else {name}
    return out


def test_shipped_config_lists_every_key_with_its_default() -> None:
    import tomllib

    shipped = tomllib.loads((REPO / "config.toml").read_text())
    defaults = Settings().model_dump()
    # Documented commented out: their default is "unset".
    unset = {"database.auto_migrate", "jobs.entity_promote.batch_size", "logging.level"}
    assert _keys(shipped) | unset == _keys(defaults)
    assert load_settings(REPO / "config.toml", env={}).model_dump() == defaults


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[llm]\nbackend = 'dry_run'\nmodel = 'a'\n")
    env = {
        "YZOS_DATABASE_URL": "postgresql://u@db/x",
        "YZOS_LLM_BACKEND": "openai",
        "YZOS_LLM_BASE_URL": "http://127.0.0.1:1/v1",
        "YZOS_LLM_MODEL": "m2",
    }
    s = load_settings(cfg, env=env)
    assert (s.llm.backend, s.llm.base_url, s.llm.model) == ("openai", "http://127.0.0.1:1/v1", "m2")
    assert s.database.sqlalchemy_url == "postgresql+psycopg://u@db/x"
    assert not s.database.should_auto_migrate


def test_yzos_config_names_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[jobs.entity_promote]\nbatch_size = 7\n")
    assert load_settings(env={"YZOS_CONFIG": str(cfg)}).jobs.entity_promote.batch_size == 7


def test_bad_env_url_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="YZOS_DATABASE_URL"):
        load_settings(env={"YZOS_DATABASE_URL": "oracle://x"})


def test_api_key_is_read_from_the_named_variable_only(tmp_path: Path, monkeypatch) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[llm]\napi_key_env = 'MY_KEY'\n")
    monkeypatch.setenv("MY_KEY", "sk-secret")
    s = load_settings(cfg, env={})
    assert s.llm_api_key() == "sk-secret"
    assert "sk-secret" not in s.model_dump_json()


def test_no_variable_named_means_no_key(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[llm]\napi_key_env = ''\n")
    assert load_settings(cfg, env={}).llm_api_key() is None


def _numeric_keys(model: type[BaseModel] = Settings, prefix: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found += _numeric_keys(annotation, f"{prefix}{name}.")
        elif annotation in (int, float, int | None, float | None):
            found.append((f"{prefix}{name}", info))
    return found


NUMERIC_KEYS = _numeric_keys()


def _documented_ranges() -> dict[str, tuple[str, str]]:
    """key -> (low, high) as the comment block above the key in the shipped config.toml says."""
    ranges: dict[str, tuple[str, str]] = {}
    section, comments = "", []
    for line in (REPO / "config.toml").read_text().splitlines():
        # A key line, or one documented commented out (its default is "unset").
        key = re.match(r"#? ?([a-z_]+) = ", line)
        if line.startswith("["):
            section, comments = line.strip("[]") + ".", []
        elif key is None and line.startswith("#"):
            comments.append(line)
        elif key is not None:
            found = re.search(r"\((\d[\d.]*)-(\d[\d.]*)[),:]", " ".join(comments))
            if found:
                ranges[section + key[1]] = (found[1], found[2])
            comments = []
    return ranges


def test_every_numeric_key_has_a_range_documented_in_config_toml() -> None:
    assert {"llm.timeout_s", "jobs.entity_purge_v06.interval_h"} <= {k for k, _ in NUMERIC_KEYS}
    documented = _documented_ranges()
    for key, info in NUMERIC_KEYS:
        span = numeric_range(info)
        assert span is not None, f"{key} has no lower and upper bound"
        assert documented.get(key) == tuple(format_bound(b) for b in span), key


def _toml_for(key: str, value: str) -> str:
    section, _, name = key.rpartition(".")
    return f"[{section}]\n{name} = {value}\n"


@pytest.mark.parametrize(("key", "info"), NUMERIC_KEYS, ids=[k for k, _ in NUMERIC_KEYS])
def test_numeric_key_accepts_its_range_and_refuses_beyond_it(
    tmp_path: Path, key: str, info: Any
) -> None:
    low, high = numeric_range(info)
    cfg = tmp_path / "c.toml"
    for inside in (low, high):
        cfg.write_text(_toml_for(key, repr(inside)))
        load_settings(cfg, env={})
    outside = [repr(low - 1), repr(high + 1), str(2**70)]
    if info.annotation is float:
        outside += ["nan", "inf", "-inf", repr(high * 1.000001), str(10**400)]
    for value in outside:
        cfg.write_text(_toml_for(key, value))
        with pytest.raises(ConfigError) as caught:
            load_settings(cfg, env={})
        message = str(caught.value)
        assert message.startswith(f"{cfg}: key '{key}': must be from "), (value, message)
        assert "\n" not in message
