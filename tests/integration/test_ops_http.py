"""The daemon's /metrics and /healthz, read as a monitoring system reads them: a real daemon
process, a real HTTP client, prometheus_client's parser."""

from __future__ import annotations

import http.client
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from prometheus_client import CollectorRegistry, Counter
from sqlalchemy.engine import make_url

from tests.support.daemons import start_daemon, stop, wait_for, write_config
from tests.support.jobs import add_candidates, candidates, make_ctx
from tests.support.scrape import free_port, get, value
from tests.support.tcp_proxy import TcpProxy
from yzos_jobs import ops_http
from yzos_jobs.cli import cli
from yzos_jobs.health import Health
from yzos_jobs.ops_http import OpsServer
from yzos_jobs.testing import OpenAIDouble
from yzos_jobs.testing.double import usage_of


def _health(port: int) -> tuple[int, str]:
    return get(f"http://127.0.0.1:{port}/healthz")


@pytest.mark.postgres
@pytest.mark.slow
def test_metrics_move_with_a_promote_run_and_health_follows_the_database(
    pg_url: str, tmp_path: Path
) -> None:
    ctx = make_ctx(pg_url)
    add_candidates(ctx, *({"raw_text": f"Project {i}"} for i in range(40)))
    url = make_url(pg_url)
    proxy = TcpProxy((url.host or "127.0.0.1", url.port or 5432)).up()
    through_proxy = url.set(port=proxy.port).render_as_string(hide_password=False)
    port = free_port()
    with OpenAIDouble() as llm:
        config = write_config(
            tmp_path / "c.toml",
            llm.base_url,
            daemon={"http": f"127.0.0.1:{port}"},
            **{"jobs.entity_promote": {"interval_s": 1, "batch_size": 10}},
        )
        daemon = start_daemon(through_proxy, config)
        try:
            wait_for(lambda: _health(port)[0] == 200, 60, "/healthz 200")
            wait_for(lambda: {c.status for c in candidates(ctx)} == {"promoted"}, 60, "40 promoted")
            assert value(port, "yzos_llm_requests_total", outcome="ok") == 40 == llm.calls
            prompt = sum(usage_of(r, None)["prompt_tokens"] for r in llm.requests)
            assert value(port, "yzos_llm_tokens_total", type="prompt") == prompt
            assert value(port, "yzos_llm_tokens_total", type="completion") > 0
            assert value(port, "yzos_llm_tokens_today", type="prompt") == prompt
            wait_for(
                lambda: value(port, "yzos_decisions_last_day", source="llm") == 40,
                30,
                "the day's decisions",
            )
            assert value(port, "yzos_entities", kind="project", status="active") == 40
            assert value(port, "yzos_candidates", status="promoted") == 40
            assert value(port, "yzos_job_runs_total", job="entity_promote", outcome="succeeded")

            proxy.down()
            wait_for(lambda: _health(port)[0] == 503, 60, "/healthz 503 without the database")
            status, body = _health(port)
            assert status == 503 and "database does not answer" in body, body
            wait_for(
                lambda: value(port, "yzos_store_read_failed") == 1, 30, "the gauges' read failing"
            )

            proxy.up()
            wait_for(lambda: _health(port)[0] == 200, 60, "/healthz 200 with the database back")
            assert _health(port)[1].startswith("ok")
        finally:
            code, err = stop(daemon)
            proxy.down()
    assert code == 0, err[-3000:]


def test_a_remote_bind_without_allow_remote_is_one_line_and_exit_2(
    db_url: str, tmp_path: Path
) -> None:
    config = write_config(tmp_path / "c.toml", None, daemon={"http": "0.0.0.0:9464"})
    result = CliRunner().invoke(
        cli, ["--config", str(config), "run"], env={"YZOS_DATABASE_URL": db_url}
    )
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert "daemon.http" in line and "0.0.0.0 is not a loopback address" in line


@pytest.mark.parametrize("http", ["9464", "127.0.0.1:", "127.0.0.1:99999", ":9464"])
def test_a_malformed_bind_address_is_one_line_and_exit_2(
    db_url: str, tmp_path: Path, http: str
) -> None:
    config = write_config(tmp_path / "c.toml", None, daemon={"http": http})
    result = CliRunner().invoke(
        cli, ["--config", str(config), "run"], env={"YZOS_DATABASE_URL": db_url}
    )
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert "expected host:port" in line


def test_a_port_already_taken_is_one_line_and_exit_2(db_url: str, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = write_config(tmp_path / "c.toml", None, daemon={"http": f"127.0.0.1:{port}"})
        result = CliRunner().invoke(
            cli, ["--config", str(config), "run"], env={"YZOS_DATABASE_URL": db_url}
        )
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert f"cannot listen on 127.0.0.1:{port}" in line


def test_head_gets_each_answer_without_its_body() -> None:
    registry = CollectorRegistry()
    Counter("yzos_probe_total", "A counter to scrape.", registry=registry).inc()
    health = Health(problems=["the database does not answer"])
    server = OpsServer(("127.0.0.1", 0), registry, lambda: health).start()
    host, port = server.address
    try:
        for path, status in (("/healthz", 503), ("/metrics", 200), ("/nothing", 404)):
            answers = {}
            for method in ("GET", "HEAD"):
                conn = http.client.HTTPConnection(host, port, timeout=10)
                conn.request(method, path)
                reply = conn.getresponse()
                answers[method] = (reply.status, reply.getheader("Content-Length"), reply.read())
                conn.close()
            (got, length, body), (head_status, head_length, head_body) = answers.values()
            assert got == head_status == status
            assert head_length == length == str(len(body)) and body and head_body == b""
    finally:
        server.stop()


def test_clients_that_never_finish_a_request_hold_no_thread_for_long(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A connection that sends half a request, an HTTP/0.9 line or nothing is closed after the
    client timeout, and no more than MAX_CLIENTS are served at once: a local process cannot
    take the daemon's threads and file descriptors."""
    # long enough that every stalled connection is still held when the one past the cap comes
    # (the server accepts them in order), short enough to wait for
    monkeypatch.setattr(ops_http._Handler, "timeout", 3.0)
    server = OpsServer(("127.0.0.1", 0), CollectorRegistry(), lambda: Health()).start()
    host, port = server.address
    stalled = [socket.create_connection((host, port)) for _ in range(ops_http.MAX_CLIENTS)]
    try:
        for n, conn in enumerate(stalled):
            conn.sendall(b"GET /healthz HTTP/1.1\r\n" if n % 2 else b"GET /healthz\r\n")
        extra = socket.create_connection((host, port))
        extra.settimeout(10)
        assert extra.recv(1) == b""  # past the cap: closed, not queued behind them
        extra.close()
        for conn in stalled:  # each closed by the server once its time is up
            conn.settimeout(10)
            assert conn.recv(65536) == b""
        assert _health(port)[0] == 200
    finally:
        for conn in stalled:
            conn.close()
        server.stop()
