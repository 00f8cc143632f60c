"""Every command answers --help without touching a database."""

from __future__ import annotations

import click
from click.testing import CliRunner

from yzos_jobs.cli import cli


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


def test_every_command_has_help(tmp_path) -> None:
    runner = CliRunner()
    paths = _commands(cli)
    assert (
        ("once",) in paths and ("import", "claude-code") in paths and ("db", "downgrade") in paths
    )
    review = {("entities",), ("show",), ("explain",), ("correct",), ("export",), ("eval-triage",)}
    assert review <= set(paths)
    for path in paths:
        result = runner.invoke(
            cli, [*path, "--help"], env={"YZOS_DATABASE_URL": "sqlite:///:memory:"}
        )
        assert result.exit_code == 0, (path, result.output)
        assert "Usage:" in result.output
