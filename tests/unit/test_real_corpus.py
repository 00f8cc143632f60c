"""The real corpus is consistent: labels parse, point at stored files and at lines inside the
sessions they describe, every aider session is labelled once, and SOURCES names every file.

Data only: nothing here reads a file the way an importer does, so the labels stay independent of
the code they measure."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
AIDER = REAL / "aider"
# Every header aider has written; a UTF-8 BOM may precede the first one.
AIDER_HEADER = re.compile(
    rb"^(?:\xef\xbb\xbf)?# [Aa]ider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})"
)
FIELDS = {
    "source",
    "format",
    "session_start",
    "project",
    "project_path_hint",
    "items",
    "persons",
    "split",
}


def _labels() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(REAL.glob("labels*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                row = json.loads(line)
                row["_where"] = f"{path.name}:{number}"
                rows.append(row)
    return rows


def _headers(path: Path) -> dict[int, str]:
    """Header line number (1-based, physical lines) -> the start time it writes."""
    lines = path.read_bytes().split(b"\n")
    matches = ((n, AIDER_HEADER.match(raw)) for n, raw in enumerate(lines, 1))
    return {n: m.group(1).decode() for n, m in matches if m}


def _line_count(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def _aider_files() -> list[Path]:
    return sorted(p for p in AIDER.rglob("*") if p.is_file() and p.name != ".gitattributes")


LABELS = _labels()
AIDER_LABELS = [row for row in LABELS if row["format"] == "aider"]


def test_the_corpus_has_aider_files_and_labels() -> None:
    assert _aider_files()
    assert AIDER_LABELS


@pytest.mark.parametrize("row", LABELS, ids=[row["_where"] for row in LABELS])
def test_label_has_its_fields_and_its_source_exists(row: dict[str, Any]) -> None:
    assert row.keys() >= FIELDS, FIELDS - row.keys()
    assert (REAL / row["source"]).is_file(), row["source"]
    assert isinstance(row["project"], str) and row["project"]
    assert row["split"] in ("tune", "heldout")  # tuned on, or only ever scored
    assert row["project_path_hint"] is None or isinstance(row["project_path_hint"], str)
    assert isinstance(row["persons"], list)
    for item in row["items"]:
        assert item["title"].strip() and item["kind"]
        assert item["lines"] and all(isinstance(n, int) and n > 0 for n in item["lines"])


@pytest.mark.parametrize("row", AIDER_LABELS, ids=[row["_where"] for row in AIDER_LABELS])
def test_aider_label_points_inside_its_session(row: dict[str, Any]) -> None:
    path = REAL / row["source"]
    headers = _headers(path)
    start = row["session_line"]
    assert headers.get(start) == row["session_start"], f"line {start} is not that session's header"
    later = [n for n in headers if n > start]
    end = later[0] - 1 if later else _line_count(path)
    for item in row["items"]:
        outside = [n for n in item["lines"] if not start < n <= end]
        assert not outside, f"{item['title']}: lines {outside} are outside {start}-{end}"


@pytest.mark.parametrize("path", _aider_files(), ids=lambda p: str(p.relative_to(REAL)))
def test_every_aider_session_is_labelled_once(path: Path) -> None:
    source = str(path.relative_to(REAL))
    labelled = [row["session_line"] for row in AIDER_LABELS if row["source"] == source]
    assert sorted(labelled) == sorted(_headers(path)), source


def test_sources_names_every_aider_file() -> None:
    named = set((REAL / "SOURCES").read_text(encoding="utf-8").splitlines())
    files = [str(p.relative_to(REAL)) for p in _aider_files()]
    missing = [f for f in files if f not in named]
    assert not missing, missing
