"""Benchmark: what the structural extraction makes of real activity logs (the real corpus,
tests/fixtures/real), per source (aider, Claude Code), against the labels.

Each corpus file is imported with the real CLI (`yzos-jobs --config config.toml import …`, the
shipped configuration: dry_run) into a fresh SQLite database; in dry_run, every closed session's
candidates are promoted inline. Files are laid out as where they were written: an aider history
at `<repository>/<its path in the repository>` (the repository named as on GitHub, the directory
the history sits in when nothing else shows the project), a Claude Code transcript at
`projects/<encoded cwd>/<session>.jsonl`; their modification time is set two days back, so their
sessions count as closed.

Figures, per source:
- precision: share of task candidates whose source line is one of some labelled item's lines;
- recall: share of labelled items with at least one candidate on one of their lines;
- candidates per labelled item: task candidates / labelled items (and, among matching
  candidates only, per matched item);
- projects right: share of labelled sessions whose activity session's repository has a project
  entity whose display name is exactly the label's `project` (case-sensitive string equality);
- import speed of the whole corpus in one process, on SQLite and on PostgreSQL (MB/s, with and
  without the command's start-up, the fastest of three imports of an empty directory) and peak
  RSS, beside the synthetic history of bench/ingest.py (--synthetic-mb, 0 to skip).

Targets: precision >= 0.8, recall >= 0.9, <= 1.5 candidates per item, every project
right.

    .venv/bin/python bench/extraction.py [--synthetic-mb 20]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
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


@dataclass
class Tally:
    candidates: int = 0
    on_item_lines: int = 0
    items: int = 0
    matched_items: int = 0
    sessions: int = 0
    projects_right: int = 0
    wrong_projects: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("candidates", "on_item_lines", "items", "matched_items"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.sessions += other.sessions
        self.projects_right += other.projects_right
        self.wrong_projects += other.wrong_projects


def labels(name: str) -> dict[str, list[dict[str, Any]]]:
    by_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in (REAL / name).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            by_source[row["source"]].append(row)
    return by_source


def at_rest(path: Path) -> None:
    then = time.time() - AT_REST_S
    os.utime(path, (then, then))


def lay_out_aider(source: str, root: Path) -> Path:
    """aider/<owner>__<repo>/<path> → <root>/<repo>/<path>."""
    _, owner_repo, inside = source.split("/", 2)
    target = root / owner_repo.split("__", 1)[1] / inside
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REAL / source, target)
    at_rest(target)
    return target


def lay_out_claude(source: str, root: Path) -> Path:
    """claude-code/<encoded cwd>/<session>.jsonl (and its <session>/subagents/) → root/projects."""
    target = root / "projects" / source.split("/", 1)[1]
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REAL / source, target)
    subagents = (REAL / source).with_suffix("")
    if subagents.is_dir():
        shutil.copytree(subagents, target.with_suffix(""))
    for path in [target, *target.with_suffix("").rglob("*.jsonl")]:
        at_rest(path)
    return root / "projects"


def import_cli(importer: str, path: Path, db_url: str) -> None:
    env = _support.cli_env(db_url)
    _support.run_measured(["--config", str(CONFIG), "import", importer, str(path)], env)


def session_of(row: dict[str, Any], sessions: list[ActivitySession]) -> ActivitySession | None:
    if row["format"] == "aider":
        start = row["session_start"].replace("-", "").replace(" ", "T").replace(":", "")
        found = [s for s in sessions if s.external_id.split(":", 1)[0] == start]
    else:
        found = [s for s in sessions if s.external_id == row["session_id"]]
    return found[0] if found else None


def measure_file(rows: list[dict[str, Any]], db_url: str) -> Tally:
    tally = Tally()
    engine = create_db_engine(db_url)
    with make_session_factory(engine)() as db:
        tasks = list(
            db.scalars(
                select(EntityCandidate).where(
                    EntityCandidate.suggested_kind == "task",
                    EntityCandidate.source_kind == "ai_tool",
                )
            )
        )
        sessions = list(db.scalars(select(ActivitySession)))
        projects = {
            e.project_key: e.display_name
            for e in db.scalars(select(Entity).where(Entity.kind == "project"))
        }
    engine.dispose()
    items: dict[int, set[int]] = defaultdict(set)  # line -> labelled items resting on it
    count = 0
    for row in rows:
        for item in row["items"]:
            for line in item["lines"]:
                if isinstance(line, int):
                    items[line].add(count)
            count += 1
        session = session_of(row, sessions)
        shown = projects.get(project_key(session.project_path)) if session else None
        tally.sessions += 1
        if shown == row["project"]:
            tally.projects_right += 1
        else:
            tally.wrong_projects.append(f"{row['source']} {row['session_start']}: {shown!r}")
    tally.items = count
    tally.candidates = len(tasks)
    on_lines = [c for c in tasks if c.source_line in items]
    tally.on_item_lines = len(on_lines)
    tally.matched_items = len(set().union(*(items[c.source_line] for c in on_lines)))
    return tally


def ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "n/a"


def report(name: str, tally: Tally) -> None:
    print(f"{name}: {tally.sessions} labelled sessions, {tally.items} labelled items")
    print(
        f"  precision {ratio(tally.on_item_lines, tally.candidates)} "
        f"({tally.on_item_lines} of {tally.candidates} task candidates on an item's line; "
        "target >= 0.8)"
    )
    print(
        f"  recall    {ratio(tally.matched_items, tally.items)} "
        f"({tally.matched_items} of {tally.items} items; target >= 0.9)"
    )
    print(
        f"  candidates per labelled item {ratio(tally.candidates, tally.items)} (target <= 1.5); "
        f"matching candidates per matched item {ratio(tally.on_item_lines, tally.matched_items)}"
    )
    print(
        f"  projects right {tally.projects_right} of {tally.sessions} sessions "
        "(project entity's display name == label's project)"
    )
    for wrong in tally.wrong_projects:
        print(f"    wrong: {wrong}")


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--synthetic-mb", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, importer, label_file, lay_out in (
            ("aider", "aider", "labels.jsonl", lay_out_aider),
            ("Claude Code", "claude-code", "labels-claude-code.jsonl", lay_out_claude),
        ):
            total = Tally()
            for n, (source, rows) in enumerate(sorted(labels(label_file).items())):
                root = work / f"{importer}-{n}"
                path = lay_out(source, root)
                db_url = f"sqlite:///{root / 'yzos.db'}"
                import_cli(importer, path, db_url)
                total.add(measure_file(rows, db_url))
            report(name, total)
        corpus = work / "speed"
        histories = [lay_out_aider(source, corpus / "aider") for source in labels("labels.jsonl")]
        for source in labels("labels-claude-code.jsonl"):
            lay_out_claude(source, corpus / "claude")
        for backend, postgres in (("SQLite", False), ("PostgreSQL", True)):
            print(f"import speed on {backend} (dry_run, inline promote), one process per corpus:")
            speed("aider", "aider", histories, work, postgres)
            speed("Claude Code", "claude-code", [corpus / "claude" / "projects"], work, postgres)
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
