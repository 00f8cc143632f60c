"""The daemon's HTTP endpoints, off unless `[daemon] http` names an address: GET /healthz (200,
or 503 with the reasons in the body) and GET /metrics (Prometheus text format). Served by the
standard library's threaded HTTP server on a thread of the daemon. A bind address other than
loopback is refused unless `[daemon] allow_remote` is true: neither endpoint authenticates.
"""

from __future__ import annotations

import ipaddress
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from yzos_jobs.config import ConfigError, DaemonSettings
from yzos_jobs.health import Health
from yzos_jobs.logging import get_logger

log = get_logger(__name__)


def parse_bind(daemon: DaemonSettings, source: str) -> tuple[str, int]:
    """`[daemon] http` as (host, port): "127.0.0.1:9464", "[::1]:9464", "localhost:9464"."""
    where = f"{source}: key 'daemon.http'"
    host, sep, port_text = daemon.http.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    # ASCII digits only: str.isdigit and int() also take other scripts' digits.
    digits = port_text.isascii() and port_text.isdigit()
    if not sep or not host or not digits or not 0 < int(port_text) < 65536:
        raise ConfigError(f"{where}: expected host:port, e.g. 127.0.0.1:9464 (got {daemon.http!r})")
    if not daemon.allow_remote and not is_loopback(host):
        raise ConfigError(
            f"{where}: {host} is not a loopback address; /healthz and /metrics have no "
            "authentication (set [daemon] allow_remote = true to serve them there)"
        )
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":  # host names are case-insensitive
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


# A client has this long to send its request and take the answer; a connection that sends
# nothing, half a request or what is no HTTP/1 request at all is closed then, instead of holding
# a thread and a file descriptor of the daemon's for as long as it likes.
CLIENT_TIMEOUT_S = 10.0
# Requests served at once; a connection past them is closed at once (a scraper or a probe asks
# one at a time). Connections waiting to be accepted: the kernel's queue.
MAX_CLIENTS = 16
ACCEPT_QUEUE = 64


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = ACCEPT_QUEUE

    def __init__(self, address: tuple[str, int], ops: OpsServer) -> None:
        self.address_family = _family(address[0])
        self.ops = ops
        self._clients = threading.BoundedSemaphore(MAX_CLIENTS)
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._clients.acquire(blocking=False):
            self.shutdown_request(request)  # too many at once: this one is not served
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._clients.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._clients.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The standard library prints a traceback to stderr: a client that gave up (a probe
        # past its timeout) is no news, and anything else is one log line.
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            log.debug("client hung up", client=str(client_address), error=str(error))
            return
        log.warning("request failed", client=str(client_address), error=repr(error))


def _family(host: str) -> Any:
    import socket

    return socket.AF_INET6 if ":" in host else socket.AF_INET


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = CLIENT_TIMEOUT_S

    def log_message(self, *args: Any) -> None:
        pass  # a scrape every few seconds is no news

    def do_GET(self) -> None:
        self._answer(with_body=True)

    def do_HEAD(self) -> None:
        # An uptime checker asks for the status alone: the same answer, without its body.
        self._answer(with_body=False)

    def _answer(self, with_body: bool) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            body, kind = generate_latest(self.server.ops.registry), CONTENT_TYPE_LATEST
            self._send(200, body, kind, with_body)
        elif path == "/healthz":
            health = self.server.ops.health()
            self._send(200 if health.ok else 503, health.body().encode(), "text/plain", with_body)
        else:
            self._send(404, b"not found: try /healthz or /metrics\n", "text/plain", with_body)

    def _send(self, code: int, body: bytes, content_type: str, with_body: bool) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)


class OpsServer:
    """/healthz and /metrics on `address`, served from a thread until `stop`."""

    def __init__(
        self,
        address: tuple[str, int],
        registry: CollectorRegistry,
        health: Callable[[], Health],
    ) -> None:
        self.registry = registry
        self.health = health
        self._server = _Server(address, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="ops-http", daemon=True
        )

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> OpsServer:
        self._thread.start()
        log.info("serving /healthz and /metrics", address=f"{self.address[0]}:{self.address[1]}")
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
