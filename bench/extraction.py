"""Benchmark: what the structural extraction makes of real activity logs, scored as a person
would score it against the labels: per source (aider, Claude Code) and per split (the labels'
`tune` and `heldout`, reported as tuning and held-out; a label row without `split` is tuning).

    .venv/bin/python bench/extraction.py [--corpus DIR] [--labels FILE ...] [--synthetic-mb 20]
        [--no-speed] [--no-idle-closes]

`--corpus` is a labelled corpus laid out as tests/fixtures/real is (the default; see its
README.md); `--labels` its label files (default: every `labels*.jsonl` in it). Each file is
imported with the real CLI (`yzos-jobs --config config.toml import …`, the shipped configuration:
dry_run) into a fresh SQLite database; in dry_run, every closed session's candidates are promoted
inline. Files are laid out as where they were written: an aider history at `<repository>/<its
path in the repository>` (the repository named as on GitHub), a Claude Code transcript at
`projects/<encoded cwd>/<session>.jsonl`; their modification time is set two days back, so their
sessions count as closed.

A labelled item is one title of one file: the labels write the same work once per session it
continues in, and the same work across sessions is meant to be one task. A task is a task entity
the import made; its evidence lines are the lines its candidates rest on
and the lines their context names (`evidence lines: …`). A task matches the labelled item with
which it shares the most evidence lines (none if it shares none). Figures:
- tasks per labelled item: tasks made / labelled items;
- distinct precision: labelled items some task matches / tasks made (each item credited once);
- recall: share of labelled items some task matches; beside it, the share the labelled lines let
  any extraction match (an item whose lines all belong to an earlier item of the file as well,
  such as several items asked for in one request, can never be a task's best match), and how
  many of the items missed no task names at all (the others share a task with another item);
- projects right: share of labelled sessions whose activity session's repository has a project
  entity whose display name is exactly the label's `project`; beside it, the share of sessions
  whose file names that project anywhere, in its text or the path it was laid out at (where it
  names it nowhere, the label took the source repository's name, which no extraction can find);
- for Claude Code, the same figures with each transcript read as a daemon left running reads
  it: imported up to each pause between records longer than the shipped config's
  `importers.session_idle_s` (where the session is closed as idle), and on from there at the
  next (`--no-idle-closes` skips them; a file with no such pause counts as read at once);
- B-cubed F1 of the labelled lines grouped into tasks (a line no task names is a group of its
  own) against their grouping into items;
- import speed of the whole corpus in one process, on SQLite and on PostgreSQL (MB/s, with and
  without the command's start-up, the fastest of three imports of an empty directory) and peak
  RSS, beside the synthetic history of bench/ingest.py (--synthetic-mb, 0 to skip).

Targets on the held-out split: tasks per item <= 1.5, distinct precision >= 0.6, recall >= 0.85,
projects right >= 0.95.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from itertools import takewhile
from pathlib import Path
from typing import Any

import _support

if str(_support.REPO) not in sys.path:
    sys.path.insert(0, str(_support.REPO))

from sqlalchemy import select

from yzos_jobs.db.connection import create_db_engine, make_session_factory
from yzos_jobs.db.entities import project_key
from yzos_jobs.db.models import ActivitySession, Entity, EntityCandidate

REAL = _support.REPO / "tests" / "fixtures" / "real"
CONFIG = _support.REPO / "config.toml"
AT_REST_S = 2 * 86400
IDLE_S = float(tomllib.loads(CONFIG.read_text(encoding="utf-8"))["importers"]["session_idle_s"])


@dataclass
class Tally:
    tasks: int = 0
    items: int = 0
    matched_items: int = 0
    separable_items: int = 0  # items some set of tasks could match (see `separable`)
    unseen_items: int = 0  # items none of whose lines any task names
    sessions: int = 0
    projects_right: int = 0
    projects_named: int = 0  # sessions whose file names the labelled project somewhere
    bcubed_p: float = 0.0  # sums over labelled lines
    bcubed_r: float = 0.0
    lines: int = 0
    wrong_projects: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in (
            "tasks",
            "items",
            "matched_items",
            "separable_items",
            "unseen_items",
            "sessions",
            "projects_right",
            "projects_named",
            "lines",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.bcubed_p += other.bcubed_p
        self.bcubed_r += other.bcubed_r
        self.wrong_projects += other.wrong_projects


# The labels' splits (`tune`, `heldout`), as the report names them; the names the labels once
# used are read as the same splits.
SPLIT_NAMES = {"tune": "tuning", "heldout": "held-out"}
_OLD_SPLITS = {"tuning": "tune", "held-out": "heldout"}


def split_of(row: dict[str, Any]) -> str:
    """The report's name of a row's split (a row with none is tuning)."""
    split = str(row.get("split") or "tune")
    split = _OLD_SPLITS.get(split, split)
    return SPLIT_NAMES.get(split, split)


def labels(files: list[Path]) -> dict[str, list[dict[str, Any]]]:
    """Label rows by source file."""
    by_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                by_source[row["source"]].append(row)
    return by_source


def at_rest(path: Path) -> None:
    then = time.time() - AT_REST_S
    os.utime(path, (then, then))


def laid_out(source: str, root: Path) -> Path:
    """Where `lay_out_aider` or `lay_out_claude` put a source's file."""
    if source.startswith("claude-code/"):
        return root / "projects" / source.split("/", 1)[1]
    _, rest = source.split("/", 1) if "/" in source else ("", source)
    owner_repo, _, inside = rest.partition("/")
    return root / owner_repo.split("__", 1)[-1] / inside


