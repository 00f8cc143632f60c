"""Where import_sources looks: aider histories below the roots, depth-limited and never inside
tool or dependency directories; a host-wide lock per file between processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from yzos_jobs.sources.discovery import AIDER_HISTORY, aider_histories, expand_paths
from yzos_jobs.sources.file_locks import file_lock


def _history(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / AIDER_HISTORY).write_text("# aider chat started at 2025-01-01 10:00:00\n")
    return (path / AIDER_HISTORY).resolve()


def test_histories_are_found_in_repositories_not_in_tools_or_dependencies(tmp_path: Path) -> None:
    wanted = [_history(tmp_path / "Code" / "app"), _history(tmp_path / "Code" / "org" / "lib")]
    _history(tmp_path / "Code" / "app" / "node_modules" / "pkg")
    _history(tmp_path / "Code" / "app" / ".git" / "x")
    venv = tmp_path / "Code" / "app" / "env"
    _history(venv / "lib")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    _history(tmp_path / "Code" / "a" / "b" / "c" / "d")  # four levels below the root
    errors: list[tuple[Path, OSError]] = []
    found = aider_histories([tmp_path / "Code"], 3, lambda p, e: errors.append((p, e)))
    assert found == sorted(wanted) and errors == []
    deeper = aider_histories([tmp_path / "Code"], 4, lambda p, e: errors.append((p, e)))
    assert len(deeper) == 3


def test_configured_paths_expand_the_home_and_tell_the_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "Code").mkdir()
    found, missing = expand_paths(["~/Code", "~/.claude/projects"])
    assert found == [tmp_path / "Code"] and missing == [tmp_path / ".claude" / "projects"]


def test_configured_paths_expand_variables_and_pass_over_unset_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (tmp_path / ".claude" / "projects").mkdir(parents=True)
    default = ["$CLAUDE_CONFIG_DIR/projects", "~/.claude/projects", "~/.config/claude/projects"]
    found, missing = expand_paths(default)
    assert found == [tmp_path / ".claude" / "projects"]
    assert missing == [tmp_path / ".config" / "claude" / "projects"]  # the unset one: not counted
    # Claude Code's folder moved onto the default one is read once
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    found, _ = expand_paths(default)
    assert found == [tmp_path / ".claude" / "projects"]
    found, _ = expand_paths(["${CLAUDE_CONFIG_DIR}/projects"])
    assert found == [tmp_path / ".claude" / "projects"]
    # an empty variable names nothing; a folder whose own name holds a `$` is that folder
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")
    (tmp_path / "my$stuff").mkdir()
    found, missing = expand_paths(["$CLAUDE_CONFIG_DIR/projects", "~/my$stuff"])
    assert found == [tmp_path / "my$stuff"] and missing == []


HOLD = """
import sys, time
from pathlib import Path
from yzos_jobs.sources.file_locks import file_lock
with file_lock(Path(sys.argv[1])) as held:
    print("held" if held else "refused", flush=True)
    sys.stdin.readline()
"""


def test_one_process_at_a_time_holds_a_files_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YZOS_RUNTIME_DIR", str(tmp_path / "run"))
    target = tmp_path / "history.md"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with file_lock(target) as held:
            assert not held  # the other process has it
        with file_lock(tmp_path / "another.md") as held:
            assert held  # another file's lock is its own
    finally:
        holder.communicate("\n", timeout=30)
    with file_lock(target) as held:
        assert held  # released when its holder let go
