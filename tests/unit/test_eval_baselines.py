"""`yzos-jobs eval` prints every accuracy beside what the trivial judges score on the same cases:
answering "noise" to every one, and dry_run (the suggested kind accepted, nothing read)."""

from __future__ import annotations

import json
from pathlib import Path

from yzos_jobs.config import Settings
from yzos_jobs.entity.evaluation import evaluate, render_report
from yzos_jobs.runtime import build_classifier

CASES = [
    {"raw_text": "Alice Chen", "suggested_kind": "person", "label": "person"},
    {"raw_text": "Bob Li", "suggested_kind": "person", "label": "person"},
    {"raw_text": "YZOS Core", "suggested_kind": "project", "label": "noise"},
    {"raw_text": "3f2b9c1e", "label": "noise"},
    {"raw_text": "Telegram", "suggested_kind": "project", "label": "app"},
]


def test_eval_reports_the_baselines_beside_the_accuracy(tmp_path: Path) -> None:
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    dry_run = build_classifier(Settings(), None, use_cache=False)

    report = evaluate(dry_run, dataset)

    # 2 of 5 labels are noise; dry_run gets both persons and the unsuggested noise right.
    assert report.as_dict()["baselines"] == {"always_noise": 0.4, "dry_run": 0.6}
    assert report.accuracy() == 0.6  # dry_run judged: its score is its own baseline
    first_lines = render_report(report).splitlines()[:2]
    assert first_lines == [
        "cases 5  accuracy 0.600  failures 0",
        "baselines on the same cases: always noise 0.400  dry_run 0.600",
    ]