def lay_out_aider(corpus: Path, source: str, root: Path) -> Path:
    """aider/<owner>__<repo>/<path> → <root>/<repo>/<path>; a source laid out otherwise keeps
    its path below its first folder (a file named alone: its name)."""
    target = laid_out(source, root)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(corpus / source, target)
    at_rest(target)
    return target


def lay_out_claude(corpus: Path, source: str, root: Path) -> Path:
    """claude-code/<encoded cwd>/<session>.jsonl (and its <session>/subagents/) → root/projects."""
    target = laid_out(source, root)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(corpus / source, target)
    subagents = (corpus / source).with_suffix("")
    if subagents.is_dir():
        shutil.copytree(subagents, target.with_suffix(""))
    for path in [target, *target.with_suffix("").rglob("*.jsonl")]:
        at_rest(path)
    return root / "projects"


def _stamp(raw: bytes) -> float | None:
    """A record's `timestamp` in seconds, or None."""
    try:
        value = json.loads(raw).get("timestamp")
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except (ValueError, AttributeError, TypeError):
        return None


def idle_closes(records: list[bytes]) -> list[tuple[int, float]]:
    """(records before it, the time of the last of them) at each pause between records longer
    than IDLE_S: where a daemon left running closes the session as idle."""
    closes: list[tuple[int, float]] = []
    last: float | None = None
    for n, raw in enumerate(records):
        if (at := _stamp(raw)) is None:
            continue
        if last is not None and at - last > IDLE_S:
            closes.append((n, last))
        last = at
    return closes


def _written_by(records: list[bytes], until: float) -> list[bytes]:
    """The records before the first one stamped after `until`."""

    def before(raw: bytes) -> bool:
        at = _stamp(raw)
        return at is None or at <= until

    return list(takewhile(before, records))


