"""`yzos-jobs eval`: run the configured classifier over a labelled JSONL set and score it."""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yzos_jobs.entity.classifier import AppMetadata, Classifier, ClassifierUsage, ClassifyInput
from yzos_jobs.entity.verdict_prompt import dry_run_verdict
from yzos_jobs.kinds import ENTITY_KINDS, VERDICT_KINDS

LABELS = VERDICT_KINDS
FAILED = "error"
# What a judge that does not read the candidate scores on the same cases: answering "noise" to
# every one, and dry_run (the suggested kind accepted, no model asked). A model's accuracy means
# something only above both.
BASELINES = ("always_noise", "dry_run")
BASELINE_NAMES = {"always_noise": "always noise", "dry_run": "dry_run"}


class DatasetError(Exception):
    """A dataset line that cannot be used (reported with file and line, then skipped)."""


@dataclass(frozen=True)
class LabelledCase:
    line: int
    input: ClassifyInput
    label: str


# What a case may say of its candidate besides its text: each a string, or absent.
_TEXT_FIELDS = ("surrounding_text", "source_kind", "app_bundle_id", "app_name", "app_category")


def _case(path: Path, line_no: int, raw: str) -> LabelledCase:
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{line_no}: not JSON: {exc.msg}") from None
    except RecursionError:
        raise DatasetError(f"{path}:{line_no}: nested too deeply") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("raw_text"), str):
        raise DatasetError(f"{path}:{line_no}: needs a string raw_text")
    label = obj.get("label")
    if label not in LABELS:
        raise DatasetError(f"{path}:{line_no}: label must be one of {', '.join(LABELS)}")
    for name in _TEXT_FIELDS:
        if obj.get(name) is not None and not isinstance(obj[name], str):
            raise DatasetError(f"{path}:{line_no}: {name} must be a string")
    if obj.get("suggested_kind") not in (None, *ENTITY_KINDS):
        kinds = ", ".join(ENTITY_KINDS)
        raise DatasetError(f"{path}:{line_no}: suggested_kind must be one of {kinds}, or absent")
    bundle = obj.get("app_bundle_id")
    meta = None
    if bundle and (obj.get("app_name") or obj.get("app_category")):
        meta = AppMetadata(bundle, obj.get("app_name"), obj.get("app_category"))
    return LabelledCase(
        line=line_no,
        label=label,
        input=ClassifyInput(
            raw_text=obj["raw_text"],
            source_kind=obj.get("source_kind") or "eval",
            source_id=f"eval:{line_no}",
            suggested_kind=obj.get("suggested_kind"),
            app_bundle_id=bundle,
            app_metadata=meta,
            surrounding_text=obj.get("surrounding_text"),
        ),
    )


def read_dataset(path: Path, errors: list[str]) -> Iterator[LabelledCase]:
    # an editor may write a byte order mark first: it is no part of the first line
    with path.open(encoding="utf-8-sig") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield _case(path, line_no, raw)
            except DatasetError as exc:
                errors.append(str(exc))


@dataclass
class EvalReport:
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    cases: int = 0
    failures: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    latencies_s: list[float] = field(default_factory=list)
    skipped_lines: list[str] = field(default_factory=list)
    baseline_right: Counter[str] = field(default_factory=Counter)

    def baselines(self) -> dict[str, float]:
        """The accuracy of each trivial baseline on the same cases."""
        return {b: self.baseline_right[b] / self.cases if self.cases else 0.0 for b in BASELINES}

    def per_kind(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for kind in LABELS:
            tp = self.confusion[(kind, kind)]
            predicted = sum(n for (_, p), n in self.confusion.items() if p == kind)
            actual = sum(n for (t, _), n in self.confusion.items() if t == kind)
            precision = tp / predicted if predicted else 0.0
            recall = tp / actual if actual else 0.0
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            out[kind] = {
                "precision": precision,
                "recall": recall,
                "f1": f1,
                "support": float(actual),
            }
        return out

    def accuracy(self) -> float:
        right = sum(n for (t, p), n in self.confusion.items() if t == p)
        return right / self.cases if self.cases else 0.0

    def latency_percentiles(self) -> dict[str, float]:
        if not self.latencies_s:
            return {}
        ordered = sorted(self.latencies_s)
        if len(ordered) == 1:
            return {"p50": ordered[0], "p90": ordered[0], "p99": ordered[0]}
        cuts = statistics.quantiles(ordered, n=100, method="inclusive")
        return {"p50": cuts[49], "p90": cuts[89], "p99": cuts[98]}

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "accuracy": self.accuracy(),
            "baselines": self.baselines(),
            "per_kind": self.per_kind(),
            "confusion": {f"{t}->{p}": n for (t, p), n in sorted(self.confusion.items())},
            "failures": self.failures,
            "llm_calls": self.llm_calls,
            "cache_hits": self.cache_hits,
            "latency_s": self.latency_percentiles(),
            "seconds": self.seconds,
            "skipped_lines": self.skipped_lines,
        }


