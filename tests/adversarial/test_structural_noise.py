"""Structural junk never becomes an entity, even when the LLM is down and the structural fallback
decides; names that only look technical are promoted as suggested. Real CLI, both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import cli_env, run_cli
from tests.support.daemons import write_config
from tests.support.jobs import candidates, entities, make_ctx

pytestmark = pytest.mark.adversarial

JUNK = [
    "3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22",
    "3f2b9c1",
    "e3b0c44298fc1c149afbf4c8996fb924",
    "{{project_name}}",
    "${USER}",
    "%s",
    "/Users/me/Code",
    "${HOME}/Code/site",
]
NAMES = ["Node.js", "socket.io", "Decade", "deadbeef", "Q3 planning", "陈晓明", "v2.1 release"]


def _observations(path: Path) -> Path:
    lines = [
        {
            "record_id": f"c-{i}",
            "session_id": "desk-1",
            "type": "candidate",
            "raw_text": text,
            "suggested_kind": "project",
            "source_kind": "clipboard",
        }
        for i, text in enumerate(JUNK + NAMES)
    ]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return path


def test_llm_down_fallback_rejects_structural_junk_and_promotes_names(
    db_url: str, tmp_path: Path
) -> None:
    cfg = write_config(
        tmp_path / "c.toml",
        "http://127.0.0.1:1/v1",  # nothing listens: every request fails at once
        llm={"max_retries": 0, "timeout_s": 2.0},
        **{"jobs.entity_promote": {"max_attempts": 1}},
    )
    env = cli_env(db_url, YZOS_CONFIG=str(cfg))
    imported = run_cli("import", "jsonl", str(_observations(tmp_path / "o.jsonl")), env=env)
    assert imported.returncode == 0, imported.stderr
    promoted = run_cli("once", "entity_promote", "--json", env=env)
    assert promoted.returncode == 0, promoted.stderr

    ctx = make_ctx(db_url)
    assert sorted(e.display_name for e in entities(ctx)) == sorted(NAMES)
    rejected = {c.raw_text for c in candidates(ctx) if c.status == "rejected"}
    assert rejected == set(JUNK)
