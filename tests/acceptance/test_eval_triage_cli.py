"""`yzos-jobs eval-triage` as a user runs it: the real corpus's labels as the dataset, each
session's digest rebuilt from its source file, the loopback LLM answering."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import REPO, llm_cli_env, run_cli
from yzos_jobs.testing import OpenAIDouble, Status, session_of, task, triage_reply

REAL = REPO / "tests" / "fixtures" / "real"
DATASETS = [REAL / "labels.jsonl", REAL / "labels-claude-code.jsonl"]


def _env(tmp_path: Path, base_url: str) -> dict[str, str]:
    return llm_cli_env(f"sqlite:///{tmp_path / 'y.db'}", base_url, "sk-eval-triage-secret")


def _eval(tmp_path: Path, dataset: Path, base_url: str, *extra: str) -> dict[str, Any]:
    result = run_cli("eval-triage", str(dataset), "--json", *extra, env=_env(tmp_path, base_url))
    assert result.returncode == 0, result.stderr
    assert "sk-eval-triage-secret" not in result.stdout + result.stderr
    return json.loads(result.stdout)


def _labelled(dataset: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in dataset.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda p: p.stem)
def test_every_labelled_session_is_rebuilt_and_triaged_once(tmp_path: Path, dataset: Path) -> None:
    """Line-level extraction as the model (one task per request line): every session of the
    dataset is found in its source, asked about once, and scored against its labels."""
    labelled = _labelled(dataset)
    with OpenAIDouble() as llm:
        report = _eval(tmp_path, dataset, llm.base_url)
        digests = [session_of(body) for body in llm.requests]
    assert report["missing_sessions"] == [] and report["skipped_lines"] == []
    assert report["sessions"] == len(labelled) == report["llm_calls"] == len(digests)
    assert report["failures"] == 0
    assert report["labelled_items"] == sum(
        1 for row in labelled for item in row["items"] if item.get("kind", "task") == "task"
    )
    # A labelled item rests on request lines, so one task per request finds most of them, and
    # the rephrasings of one item come back as duplicates.
    assert report["recall"] >= 0.6
    assert 0 < report["precision"] < 1
    assert report["duplicate_rate"] > 0
    assert all(d is not None for d in digests)  # every call a triage request with its digest


def test_a_model_that_cites_nothing_scores_zero_and_one_that_cites_the_labels_scores_one(
    tmp_path: Path,
) -> None:
    dataset = DATASETS[0]
    labelled = _labelled(dataset)
    first_lines: dict[str, set[int]] = {}  # session start -> each labelled item's first line
    for row in labelled:
        first_lines.setdefault(row["session_start"], set()).update(
            min(item["lines"])
            for item in row["items"]
            if item.get("kind", "task") == "task" and item["lines"]
        )

    def cite_labels(body: dict[str, Any]) -> Any:
        # One task per labelled item whose first line the digest shows, citing that line.
        digest = session_of(body) or {}
        start = str(digest.get("started_at", ""))[:19].replace("T", " ")
        wanted = first_lines.get(start, set())
        shown = sorted(n for n, _, _ in digest.get("lines", []) if n in wanted)
        return triage_reply(digest.get("project"), [task(f"item at {n}", [n]) for n in shown])

    with OpenAIDouble(lambda body: triage_reply(None, [])) as llm:
        silent = _eval(tmp_path, dataset, llm.base_url)
    assert (silent["proposed_tasks"], silent["recall"], silent["precision"]) == (0, 0.0, 0.0)
    with OpenAIDouble(cite_labels) as llm:
        exact = _eval(tmp_path, dataset, llm.base_url, "--no-cache")
    assert exact["proposed_tasks"] > 0
    assert exact["precision"] == 1.0 and exact["duplicate_rate"] == 0.0
    assert exact["recall"] >= 0.9  # the rest start on a line the bounded digest left out


def test_replies_are_cached_and_no_cache_asks_again(tmp_path: Path) -> None:
    dataset = DATASETS[1]
    with OpenAIDouble() as llm:
        first = _eval(tmp_path, dataset, llm.base_url)
        again = _eval(tmp_path, dataset, llm.base_url)
        fresh = _eval(tmp_path, dataset, llm.base_url, "--no-cache")
    assert first["llm_calls"] == first["sessions"] > 0
    assert (again["llm_calls"], again["cache_hits"]) == (0, first["sessions"])
    assert fresh["llm_calls"] == first["sessions"]
    assert again["recall"] == first["recall"] and fresh["recall"] == first["recall"]


def test_failed_calls_and_bad_lines_are_counted_and_the_rest_is_scored(tmp_path: Path) -> None:
    rows = _labelled(DATASETS[1])
    dataset = tmp_path / "labels.jsonl"
    # Sources are relative to the dataset's folder: point them back at the corpus.
    rows = [{**row, "source": str(REAL / row["source"])} for row in rows]
    lines = [json.dumps(row) for row in rows]
    lines.insert(1, "{not json")
    lines.insert(2, '{"source": ' + "[" * 5000 + "]" * 5000 + "}")
    lines.append(json.dumps({**rows[0], "session_id": "no-such-session"}))
    # a source that is a folder: told once, on the first line naming it, and no session missing
    lines += [json.dumps({**row, "source": str(tmp_path)}) for row in rows[:2]]
    lines[0] = "\ufeff" + lines[0]  # an editor's byte order mark first
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    failing = rows[0]["project"]  # the model fails on every session of this project

    def answer(body: dict[str, Any]) -> Any:
        if (session_of(body) or {}).get("project") == failing:
            return Status(500)
        return triage_reply(None, [])

    with OpenAIDouble(answer) as llm:
        env = _env(tmp_path, llm.base_url)
        # No retries, and no breaker: with eight calls in flight, whether three refusals come
        # back in a row (and the rest fail fast, unasked) depends on timing.
        (tmp_path / "c.toml").write_text("[llm]\nmax_retries = 0\nbreaker_threshold = 1000\n")
        env["YZOS_CONFIG"] = str(tmp_path / "c.toml")
        result = run_cli("eval-triage", str(dataset), "--json", env=env)
        refused = [b for b in llm.requests if (session_of(b) or {}).get("project") == failing]
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    folder_line = len(lines) - 1
    assert [s.split(": ", 1)[0] for s in report["skipped_lines"]] == [
        f"{dataset}:2",
        f"{dataset}:3",
        f"{dataset}:{folder_line}",
    ]
    assert report["skipped_lines"][-1].endswith(
        f"{tmp_path}: not a regular file (and 1 more label naming it)"
    )
    assert len(report["missing_sessions"]) == 1
    assert "no-such-session" in report["missing_sessions"][0]
    assert report["sessions"] == len(rows)
    assert report["failures"] == len(refused) > 0  # each counted, the other sessions scored
    assert report["llm_calls"] == len(rows) - len(refused)


def test_dry_run_refuses_with_one_line(tmp_path: Path) -> None:
    result = run_cli(
        "eval-triage", str(DATASETS[0]), db_url=f"sqlite:///{tmp_path / 'y.db'}", cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        'yzos-jobs: error: eval-triage needs a model: set [llm] backend = "openai" '
        "(dry_run triages nothing)"
    ]
