"""`yzos-jobs eval-triage`: how well the configured model triages sessions a person labelled.

The dataset is the real corpus's labels format (tests/fixtures/real/README.md): one JSON line per
session with its source file (relative to the dataset's folder), its format, its key (aider: the
session's start; Claude Code: the session id) and the work items a person would name, each with
the source lines it rests on. Each session's digest is rebuilt from its source file by the
importer's own parser and triaged as `entity_promote` would (no open tasks offered). A proposed
task is right when it rests on a line of some labelled item; an item is found when some proposed
task rests on one of its lines; a proposed task is a duplicate when the item it found was
already found by another task of the session.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yzos_jobs.config import Settings
from yzos_jobs.entity.triage_call import TriageReply, ask_triage
from yzos_jobs.inference.contract import ClassifierUsage, Judge
from yzos_jobs.inference.errors import ClassifierError

FORMATS = ("aider", "claude-code")


class TriageDatasetError(Exception):
    """A dataset line that cannot be used (reported with file and line, then skipped)."""


@dataclass(frozen=True)
class LabelledSession:
    where: str
    source: Path
    format: str
    key: str
    items: tuple[frozenset[int], ...]  # each labelled work item's lines
    line: int | None = None  # an aider session's header line, where the label gives it


@dataclass
class TriageEvalReport:
    sessions: int = 0
    proposed: int = 0
    right: int = 0
    items: int = 0
    found: int = 0
    duplicates: int = 0
    failures: int = 0
    missing: list[str] = field(default_factory=list)  # sessions whose digest could not be built
    skipped_lines: list[str] = field(default_factory=list)
    usage: ClassifierUsage = field(default_factory=ClassifierUsage)
    seconds: float = 0.0

    def _ratio(self, part: int, whole: int) -> float:
        return part / whole if whole else 0.0

    def as_dict(self) -> dict[str, Any]:
        latencies = sorted(self.usage.latencies_s)
        pct = (
            {
                f"p{q}": round(latencies[min(len(latencies) - 1, len(latencies) * q // 100)], 3)
                for q in (50, 90, 99)
            }
            if latencies
            else {}
        )
        return {
            "sessions": self.sessions,
            "precision": round(self._ratio(self.right, self.proposed), 3),
            "recall": round(self._ratio(self.found, self.items), 3),
            "duplicate_rate": round(self._ratio(self.duplicates, self.proposed), 3),
            "proposed_tasks": self.proposed,
            "labelled_items": self.items,
            "failures": self.failures,
            "missing_sessions": self.missing,
            "llm_calls": self.usage.llm_calls,
            "cache_hits": self.usage.cache_hits,
            "latency_s": pct,
            "mean_latency_s": round(statistics.fmean(latencies), 3) if latencies else None,
            "seconds": round(self.seconds, 3),
            "skipped_lines": self.skipped_lines,
        }


def _labelled(dataset: Path, line_no: int, raw: str) -> LabelledSession:
    where = f"{dataset}:{line_no}"
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TriageDatasetError(f"{where}: not JSON: {exc.msg}") from None
    except RecursionError:
        raise TriageDatasetError(f"{where}: nested too deeply") from None
    if not isinstance(obj, dict) or obj.get("format") not in FORMATS:
        raise TriageDatasetError(f"{where}: format must be one of {', '.join(FORMATS)}")
    key = obj.get("session_start") if obj["format"] == "aider" else obj.get("session_id")
    items = obj.get("items")
    if not isinstance(obj.get("source"), str) or not isinstance(key, str):
        raise TriageDatasetError(f"{where}: needs source and the session's key")
    if not isinstance(items, list) or not all(
        isinstance(i, dict) and isinstance(i.get("lines"), list) for i in items
    ):
        raise TriageDatasetError(f"{where}: items must be a list of objects with lines")
    lines = tuple(
        frozenset(n for n in i["lines"] if isinstance(n, int))
        for i in items
        if i.get("kind", "task") == "task"
    )
    line = obj.get("session_line")
    line = line if isinstance(line, int) and not isinstance(line, bool) else None
    source = dataset.parent / obj["source"]
    return LabelledSession(where, source, obj["format"], key, lines, line)


def read_triage_dataset(dataset: Path, skipped: list[str]) -> Iterator[LabelledSession]:
    # an editor may write a byte order mark first: it is no part of the first line
    with dataset.open(encoding="utf-8-sig") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield _labelled(dataset, line_no, raw)
            except TriageDatasetError as exc:
                skipped.append(str(exc))


def score(report: TriageEvalReport, labelled: LabelledSession, reply: TriageReply) -> None:
    report.sessions += 1
    report.items += len(labelled.items)
    found: set[int] = set()
    for task in reply.tasks:
        report.proposed += 1
        hits = {i for i, lines in enumerate(labelled.items) if lines & set(task.lines)}
        if hits:
            report.right += 1
            if hits <= found:
                report.duplicates += 1
            found |= hits
    report.found += len(found)


# The (key, payload, header line) digests of every session of a source file in a format
# ("aider", "claude-code"), as the importers queue them: `importers/digests.py`'s
# `session_digests`, handed in because the importers sit above the judgement.
DigestReader = Callable[[Path, str], Iterable[tuple[str, dict[str, Any], int | None]]]


def evaluate_triage(
    judge: Judge,
    settings: Settings,
    dataset: Path,
    read_digests: DigestReader,
    *,
    use_cache: bool = True,
) -> TriageEvalReport:
    report = TriageEvalReport()
    started = time.monotonic()
    labelled = list(read_triage_dataset(dataset, report.skipped_lines))
    # per file: a session's payload by its key and header line, and by its key alone (the first
    # session with that key: a label without `session_line`)
    digests: dict[tuple[Path, str], dict[tuple[str, int | None], dict[str, Any]]] = {}
    jobs: list[tuple[LabelledSession, dict[str, Any]]] = []
    # a source that cannot be read is told once, on the first line naming it, with how many
    # other lines name it
    unreadable: dict[tuple[Path, str], tuple[int, int]] = {}  # (its skipped line, lines more)
    for session in labelled:
        per_file = (session.source, session.format)
        if per_file in unreadable:
            at, more = unreadable[per_file]
            unreadable[per_file] = (at, more + 1)
            continue
        if per_file not in digests:
            try:
                built = list(read_digests(session.source, session.format))
            except OSError as exc:
                why = exc.strerror or str(exc) or exc.__class__.__name__  # "not a regular file"
                report.skipped_lines.append(f"{session.where}: {session.source}: {why}")
                unreadable[per_file] = (len(report.skipped_lines) - 1, 0)
                continue
            by_key: dict[tuple[str, int | None], dict[str, Any]] = {}
            for key, payload, line in built:
                by_key[(key, line)] = payload
                by_key.setdefault((key, None), payload)
            digests[per_file] = by_key
        found = digests[per_file]
        # a header line that names no session of that start (miscounted): the start alone
        payload = found.get((session.key, session.line))
        if payload is None:
            payload = found.get((session.key, None))
        if payload is None:
            report.missing.append(f"{session.where}: no session {session.key} in its source")
        else:
            jobs.append((session, payload))
    for at, more in unreadable.values():
        if more:
            labels = "label" if more == 1 else "labels"
            report.skipped_lines[at] += f" (and {more} more {labels} naming it)"
    breaker = judge.new_breaker()

    def triage(job: tuple[LabelledSession, dict[str, Any]]) -> Any:
        try:
            return ask_triage(judge, settings.triage, job[1], (), breaker, use_cache=use_cache)
        except ClassifierError as exc:
            return exc

    width = max(1, settings.llm.max_concurrency)
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="eval-triage") as pool:
        for (session, _), result in zip(jobs, pool.map(triage, jobs), strict=True):
            if isinstance(result, ClassifierError):
                report.failures += 1
                report.sessions += 1
                report.items += len(session.items)
                continue
            reply, usage = result
            report.usage += usage
            score(report, session, reply)
    report.seconds = time.monotonic() - started
    return report


def render_triage_report(report: TriageEvalReport) -> str:
    """A two-column table: the scores, the counts, the latency percentiles in milliseconds."""
    d = report.as_dict()
    latency = "  ".join(f"{k} {v * 1000:.0f} ms" for k, v in d["latency_s"].items())
    rows = [
        ("sessions", str(d["sessions"])),
        ("precision", f"{d['precision']:.3f}"),
        ("recall", f"{d['recall']:.3f}"),
        ("duplicate rate", f"{d['duplicate_rate']:.3f}"),
        ("proposed tasks", str(d["proposed_tasks"])),
        ("labelled items", str(d["labelled_items"])),
        ("failures", str(d["failures"])),
        ("llm calls", str(d["llm_calls"])),
        ("cache hits", str(d["cache_hits"])),
        ("latency", latency or "no LLM calls"),
        ("wall", f"{d['seconds']:.2f} s"),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {value}" for name, value in rows]
    lines += [f"missing: {m}" for m in report.missing[:20]]
    lines += [f"skipped: {s}" for s in report.skipped_lines[:20]]
    return "\n".join(lines)