def predicted_kind(outcome_kind: str | None, is_real: bool) -> str:
    if outcome_kind is None:
        return "noise"
    return outcome_kind if is_real or outcome_kind in ("app", "noise") else "noise"


def _baselines_right(case: LabelledCase) -> list[str]:
    """The baselines that get this case right."""
    dry_run = dry_run_verdict(case.input)
    answers = {
        "always_noise": "noise",
        "dry_run": predicted_kind(dry_run.kind, dry_run.is_real_entity),
    }
    return [b for b in BASELINES if answers[b] == case.label]


def evaluate(classifier: Classifier, path: Path, batch_size: int = 200) -> EvalReport:
    report = EvalReport()
    started = time.monotonic()
    usage = ClassifierUsage()
    batch: list[LabelledCase] = []

    def flush() -> None:
        nonlocal usage
        result = classifier.classify_many([c.input for c in batch])
        usage += result.usage
        for case, outcome in zip(batch, result.outcomes, strict=True):
            if outcome.verdict is None:
                report.failures += 1
                predicted = FAILED
            else:
                predicted = predicted_kind(outcome.verdict.kind, outcome.verdict.is_real_entity)
            report.confusion[(case.label, predicted)] += 1
            report.baseline_right.update(_baselines_right(case))
            report.cases += 1
        batch.clear()

    for case in read_dataset(path, report.skipped_lines):
        batch.append(case)
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()
    report.llm_calls = usage.llm_calls
    report.cache_hits = usage.cache_hits
    report.latencies_s = list(usage.latencies_s)
    report.seconds = time.monotonic() - started
    return report


def render_report(report: EvalReport) -> str:
    lines = [
        f"cases {report.cases}  accuracy {report.accuracy():.3f}  failures {report.failures}",
        "baselines on the same cases: "
        + "  ".join(f"{BASELINE_NAMES[b]} {a:.3f}" for b, a in report.baselines().items()),
    ]
    lines.append(f"{'kind':<8} {'precision':>9} {'recall':>7} {'f1':>6} {'support':>8}")
    for kind, m in report.per_kind().items():
        lines.append(
            f"{kind:<8} {m['precision']:>9.3f} {m['recall']:>7.3f} {m['f1']:>6.3f} "
            f"{int(m['support']):>8}"
        )
    columns = [*LABELS, FAILED]
    lines.append("")
    lines.append("confusion (rows: label, columns: predicted)")
    lines.append(f"{'':<8} " + " ".join(f"{c:>7}" for c in columns))
    for label in LABELS:
        row = " ".join(f"{report.confusion[(label, c)]:>7}" for c in columns)
        lines.append(f"{label:<8} {row}")
    lat = report.latency_percentiles()
    lat_text = "  ".join(f"{k} {v * 1000:.0f} ms" for k, v in lat.items()) or "no LLM calls"
    lines.append("")
    lines.append(
        f"llm calls {report.llm_calls}  cache hits {report.cache_hits}  latency {lat_text}  "
        f"wall {report.seconds:.2f} s"
    )
    for skipped in report.skipped_lines:
        lines.append(f"skipped {skipped}")
    return "\n".join(lines)
