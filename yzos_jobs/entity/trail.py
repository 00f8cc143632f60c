"""What a decision row says, built at each call site from the verdict (or its absence) that moved
a candidate or an entity. Pure: no database, no network; `db/decision_rows.py` writes the rows.

A row's `verdict` is the verdict JSON (is_real_entity, kind, display_name, confidence, reason);
where no model judged (the structural fallback, a user), it has the same fields with what was
decided instead. `detail` adds what the call site did beyond the verdict (a reject reason, the
entity a candidate was held off by).
"""

from __future__ import annotations

from typing import Any

from yzos_jobs.db.decision_rows import DecisionRow
from yzos_jobs.entity.policy import Prepared, Promote, Reject
from yzos_jobs.inference.contract import ClassifyOutcome

# Sources whose row names the model and the prompt it was asked with.
_JUDGED = ("llm", "cache")


def verdict_fields(
    real: bool,
    kind: str | None,
    display_name: str | None,
    reason: str,
    confidence: float | None = None,
) -> dict[str, Any]:
    """A verdict's fields for a decision no model made."""
    return {
        "is_real_entity": real,
        "kind": kind,
        "display_name": display_name,
        "confidence": confidence,
        "reason": reason,
    }


def _with_detail(verdict: dict[str, Any] | None, detail: str | None) -> dict[str, Any] | None:
    if detail is None:
        return verdict
    return {**(verdict or {}), "detail": detail}


def _merged(verdict: dict[str, Any] | None, merged_from: int | None) -> dict[str, Any] | None:
    if merged_from is None:
        return verdict
    return {**(verdict or {}), "merged_from": merged_from}


_Judged = tuple[str | None, str | None, int | None]  # model, prompt version, latency
_NOT_JUDGED: _Judged = (None, None, None)


def _judged_columns(source: str, judged: ClassifyOutcome | None) -> _Judged:
    if judged is None or source not in _JUDGED:
        return _NOT_JUDGED
    latency = judged.latency_ms if source == "llm" else None  # a cached verdict cost nothing
    return (judged.model_id, judged.prompt_version, latency)


def candidate_decision(
    call_site: str,
    item: Prepared,
    outcome: str,
    entity_id: int | None,
    run_id: int | None,
    detail: str | None = None,
) -> DecisionRow:
    """The row of a promoted, merged or rejected candidate (promote loop, session end)."""
    decision, judged = item.decision, item.judged
    if isinstance(decision, Promote):
        source = decision.verdict_source
        verdict = decision.verdict or verdict_fields(
            True,
            decision.kind,
            decision.display_name,
            f"fallback: {_failure(judged)}; promoted with the suggested kind",
        )
    else:
        assert isinstance(decision, Reject)
        judged_source = judged.source if judged is not None else None
        asked = decision.verdict is not None or judged_source == "dry_run"
        source = judged_source if asked and judged_source else "fallback"
        verdict = decision.verdict or verdict_fields(False, None, None, decision.reason)
    model, version, latency = _judged_columns(source, judged)
    return DecisionRow(
        call_site,
        source,
        outcome,
        item.candidate.id,
        entity_id,
        _with_detail(verdict, detail),
        model,
        version,
        latency,
        run_id,
    )


def _failure(judged: ClassifyOutcome | None) -> str:
    if judged is None or judged.error is None:
        return "attempts exhausted"
    return f"{judged.error.__class__.__name__}: {judged.error}"[:300]


def judged_decision(
    call_site: str,
    judged: ClassifyOutcome,
    outcome: str,
    entity_id: int,
    run_id: int | None,
    detail: str | None = None,
    merged_from: int | None = None,
) -> DecisionRow:
    """The row of an entity a verdict wrote (session triage, the purge); `merged_from`: the
    entity merged into this one, which references to it are then pointed to."""
    assert judged.verdict is not None
    source = judged.source or "llm"
    model, version, latency = _judged_columns(source, judged)
    return DecisionRow(
        call_site,
        source,
        outcome,
        None,
        entity_id,
        _merged(_with_detail(judged.verdict.model_dump(), detail), merged_from),
        model,
        version,
        latency,
        run_id,
    )
