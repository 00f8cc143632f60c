"""`yzos-jobs classify` and `yzos-jobs eval` as a user runs them, against the loopback LLM."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.support.cli import REPO, llm_cli_env, run_cli
from yzos_jobs.testing import OpenAIDouble, Status, candidate_of, verdict

DATASET = REPO / "datasets" / "classifier_eval.jsonl"


def _llm_env(tmp_path: Path, base_url: str) -> dict[str, str]:
    return llm_cli_env(f"sqlite:///{tmp_path / 'y.db'}", base_url, "sk-cli-secret")


def test_classify_dry_run_prints_the_suggested_kind(tmp_path: Path) -> None:
    result = run_cli("classify", "YZOS Core", "--kind", "project", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["is_real_entity"], out["kind"], out["display_name"]) == (
        True,
        "project",
        "YZOS Core",
    )


def test_classify_sends_context_and_app_and_prints_the_verdict(tmp_path: Path) -> None:
    with OpenAIDouble(lambda b: verdict("app")) as llm:
        result = run_cli(
            "classify",
            "Cursor",
            "--kind",
            "project",
            "--app",
            "com.todesktop.cursor",
            "--context",
            "用 Cursor 改 yzos 代码",
            cwd=tmp_path,
            env=_llm_env(tmp_path, llm.base_url),
        )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["kind"] == "app"
    cand = candidate_of(llm.requests[0])
    assert cand["surrounding_text"] == "用 Cursor 改 yzos 代码"
    assert cand["app_bundle_id"] == "com.todesktop.cursor"
    assert "sk-cli-secret" not in result.stdout + result.stderr


def test_classify_failure_prints_the_error_class_and_exits_non_zero(tmp_path: Path) -> None:
    with OpenAIDouble(lambda b: Status(500)) as llm:
        env = _llm_env(tmp_path, llm.base_url)
        env["YZOS_CONFIG"] = str(tmp_path / "c.toml")
        (tmp_path / "c.toml").write_text("[llm]\nmax_retries = 0\n")
        result = run_cli("classify", "Cursor", cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"] == "LlmFailed"


def test_classify_with_no_model_listening_is_an_llm_failure(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = _llm_env(tmp_path, f"http://127.0.0.1:{port}/v1")
    env["YZOS_CONFIG"] = str(tmp_path / "c.toml")
    (tmp_path / "c.toml").write_text("[llm]\nmax_retries = 0\n")
    result = run_cli("classify", "Cursor", cwd=tmp_path, env=env)
    assert result.returncode == 1
    failure = json.loads(result.stdout)
    # the types the design names, whatever finer one stands behind it
    assert failure["error"] == "LlmFailed" and "cannot reach" in failure["message"]


def test_eval_scores_an_oracle_perfectly_and_counts_calls(tmp_path: Path) -> None:
    labels = {}
    for line in DATASET.read_text().splitlines():
        row = json.loads(line)
        labels[(row["raw_text"], row.get("surrounding_text"))] = row["label"]

    def oracle(body):
        cand = candidate_of(body)
        return verdict(labels[(cand["raw_text"], cand["surrounding_text"])])

    with OpenAIDouble(oracle) as llm:
        env = _llm_env(tmp_path, llm.base_url)
        first = run_cli("eval", str(DATASET), "--json", cwd=tmp_path, env=env)
        second = run_cli("eval", str(DATASET), "--json", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["cases"] == len(labels) >= 150
    assert report["accuracy"] == 1.0
    assert all(m["precision"] == 1.0 and m["recall"] == 1.0 for m in report["per_kind"].values())
    assert report["llm_calls"] == len(labels) and report["latency_s"]["p50"] > 0
    cached = json.loads(second.stdout)
    assert (cached["llm_calls"], cached["cache_hits"]) == (0, len(labels))


def test_eval_reports_a_weak_model_and_skips_bad_lines(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    deep = '{"raw_text": "A", "label": "project", "x": ' + "[" * 5000 + "]" * 5000 + "}\n"
    data.write_text(
        '\ufeff{"raw_text": "Alice Chen", "label": "person"}\n'  # a byte order mark first
        "not json\n"
        '{"raw_text": "YZOS Core", "label": "project"}\n'
        '{"raw_text": "Telegram", "label": "mystery"}\n' + deep +
        # fields of the wrong type or value: the line is skipped, not sent to the model
        '{"raw_text": "Nimbus A", "label": "task", "surrounding_text": 5}\n'
        '{"raw_text": "Nimbus B", "label": "task", "suggested_kind": "elephant"}\n'
        '{"raw_text": "Nimbus C", "label": "task", "app_bundle_id": ["x"]}\n',
        encoding="utf-8",
    )
    with OpenAIDouble(lambda b: verdict("noise")) as llm:
        result = run_cli("eval", str(data), cwd=tmp_path, env=_llm_env(tmp_path, llm.base_url))
    assert result.returncode == 0, result.stderr
    assert "cases 2  accuracy 0.000" in result.stdout and llm.calls == 2
    skipped = [line.split(": ")[0] for line in result.stdout.splitlines() if "skipped" in line]
    assert skipped == [f"skipped {data}:{n}" for n in (2, 4, 5, 6, 7, 8)]
    assert f"{data}:5: nested too deeply" in result.stdout
    assert f"{data}:6: surrounding_text must be a string" in result.stdout
    assert f"{data}:7: suggested_kind must be one of" in result.stdout
    assert f"{data}:8: app_bundle_id must be a string" in result.stdout


def test_eval_of_a_dataset_with_nothing_to_score_says_so(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("\n", encoding="utf-8")
    result = run_cli("eval", str(data), cwd=tmp_path, env=_llm_env(tmp_path, "http://127.0.0.1:9"))
    assert result.returncode == 1
    assert result.stderr.strip() == "yzos-jobs: error: no case of the dataset could be scored"