def import_as_daemon(corpus: Path, source: str, root: Path, db_url: str) -> int:
    """Import a Claude Code transcript (with its subagents') as a daemon left running reads it:
    as far as each idle close, then on to the next, then whole. Returns the closes."""
    lay_out_claude(corpus, source, root)
    main = laid_out(source, root)
    records = main.read_bytes().splitlines(keepends=True)
    subagents = {
        path: path.read_bytes().splitlines(keepends=True)
        for path in main.with_suffix("").rglob("*.jsonl")
    }
    closes = idle_closes(records)
    for count, until in [*closes, (len(records), math.inf)]:
        main.write_bytes(b"".join(records[:count]))
        for path, theirs in subagents.items():
            path.write_bytes(b"".join(_written_by(theirs, until)))
        for path in [main, *subagents]:
            at_rest(path)
        import_cli("claude-code", root / "projects", db_url)
    return len(closes)


def import_cli(importer: str, path: Path, db_url: str) -> None:
    env = _support.cli_env(db_url)
    _support.run_measured(["--config", str(CONFIG), "import", importer, str(path)], env)


def session_of(row: dict[str, Any], sessions: list[ActivitySession]) -> ActivitySession | None:
    if row["format"] == "aider":
        start = row["session_start"].replace("-", "").replace(" ", "T").replace(":", "")
        found = [s for s in sessions if s.external_id.split(":", 1)[0] == start]
    else:
        found = [s for s in sessions if s.external_id.split(":", 1)[0] == row["session_id"]]
    return found[0] if found else None


_EVIDENCE = re.compile(r"^evidence lines: ([\d, ]+)$", re.MULTILINE)


def evidence(candidate: EntityCandidate) -> set[int]:
    lines = {candidate.source_line} if candidate.source_line is not None else set()
    m = _EVIDENCE.search(candidate.surrounding_text or "")
    if m:
        lines.update(int(n) for n in m.group(1).split(",") if n.strip().isdigit())
    return lines


def task_lines(db_url: str) -> tuple[dict[int, set[int]], list[ActivitySession], dict[str, str]]:
    """(evidence lines per task entity, activity sessions, project names by project key)."""
    engine = create_db_engine(db_url)
    with make_session_factory(engine)() as db:
        tasks = {e.id: set[int]() for e in db.scalars(select(Entity).where(Entity.kind == "task"))}
        for c in db.scalars(
            select(EntityCandidate).where(
                EntityCandidate.suggested_kind == "task", EntityCandidate.source_kind == "ai_tool"
            )
        ):
            if c.entity_id in tasks:
                tasks[c.entity_id] |= evidence(c)
        sessions = list(db.scalars(select(ActivitySession)))
        projects = {
            e.project_key: e.display_name
            for e in db.scalars(select(Entity).where(Entity.kind == "project"))
        }
    engine.dispose()
    return tasks, sessions, projects


def measure_file(rows: list[dict[str, Any]], db_url: str, file: Path, laid_at: Path) -> Tally:
    """The figures of one file (the corpus is split by file), laid out at `laid_at`."""
    tally = Tally()
    text = f"{laid_at}\n{file.read_text(encoding='utf-8', errors='replace')}".casefold()
    tasks, sessions, projects = task_lines(db_url)
    by_title: dict[str, set[int]] = {}
    for row in rows:
        for item in row["items"]:
            lines = {n for n in item["lines"] if isinstance(n, int)}
            by_title.setdefault(item["title"], set()).update(lines)
        session = session_of(row, sessions)
        shown = projects.get(project_key(session.project_path)) if session else None
        tally.sessions += 1
        tally.projects_named += row["project"].casefold() in text
        if shown == row["project"]:
            tally.projects_right += 1
        else:
            tally.wrong_projects.append(f"{row['source']} {row['session_start']}: {shown!r}")
    item_lines = list(by_title.values())
    tally.items = len(item_lines)
    tally.tasks = len(tasks)
    matched: set[int] = set()
    for lines in tasks.values():
        best = max(range(len(item_lines)), key=lambda i: len(item_lines[i] & lines), default=None)
        if best is not None and item_lines[best] & lines:
            matched.add(best)
    tally.matched_items = len(matched)
    tally.separable_items = separable(item_lines)
    named = set().union(*tasks.values()) if tasks else set()
    tally.unseen_items = sum(1 for lines in item_lines if not lines & named)
    _bcubed(tally, item_lines, list(tasks.values()))
    return tally


