"""A total deadline for each HTTP request, handed to the OpenAI client as its transport.

httpx's timeouts bound each socket operation, so a server that sends one byte every half second
never trips them and holds a request for as long as it likes. Here every socket operation of a
request (connect, TLS, send, each read of the headers and of the body) is given only what is left
of the request's budget, and fails with a timeout once it is spent. The budget runs from the
moment the transport gets the request until the last byte of the body is read; the client's
retries are separate requests, each with its own budget.

The deadline reaches the sockets through a context variable: the synchronous client does all of
a request's I/O in the calling thread, and the variable is set only around that I/O.

Where `max_body_bytes` is given, the body is also read under that bound, decoded here where it
came compressed (see `bounded_body.py`), and the request asks for it uncompressed.

A client given its own transport no longer reads HTTP(S)_PROXY itself, so `proxy_for` does: the
proxy the environment names for the base URL (NO_PROXY respected), reached under the same deadline.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpcore2
import httpx2

from yzos_jobs.inference.bounded_body import (
    ReplyEncoded,
    bounded,
    check_codings,
    codings,
    without_codings,
)

_deadline: ContextVar[float | None] = ContextVar("yzos_http_deadline", default=None)

# Replies that say the model is not serving yet (llama-server answers 503 while it loads it) or
# that a gateway found none behind it: no try that got one was served.
NOT_SERVING = frozenset({502, 503})


class Served:
    """Whether any try of one call reached a model: a reply other than NOT_SERVING, or a
    connection that failed after it was made (the request may have been read, and crashed the
    server). The client's retries are tries of the one call."""

    def __init__(self) -> None:
        self.reached = False


_served: ContextVar[Served | None] = ContextVar("yzos_http_served", default=None)


@contextmanager
def served_tally() -> Iterator[Served]:
    """Within: the requests of this thread tell the tally whether they reached a model."""
    tally = Served()
    token = _served.set(tally)
    try:
        yield tally
    finally:
        _served.reset(token)


def _reached() -> None:
    tally = _served.get()
    if tally is not None:
        tally.reached = True


# httpcore's errors as the httpx ones the OpenAI client understands (timeouts become
# APITimeoutError, the rest APIConnectionError). Subclasses first.
_ERRORS: tuple[tuple[type[Exception], type[httpx2.TransportError]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.ProtocolError, httpx2.ProtocolError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
    (httpcore2.ProxyError, httpx2.ProxyError),
)


class Stopping(httpx2.ConnectError):
    """A request refused because the process is stopping."""


@contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core, mapped in _ERRORS:
            if isinstance(exc, core):
                raise mapped(str(exc)) from exc
        raise


@contextmanager
def _until(deadline: float) -> Iterator[None]:
    token = _deadline.set(deadline)
    try:
        yield
    finally:
        _deadline.reset(token)


def _budget(timeout: float | None, expired: type[Exception]) -> float | None:
    """The smaller of an operation's own timeout and what is left of the request's budget."""
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("request deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _budget(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _budget(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        budget = _budget(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, budget))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        budget = _budget(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(
            self._inner.connect_tcp(host, port, budget, local_address, socket_options)
        )

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        budget = _budget(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, budget, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _DeadlineBody(httpx2.SyncByteStream):
    """The response body, read under the request's deadline."""

    def __init__(
        self,
        inner: Iterable[bytes],
        deadline: float,
        close: Callable[[], None],
        bound: tuple[list[str], int] | None = None,
    ) -> None:
        self._inner = inner
        self._deadline = deadline
        self._close = close
        self._bound = bound  # (the body's codings, the most it may hold decoded)

    def __iter__(self) -> Iterator[bytes]:
        if self._bound is None:
            yield from self._read()
        else:
            yield from bounded(self._read(), *self._bound)

    def _read(self) -> Iterator[bytes]:
        chunks = iter(self._inner)
        while True:
            with _httpx_errors(), _until(self._deadline):
                chunk = next(chunks, None)
            if chunk is None:
                return
            yield chunk

    def close(self) -> None:
        self._close()


def proxy_for(url: str) -> str | None:
    """The HTTP(S) proxy the environment names for `url`, if any (NO_PROXY respected)."""
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    proxy = urllib.request.getproxies().get(parts.scheme)
    return proxy if proxy and proxy.startswith(("http://", "https://")) else None


class DeadlineTransport(httpx2.BaseTransport):
    """An HTTP/1.1 transport (a connection pool of its own, through `proxy` if given) whose every
    request ends, with a timeout error, at most `total_s` seconds after it started, and whose
    response bodies end with `ReplyTooLarge` past `max_body_bytes` (None: unbounded)."""

    def __init__(
        self,
        total_s: float,
        max_connections: int = 64,
        proxy: str | None = None,
        max_body_bytes: int | None = None,
        stopping: threading.Event | None = None,
    ) -> None:
        self.total_s = total_s
        self.max_body_bytes = max_body_bytes
        self.stopping = stopping
        pool: dict[str, Any] = {
            "ssl_context": httpx2.create_ssl_context(),
            "max_connections": max_connections,
            "max_keepalive_connections": max_connections,
            "keepalive_expiry": 5.0,
            "network_backend": _DeadlineBackend(),
        }
        self._pool: httpcore2.ConnectionPool
        if proxy is None:
            self._pool = httpcore2.ConnectionPool(**pool)
        else:
            parts = urllib.parse.urlsplit(proxy)
            auth = None
            if parts.username or parts.password:
                auth = (
                    urllib.parse.unquote(parts.username or ""),
                    urllib.parse.unquote(parts.password or ""),
                )
            bare = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
            self._pool = httpcore2.HTTPProxy(proxy_url=bare, proxy_auth=auth, **pool)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(request.stream, httpx2.SyncByteStream)
        if self.stopping is not None and self.stopping.is_set():
            # The process is stopping: a call in flight finishes, but the client's retries of
            # it (each a request of its own, up to a timeout each) would hold the stop for
            # minutes. What it was for waits for the next run.
            raise Stopping("stopping: no new request")
        deadline = time.monotonic() + self.total_s
        headers = request.headers.raw
        if self.max_body_bytes is not None:
            # nothing to inflate, from a server that does as asked
            headers = [(k, v) for k, v in headers if k.lower() != b"accept-encoding"]
            headers.append((b"Accept-Encoding", b"identity"))
        core_request = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=headers,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            with _httpx_errors(), _until(deadline):
                response = self._pool.handle_request(core_request)
        except (httpx2.ConnectError, httpx2.ConnectTimeout):
            raise  # no connection: nothing was sent
        except Exception:
            _reached()
            raise
        if response.status not in NOT_SERVING:
            _reached()
        stream = response.stream
        assert isinstance(stream, Iterable)
        close = getattr(stream, "close", lambda: None)
        if self.max_body_bytes is None:
            body = _DeadlineBody(stream, deadline, close)
            return httpx2.Response(
                status_code=response.status,
                headers=response.headers,
                stream=body,
                extensions=response.extensions,
            )
        found = codings(response.headers)
        try:
            check_codings(found)
        except ReplyEncoded:
            close()
            if response.status < 400:
                raise
            # an error's status is what counts (a 429 is waited on and asked again), not its body
            return httpx2.Response(
                status_code=response.status,
                headers=without_codings(response.headers),
                content=b"",
                extensions=response.extensions,
            )
        # handed on decoded: the client must not decode it again
        return httpx2.Response(
            status_code=response.status,
            headers=without_codings(response.headers) if found else response.headers,
            stream=_DeadlineBody(stream, deadline, close, (found, self.max_body_bytes)),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()
