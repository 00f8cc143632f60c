"""Tables on a terminal never break a word: free text wraps at spaces, a token too long for its
column ends in "…", and on a narrow terminal the least needed columns are left out."""

from __future__ import annotations

import io
import re

import pytest

from yzos_jobs.review_render import ENTITY_HEADERS, render_entities

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _entity(i: int, name: str, project: str) -> dict[str, object]:
    return {
        "ref": f"e:{i}",
        "name": name,
        "kind": "project",
        "status": "active",
        "project": project,
        "sightings": 12345,
        "first_seen": "2026-11-06T09:05:00+00:00",
        "last_seen": "2026-12-01T21:27:00+00:00",
        "verdict_source": "fallback",
    }


LINES = [
    _entity(1, "Fix lease renewal when a daemon is killed mid batch", "yzos-core"),
    _entity(2, "supercalifragilisticexpialidocious-refactoring-of-everything", "analysis"),
    _entity(3, "Write Q3 OKR draft", "sighting-pipeline"),
]


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_no_word_is_folded_and_every_line_fits(
    columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    out = Terminal()
    render_entities(LINES, out)
    text = ANSI.sub("", out.getvalue())
    lines = [line for line in text.splitlines() if line.strip()]
    assert all(len(line.rstrip()) <= columns for line in lines)
    header = lines[0].split()
    # Headers stand whole ("sightings", never "sighti" over "ngs"), in their order.
    shown = [h for h in ENTITY_HEADERS if all(w in header for w in h.split())]
    assert " ".join(shown).split() == header
    assert {"ref", "name", "kind", "project"} <= set(shown)
    words = {w for e in LINES for key in ("name", "project") for w in str(e[key]).split()}
    words |= {"e:1", "e:2", "e:3", "project", "active", "12345", "fallback"}
    words |= {"2026-11-06", "2026-12-01", "09:05", "21:27"}
    for line in lines[2:]:  # below the header and its rule
        for token in line.split():
            assert token in words or token.endswith("…"), (token, text)


def test_a_wide_terminal_shows_every_column(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = Terminal()
    render_entities(LINES, out)
    header = ANSI.sub("", out.getvalue()).splitlines()[1].split()
    assert header == " ".join(ENTITY_HEADERS).split()


@pytest.mark.parametrize("columns", [20, 30, 40])
def test_a_very_narrow_terminal_keeps_the_ref_and_the_name(
    columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    out = Terminal()
    render_entities(LINES, out)
    lines = [line for line in ANSI.sub("", out.getvalue()).splitlines() if line.strip()]
    assert lines[0].split()[:2] == ["ref", "name"]
    assert "last" not in lines[0]  # what goes first is what names nothing
    assert lines[2].split()[0] == "e:1" and lines[2].split()[1] in ("Fix", "Fix…")
