"""The store's health gauges of /metrics against what the knowledge base holds: the share of the
day's candidate decisions that rejected the candidate counts every candidate decided, by
`entity_promote` and as a session ends alike."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select

from tests.support.cli import REPO, run_cli
from tests.support.jobs import add_candidates, make_ctx
from yzos_jobs.db.connection import create_db_engine
from yzos_jobs.db.models import EntityCandidate
from yzos_jobs.jobcontext import JobContext
from yzos_jobs.metrics import read_gauges

EXAMPLES = REPO / "examples" / "observations.jsonl"


def _gauge(db_url: str, name: str) -> list[float]:
    ctx = make_ctx(db_url)
    engine = create_db_engine(db_url)
    try:
        with engine.connect() as conn:
            [gauge] = [g for g in read_gauges(conn, ctx.settings) if g.family().name == name]
            return [sample.value for sample in gauge.family().samples]
    finally:
        engine.dispose()


def _counts(ctx: JobContext) -> dict[str, int]:
    with ctx.sessions() as s:
        rows = s.execute(
            select(EntityCandidate.status, func.count()).group_by(EntityCandidate.status)
        )
        return {status: int(n) for status, n in rows}


def test_the_rejected_share_counts_candidates_decided_as_their_session_ends(
    db_url: str, tmp_path: Path
) -> None:
    # the sample's sessions end in it: their candidates are decided as they are imported
    imported = run_cli("import", "jsonl", str(EXAMPLES), db_url=db_url, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    ctx = make_ctx(db_url)
    assert _counts(ctx).get("rejected", 0) >= 1
    # and two more through entity_promote, one of them structural noise
    add_candidates(
        ctx,
        {"raw_text": "Harbor Sync", "source_id": "w-1"},
        {"raw_text": "0f3c9a1e-5b2d-4c1a-9e7f-2d8b6a4c1e90", "source_id": "w-2"},
    )
    assert run_cli("once", "entity_promote", db_url=db_url, cwd=tmp_path).returncode == 0
    counts = _counts(ctx)
    decided = counts["promoted"] + counts["rejected"]
    assert _gauge(db_url, "yzos_store_rejected_share") == [counts["rejected"] / decided]
