"""The review commands on a terminal or a redirect whose encoding cannot hold every character (a
Latin-1 locale; cp1252 on Windows): what the encoding cannot show is printed as a backslash
escape, JSON stays whole, and nothing ends in a traceback."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.support.cli import cli_env, run_cli
from tests.support.jobs import add_candidates, make_ctx
from tests.support.terminal import run_in_terminal
from yzos_jobs.maintain.jobs import run_entity_promote

CJK, EMOJI = "陈晓明", "🚀 Launch"  # neither is Latin-1; the rocket is outside the BMP too
CJK_SHOWN = "\\u9648\\u6653\\u660e"
ROCKET_SHOWN = "\\U0001f680 Launch"


@pytest.fixture
def named(db_url: str) -> str:
    ctx = make_ctx(db_url)  # dry_run
    add_candidates(
        ctx,
        {"raw_text": CJK, "suggested_kind": "person", "source_id": "chat"},
        {"raw_text": EMOJI, "surrounding_text": f"{CJK} ships {EMOJI}", "source_id": "w"},
    )
    run_entity_promote(ctx)
    return db_url


def _latin1(*args: str, db_url: str) -> str:
    done = run_cli(*args, db_url=db_url, charset="latin-1")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (("entities",), [CJK_SHOWN, ROCKET_SHOWN]),
        (("show", CJK), [f"e:1 {CJK_SHOWN}"]),
        (("explain", CJK), [f"e:1 {CJK_SHOWN}"]),
        (("show", EMOJI), [f"e:2 {ROCKET_SHOWN}", f"{CJK_SHOWN} ships {ROCKET_SHOWN}"]),
    ],
)
def test_tables_escape_what_latin1_cannot_show(
    named: str, args: tuple[str, ...], shown: list[str]
) -> None:
    out = _latin1(*args, db_url=named)
    for text in shown:
        assert text in out, out


def test_json_on_latin1_is_ascii_escaped_and_reads_back_whole(named: str) -> None:
    listed = _latin1("entities", "--json", db_url=named)
    assert listed.isascii()
    assert {e["name"] for e in json.loads(listed)} == {CJK, EMOJI}
    shown = _latin1("show", EMOJI, "--json", db_url=named)
    assert shown.isascii()
    assert json.loads(shown)["entity"]["summary"] == f"{CJK} ships {EMOJI}"
    # the other commands that print JSON: the settings, and a verdict (dry_run)
    settings = _latin1("config", "--json", db_url=named)
    assert settings.isascii() and json.loads(settings)
    judged = _latin1("classify", EMOJI, "--kind", "project", db_url=named)
    assert judged.isascii() and json.loads(judged)


def test_export_on_latin1_keeps_jsonl_whole_and_escapes_csv(named: str) -> None:
    lines = _latin1("export", db_url=named).splitlines()
    assert {json.loads(line)["name"] for line in lines} == {CJK, EMOJI}
    rows = csv.DictReader(io.StringIO(_latin1("export", "--format", "csv", db_url=named)))
    assert {r["name"] for r in rows} == {CJK_SHOWN, ROCKET_SHOWN}


def test_a_latin1_terminal_gets_the_drawn_table(named: str, tmp_path: Path) -> None:
    # A real terminal (rich draws) whose Python streams are Latin-1, as under LANG=…ISO-8859-1.
    env = cli_env(named, PYTHONIOENCODING="latin-1")
    shown = run_in_terminal("show", CJK, env=env, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    assert CJK_SHOWN in shown.stdout
