"""Settings: the shipped config.toml documents every key with its default; overrides apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from yzos_jobs.config import ConfigError, Settings, load_settings

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
    # auto_migrate is documented commented out: its default is "unset".
    assert _keys(shipped) | {"database.auto_migrate"} == _keys(defaults)
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
