"""`eval-triage` prints a table for a person: one score or count per line, latencies in
milliseconds, never a Python dict."""

from __future__ import annotations

from yzos_jobs.entity.triage_evaluation import TriageEvalReport, render_triage_report
from yzos_jobs.inference.contract import ClassifierUsage


def test_the_report_is_a_two_column_table() -> None:
    report = TriageEvalReport(
        sessions=4,
        proposed=10,
        right=8,
        items=9,
        found=7,
        duplicates=1,
        usage=ClassifierUsage(llm_calls=4, latencies_s=(0.025, 0.030, 0.2, 0.04)),
        seconds=1.5,
    )
    lines = render_triage_report(report).splitlines()
    rows = {line[:14].strip(): line[14:].strip() for line in lines}
    assert rows["precision"] == "0.800" and rows["recall"] == "0.778"
    assert rows["sessions"] == "4" and rows["llm calls"] == "4"
    assert rows["latency"] == "p50 40 ms  p90 200 ms  p99 200 ms"
    assert not any(ch in "".join(lines) for ch in "{}'")
    assert len({line.index(value) for line, value in zip(lines, rows.values(), strict=True)}) == 1
