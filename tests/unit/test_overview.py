"""The status command's reads name tables and columns without the models (db/overview.py): each
name must be one the models define, with the same timestamp and JSON handling."""

from __future__ import annotations

import subprocess
import sys

import pytest
from sqlalchemy import Table

from yzos_jobs.db import job_pauses, llm_usage, overview, store_health
from yzos_jobs.db.column_types import Json, UTCDateTime
from yzos_jobs.db.models import Base


@pytest.mark.parametrize(
    "light",
    [
        overview.CANDIDATES,
        overview.ENTITIES,
        overview.TRIAGE,
        overview.JOB_RUNS,
        job_pauses.JOB_PAUSES,
        llm_usage.LLM_USAGE_DAYS,
        store_health.DECISIONS,
        store_health.IMPORTER_FILES,
        store_health.ACTIVITY_SESSIONS,
        overview.IMPORTER_FILES,
    ],
    ids=lambda t: t.name,
)
def test_each_column_read_is_a_column_of_the_model(light: Table) -> None:
    model = Base.metadata.tables[light.name]
    for col in light.columns:
        assert col.name in model.columns, f"{light.name}.{col.name} is not in the models"
        declared = model.columns[col.name].type
        for special in (UTCDateTime, Json):
            assert isinstance(col.type, special) == isinstance(declared, special), col.name


def test_status_loads_neither_the_orm_nor_the_models() -> None:
    code = (
        "import sys, yzos_jobs.status; "
        "print(any(m in sys.modules for m in ('sqlalchemy.orm', 'yzos_jobs.db.models')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
