"""`yzos-jobs config`: the effective settings with their origin, the key never shown; `config
--init` writes the commented config.toml once."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.cli import REPO
from yzos_jobs.cli import cli
from yzos_jobs.config import Settings, load_settings


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory and an environment without any YZOS_ variable."""
    import os

    for var in [v for v in os.environ if v.startswith("YZOS_")]:
        monkeypatch.delenv(var)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _config(*args: str, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    result = CliRunner().invoke(cli, [*args, "config", "--json"], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_without_a_config_file_every_setting_is_the_default(workdir: Path) -> None:
    rows = _config()
    keys = {row["key"] for row in rows}
    assert "jobs.entity_promote.interval_s" in keys and "database.url" in keys
    assert {row["origin"] for row in rows if row["key"] != "llm.api_key"} == {"default"}
    url = next(row for row in rows if row["key"] == "database.url")
    assert url["value"] == Settings().database.url


def test_origins_name_the_file_and_the_variable_and_the_key_stays_hidden(workdir: Path) -> None:
    (workdir / "config.toml").write_text('[llm]\nmodel = "from-file"\n')
    env = {
        "YZOS_DATABASE_URL": "postgresql://me:hunter2@db.internal/yzos",
        "YZOS_LLM_API_KEY": "sk-very-secret-key",
    }
    result = CliRunner().invoke(cli, ["config"], env=env)
    assert result.exit_code == 0, result.output
    assert "sk-very-secret-key" not in result.output and "hunter2" not in result.output
    rows = {row["key"]: row for row in _config(env=env)}
    assert (rows["llm.model"]["value"], rows["llm.model"]["origin"]) == (
        "from-file",
        "file config.toml",
    )
    assert rows["database.url"]["origin"] == "env YZOS_DATABASE_URL"
    assert rows["database.url"]["value"] == "postgresql://***@db.internal/yzos"
    assert rows["llm.api_key"] == {
        "key": "llm.api_key",
        "value": "***",
        "origin": "env YZOS_LLM_API_KEY",
    }
    assert rows["llm.backend"]["origin"] == "default"
    assert "sk-very-secret-key" not in json.dumps(list(rows.values()))


def test_the_human_form_shows_each_value_with_its_origin(workdir: Path) -> None:
    (workdir / "config.toml").write_text("[jobs.entity_promote]\nbatch_size = 7\n")
    result = CliRunner().invoke(cli, ["config"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "[jobs.entity_promote]" in lines
    batch = next(line for line in lines if line.startswith("batch_size = 7"))
    assert batch.endswith("# file config.toml")
    assert any(line.startswith("interval_s = 60") and line.endswith("# default") for line in lines)


def test_init_writes_the_commented_defaults_once(workdir: Path) -> None:
    first = CliRunner().invoke(cli, ["config", "--init"])
    assert first.exit_code == 0, first.output
    written = (workdir / "config.toml").read_text()
    assert written == (REPO / "config.toml").read_text()
    assert written.count("\n# ") > 20  # the comments travel with it
    assert load_settings(workdir / "config.toml", env={}).model_dump() == Settings().model_dump()
    (workdir / "config.toml").write_text('[llm]\nmodel = "mine"\n')
    again = CliRunner().invoke(cli, ["config", "--init"])
    assert again.exit_code == 1
    assert "exists; not overwritten" in again.output
    assert tomllib.loads((workdir / "config.toml").read_text()) == {"llm": {"model": "mine"}}


def test_init_writes_where_config_points(workdir: Path) -> None:
    target = workdir / "etc" / "yzos.toml"
    target.parent.mkdir()
    result = CliRunner().invoke(cli, ["--config", str(target), "config", "--init"])
    assert result.exit_code == 0, result.output
    assert target.read_text() == (REPO / "config.toml").read_text()
    assert not (workdir / "config.toml").exists()
