"""The test kit shipped with the package, shared by the test suite and the benchmarks (as
procrastinate ships `testing.py`): the OpenAI-protocol loopback server (`double`), throwaway
PostgreSQL databases (`databases`), and a local llama.cpp server (`llama`).

    python -m yzos_jobs.testing --latency 0.1 --slots 16   # the double, as a process
"""

from yzos_jobs.testing.databases import (
    PG_ADMIN_URL,
    create_pg_database,
    drop_pg_database,
    pg_database,
    pg_unavailable_reason,
    pg_url,
)
from yzos_jobs.testing.double import (
    RESPONDERS,
    Body,
    Cut,
    Drip,
    Drop,
    Hang,
    OpenAIDouble,
    Raw,
    Refusal,
    Reply,
    Responder,
    Status,
    accept_suggested,
    by_category,
    candidate_of,
    nested,
    open_tasks_of,
    session_of,
    task,
    triage_reply,
    verdict,
)

__all__ = [
    "PG_ADMIN_URL",
    "RESPONDERS",
    "Body",
    "Cut",
    "Drip",
    "Drop",
    "Hang",
    "OpenAIDouble",
    "Raw",
    "Refusal",
    "Reply",
    "Responder",
    "Status",
    "accept_suggested",
    "by_category",
    "candidate_of",
    "create_pg_database",
    "drop_pg_database",
    "nested",
    "open_tasks_of",
    "pg_database",
    "pg_unavailable_reason",
    "pg_url",
    "session_of",
    "task",
    "triage_reply",
    "verdict",
]
