"""Counts summed across batches and runs keep every count, and a job's record names the same keys
as before they were summed."""

from __future__ import annotations

from yzos_jobs.entity.updater import PromoteStats
from yzos_jobs.importers.records import ImportRecordError, ImportStats
from yzos_jobs.inference.contract import ClassifierUsage
from yzos_jobs.maintain.runner import RunResult
from yzos_jobs.progress import render_counts
from yzos_jobs.supply.triage_apply import TriageRun


def test_promote_stats_sum_field_by_field() -> None:
    total = PromoteStats(promoted=2, rejected=1)
    total.add(PromoteStats(promoted=3, sightings=4, lost=1))
    assert (total.promoted, total.rejected, total.sightings, total.lost) == (5, 1, 4, 1)


def test_usage_sums_into_a_new_value_latencies_included() -> None:
    a = ClassifierUsage(llm_calls=2, seconds=1.5, latencies_s=(0.5, 1.0))
    b = ClassifierUsage(llm_calls=1, cache_hits=3, seconds=0.25, latencies_s=(0.25,))
    total = a + b
    assert (total.llm_calls, total.cache_hits, total.seconds) == (3, 3, 1.75)
    assert total.latencies_s == (0.5, 1.0, 0.25) and a.llm_calls == 2
    assert total.counts() == {
        "llm_calls": 3,
        "cache_hits": 3,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "unknown_usage_calls": 0,
    }


def test_triage_counts_are_prefixed_and_leave_the_usage_out() -> None:
    run = TriageRun(triaged=1, created=2)
    run.add(TriageRun(triaged=1, usage=ClassifierUsage(llm_calls=5)))
    assert run.usage.llm_calls == 5
    assert run.counts() == {
        "triage_triaged": 2,
        "triage_retried": 0,
        "triage_exhausted": 0,
        "triage_lost": 0,
        "triage_created": 2,
        "triage_merged": 0,
        "triage_rejected": 0,
        "triage_evidence": 0,
        "triage_sightings": 0,
    }


def test_import_stats_merge_counts_and_keep_messages_bounded() -> None:
    total = ImportStats(candidates=1)
    for _ in range(1001):
        total.error(ImportRecordError("f.jsonl:1", "bad"))
    other = ImportStats(candidates=2, sessions=1)
    other.error(ImportRecordError("g.jsonl:2", "bad"))
    total.merge(other)
    counts = total.counts()
    assert (counts["candidates"], counts["sessions"], counts["errors"]) == (3, 1, 1002)
    assert len(total.error_messages) == 1000
    assert "error_messages" not in counts and "notes" not in counts


def test_a_run_that_failed_before_counting_says_only_that_it_failed() -> None:
    failed = RunResult("import_sources", "once:1", "failed", {}, "database or disk is full")
    assert render_counts(failed) == "import_sources failed: database or disk is full"
    idle = RunResult("entity_promote", "once:2", "succeeded", {"promoted": 0})
    assert render_counts(idle) == "entity_promote succeeded  nothing to do"
    partly = RunResult("import_sources", "once:3", "failed", {"records": 4}, "disk full")
    assert render_counts(partly) == "import_sources failed: disk full  records 4"


def test_records_an_import_met_again_read_as_copies_not_as_skipped() -> None:
    imported = RunResult("import_sources", "run:1", "succeeded", {"records": 3, "skipped": 27})
    assert render_counts(imported) == "import_sources succeeded  copies 27  records 3"
    # another job's `skipped` is its own (candidates handed back)
    promoted = RunResult("entity_promote", "run:2", "succeeded", {"skipped": 2})
    assert render_counts(promoted) == "entity_promote succeeded  skipped 2"