def separable(items: list[set[int]]) -> int:
    """How many items some tasks could match at once: a task matches the first item with which
    it shares the most lines, so an item whose lines all belong to an earlier item too (several
    items asked for in one request, or implemented by one commit) is never matched. Each other
    item is matched by a task whose evidence is its own lines."""
    return sum(
        1
        for i, lines in enumerate(items)
        if lines and not any(lines <= earlier for earlier in items[:i])
    )


def _bcubed(tally: Tally, items: list[set[int]], tasks: list[set[int]]) -> None:
    """Sum the per-line B-cubed precision and recall over the labelled lines."""
    gold: dict[int, int] = {}
    for i, lines in enumerate(items):
        for n in lines:
            gold.setdefault(n, i)
    found: dict[int, int] = {}
    for t, lines in enumerate(tasks):
        for n in lines:
            if n in gold:
                found.setdefault(n, t)
    for n, i in gold.items():
        t = found.get(n)
        same_task = {m for m, u in found.items() if u == t} if t is not None else {n}
        same_item = {m for m, j in gold.items() if j == i}
        both = len(same_task & same_item)
        tally.bcubed_p += both / len(same_task)
        tally.bcubed_r += both / len(same_item)
        tally.lines += 1


def ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "n/a"


def report(name: str, tally: Tally) -> None:
    print(f"{name}: {tally.sessions} labelled sessions, {tally.items} labelled items")
    if not tally.sessions:
        return
    p = tally.bcubed_p / tally.lines if tally.lines else 0.0
    r = tally.bcubed_r / tally.lines if tally.lines else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    print(
        f"  tasks per labelled item {ratio(tally.tasks, tally.items)} "
        f"({tally.tasks} tasks; target <= 1.5)"
    )
    print(
        f"  distinct precision {ratio(tally.matched_items, tally.tasks)} "
        f"({tally.matched_items} items matched; target >= 0.6)"
    )
    print(
        f"  recall {ratio(tally.matched_items, tally.items)} (target >= 0.85; "
        f"the labelled lines let {ratio(tally.separable_items, tally.items)} be matched)"
    )
    missed = tally.items - tally.matched_items
    print(
        f"    {missed} items missed: {tally.unseen_items} named by no task, "
        f"{missed - tally.unseen_items} only by a task matched to another item"
    )
    print(
        f"  projects right {ratio(tally.projects_right, tally.sessions)} "
        f"({tally.projects_right} of {tally.sessions} sessions; target >= 0.95; "
        f"the files name it in {ratio(tally.projects_named, tally.sessions)})"
    )
    print(f"  B-cubed F1 of evidence lines {f1:.2f} (precision {p:.2f}, recall {r:.2f})")
    if "(tuning)" in name:  # the other splits' files are scored, never looked into
        for wrong in tally.wrong_projects:
            print(f"    wrong project: {wrong}")


def speed(name: str, importer: str, paths: list[Path], work: Path, postgres: bool) -> None:
    """The corpus imported in one process into a new database, against the same command on an
    empty directory (its start-up, the fastest of three) on another new database."""
    size = sum(f.stat().st_size for p in paths for f in [p, *p.rglob("*")] if f.is_file())
    empty = work / f"empty-{importer}"
    empty.mkdir(exist_ok=True)
    args = ["--config", str(CONFIG), "import", importer]
    with _support.new_database(work, f"idle-{importer}", postgres) as url:
        env = _support.cli_env(url)
        _support.run_measured([*args, str(empty)], env)  # a SQLite database migrates here
        idle_s = min(_support.run_measured([*args, str(empty)], env)[0] for _ in range(3))
    with _support.new_database(work, f"speed-{importer}", postgres) as url:
        env = _support.cli_env(url)
        _support.run_measured([*args, str(empty)], env)
        seconds, rss, _ = _support.run_measured([*args, *map(str, paths)], env)
    mb = size / 2**20
    own = max(seconds - idle_s, 1e-6)
    print(
        f"  {name} corpus {mb:.2f} MB in {seconds:.2f} s: {mb / seconds:.2f} MB/s with start-up, "
        f"{mb / own:.2f} MB/s without ({idle_s:.2f} s start-up); peak RSS {rss:.0f} MB"
    )


