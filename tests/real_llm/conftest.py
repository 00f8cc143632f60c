"""The real llama.cpp server for the `real_llm` tests: one per test session, on a free port.

Outside CI the tests are skipped when `scripts/llm-server` has not built the server yet; with
CI=true they fail instead (`.ci/run` builds it first), and so does a server that will not start.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NoReturn

import pytest

from tests.support.ci import in_ci
from yzos_jobs.testing.llama import LlamaServer, ServerUnavailable, cached_build

IN_CI = in_ci()


def _unavailable(reason: str) -> NoReturn:
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: the real-LLM tests must run)", pytrace=False)
    pytest.skip(f"{reason}; `make llm-server` builds it")
    raise AssertionError("unreachable")  # pytest.skip raises


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    try:
        binary, model = cached_build(build=IN_CI)
    except ServerUnavailable as exc:
        _unavailable(str(exc))
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    server = LlamaServer(binary, model, log)
    try:
        server.start()
    except ServerUnavailable as exc:
        _unavailable(str(exc))
    yield server
    server.stop()


@pytest.fixture
def live_server(llama_server: LlamaServer) -> LlamaServer:
    """The session's server, started again if an earlier test killed it."""
    try:
        llama_server.ensure_running()
    except ServerUnavailable as exc:
        _unavailable(str(exc))
    return llama_server
