"""The real Claude Code and app-metadata corpus: labels point at real records, every fixture is
accounted for in SOURCES, and the corpus stays within its size budget.

The corpus root is tests/fixtures/real (layout: claude-code/, apps/, SOURCES,
labels-claude-code.jsonl)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "real"
LABELS = CORPUS / "labels-claude-code.jsonl"
LABEL_KEYS = {
    "source",
    "format",
    "session_id",
    "session_start",
    "project",
    "project_path_hint",
    "items",
    "persons",
    "split",
}
# A transcript is kept whole up to about 2.5 MB (the early rounds trimmed theirs to their first
# whole lines, most to 400 KB or less); the budget keeps the clone small.
CC_BUDGET_BYTES = 140_000_000
CC_MAX_FILES = 360
APP_MAX_FILES = 40
APP_MAX_BYTES = 64_000


def _label_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def _transcripts() -> list[Path]:
    return sorted((CORPUS / "claude-code").rglob("*.jsonl"))


def _main_transcripts() -> list[Path]:
    return [p for p in _transcripts() if "subagents" not in p.parts]


def _app_fixtures() -> list[Path]:
    apps = CORPUS / "apps"
    plists = sorted(apps.glob("*.app/Contents/Info.plist"))
    desktops = sorted((apps / "share" / "applications").glob("*.desktop"))
    return plists + desktops


def _is_request(record: dict[str, Any]) -> bool:
    """A user turn a person typed, structurally: a user record that no flag marks as written by
    Claude Code or a subagent, and that is not only a tool result (text typed while a tool ran
    is written beside its result, in the same record); or the queue record of a prompt typed
    while Claude Code worked (`enqueue`, its content typed text, not a tagged or JSON notice, or
    none where an attachment carries the prompt)."""
    if record.get("type") == "queue-operation":  # typed while Claude Code worked
        content = record.get("content")
        return record.get("operation") == "enqueue" and (
            content is None  # newer versions: the prompt is in a queued_command attachment
            or (isinstance(content, str) and not content.lstrip().startswith(("{", "<")))
        )
    if record.get("type") != "user":
        return False
    if record.get("isMeta") or record.get("isSidechain") or record.get("isCompactSummary"):
        return False
    content = record.get("message", {}).get("content")
    if isinstance(content, list):
        parts = [p for p in content if isinstance(p, dict)]
        results = any(p.get("type") == "tool_result" for p in parts)
        typed = any(p.get("type") == "text" and str(p.get("text", "")).strip() for p in parts)
        return typed or not results
    return isinstance(content, str)


# `git commit`, `git -C x commit`, `/usr/bin/git --git-dir=… commit`: one part of a command
_GIT_COMMIT = re.compile(r"\bgit\b[^\n|;&]*\bcommit\b")


def _is_commit(record: dict[str, Any]) -> bool:
    if record.get("type") != "assistant":
        return False
    content = record.get("message", {}).get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict)
        and p.get("type") == "tool_use"
        and p.get("name") in ("Bash", "PowerShell")
        and _GIT_COMMIT.search(str(p.get("input", {}).get("command", ""))) is not None
        for p in content
    )


def test_every_label_line_has_the_agreed_shape() -> None:
    labels = _label_lines()
    assert labels
    for label in labels:
        assert set(label) == LABEL_KEYS, label["source"]
        assert label["format"] == "claude-code"
        assert label["split"] in ("tune", "heldout")  # tuned on, or only ever scored
        assert label["source"].startswith("claude-code/") and label["source"].endswith(".jsonl")
        assert label["project"] and isinstance(label["project"], str)
        assert isinstance(label["persons"], list)
        for item in label["items"]:
            assert set(item) == {"title", "kind", "lines"}
            assert item["title"].strip() and item["kind"] == "task"
            assert item["lines"] and all(
                isinstance(n, int) or (isinstance(n, str) and n.startswith("subagents/"))
                for n in item["lines"]
            )


def test_labels_agree_with_the_transcript_they_name() -> None:
    for label in _label_lines():
        path = CORPUS / label["source"]
        assert path.is_file(), label["source"]
        own = [r for r in _records(path) if r.get("sessionId") == label["session_id"]]
        assert own, (label["source"], label["session_id"])
        assert label["session_start"] == next(r["timestamp"] for r in own if r.get("timestamp"))
        assert label["project_path_hint"] == next(r["cwd"] for r in own if r.get("cwd"))


def test_labelled_lines_exist_and_are_requests_or_commits() -> None:
    for label in _label_lines():
        path = CORPUS / label["source"]
        records = _records(path)
        for item in label["items"]:
            for ref in item["lines"]:
                if isinstance(ref, str):
                    name, _, number = ref.rpartition(":")
                    target = _records(path.with_suffix("") / name)
                    record = target[int(number) - 1]
                else:
                    assert 1 <= ref <= len(records), f"{label['source']}:{ref}"
                    record = records[ref - 1]
                assert _is_request(record) or _is_commit(record), f"{label['source']}:{ref}"


def test_every_session_is_labelled_once() -> None:
    # a file may hold several sessions (a session resumed under a new id in one committed file)
    sessions = [(label["source"], label["session_id"]) for label in _label_lines()]
    assert len(sessions) == len(set(sessions))
    expected = {
        (path.relative_to(CORPUS).as_posix(), r["sessionId"])
        for path in _main_transcripts()
        for r in _records(path)
        if r.get("uuid") and r.get("sessionId")
    }
    assert set(sessions) == expected


def test_transcripts_are_whole_json_lines() -> None:
    for path in _transcripts():
        data = path.read_bytes()
        assert data.endswith(b"\n"), path
        assert all(isinstance(r, dict) for r in _records(path)), path


def test_every_fixture_is_listed_in_sources() -> None:
    sources = (CORPUS / "SOURCES").read_text(encoding="utf-8")
    assert "## claude-code" in sources and "## apps" in sources
    for path in _transcripts() + _app_fixtures():
        local = path.relative_to(CORPUS).as_posix()
        assert f"- local: {local}\n" in sources, local


def test_corpus_stays_within_its_budget() -> None:
    transcripts = _transcripts()
    assert 0 < len(transcripts) <= CC_MAX_FILES
    assert sum(p.stat().st_size for p in transcripts) <= CC_BUDGET_BYTES
    apps = _app_fixtures()
    assert 0 < len(apps) <= APP_MAX_FILES
    assert all(p.stat().st_size <= APP_MAX_BYTES for p in apps)


@pytest.mark.parametrize("kind", ["plist", "desktop"])
def test_both_app_metadata_formats_are_present(kind: str) -> None:
    suffix = "Info.plist" if kind == "plist" else ".desktop"
    assert any(p.name.endswith(suffix) for p in _app_fixtures())