SOURCES = (
    ("aider", "aider", lay_out_aider),
    ("claude-code", "claude-code", lay_out_claude),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=REAL)
    parser.add_argument("--labels", type=Path, action="append")
    parser.add_argument("--synthetic-mb", type=float, default=20.0)
    parser.add_argument("--no-speed", action="store_true", help="the scores only")
    parser.add_argument(
        "--no-idle-closes",
        action="store_true",
        help="Claude Code transcripts read at once only, not also as a daemon closes them",
    )
    args = parser.parse_args()
    corpus: Path = args.corpus.resolve()
    by_source = labels(args.labels or sorted(corpus.glob("labels*.jsonl")))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for fmt, importer, lay_out in SOURCES:
            totals: dict[str, Tally] = defaultdict(Tally)
            as_daemon: dict[str, Tally] = defaultdict(Tally)
            daemon = fmt == "claude-code" and not args.no_idle_closes
            sources = sorted(s for s, rows in by_source.items() if rows[0]["format"] == fmt)
            for n, source in enumerate(sources):
                rows = by_source[source]
                root = work / f"{importer}-{n}"
                path = lay_out(corpus, source, root)
                db_url = f"sqlite:///{root / 'yzos.db'}"
                import_cli(importer, path, db_url)
                laid_at = laid_out(source, Path())
                tally = measure_file(rows, db_url, corpus / source, laid_at)
                totals[split_of(rows[0])].add(tally)
                if daemon:
                    root = work / f"{importer}-{n}-daemon"
                    db_url = f"sqlite:///{root / 'yzos.db'}"
                    if import_as_daemon(corpus, source, root, db_url):
                        tally = measure_file(rows, db_url, corpus / source, laid_at)
                    as_daemon[split_of(rows[0])].add(tally)
            # tuning and held-out first, then any other split the labels name ("outside")
            for split in ("tuning", "held-out", *sorted(set(totals) - {"tuning", "held-out"})):
                report(f"{fmt} ({split})", totals[split])
                if daemon:
                    report(f"{fmt} ({split}, closed at each idle pause)", as_daemon[split])
        if args.no_speed:
            return
        speed_corpus = work / "speed"
        histories = [
            lay_out_aider(corpus, s, speed_corpus / "aider")
            for s, rows in by_source.items()
            if rows[0]["format"] == "aider"
        ]
        for s, rows in by_source.items():
            if rows[0]["format"] == "claude-code":
                lay_out_claude(corpus, s, speed_corpus / "claude")
        claude = speed_corpus / "claude" / "projects"
        for backend, postgres in (("SQLite", False), ("PostgreSQL", True)):
            print(f"import speed on {backend} (dry_run, inline promote), one process per corpus:")
            speed("aider", "aider", histories, work, postgres)
            if claude.is_dir():
                speed("Claude Code", "claude-code", [claude], work, postgres)
        if args.synthetic_mb > 0:
            synthetic = subprocess.run(
                [sys.executable, "bench/ingest.py", "--mb", str(args.synthetic_mb)],
                cwd=_support.REPO,
                env={**os.environ, "PYTHONPATH": str(_support.REPO)},
                capture_output=True,
                text=True,
            )
            first = [line for line in synthetic.stdout.splitlines() if "first import" in line]
            shown = first[0].strip() if first else synthetic.stderr.strip()[-300:]
            print(f"  synthetic history (bench/ingest.py --mb {args.synthetic_mb:g}): {shown}")


if __name__ == "__main__":
    main()
