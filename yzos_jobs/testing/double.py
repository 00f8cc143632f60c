"""A real HTTP server on loopback that speaks the OpenAI Chat Completions protocol.

It is the network peer the classifier talks to in tests, benchmarks and demos, reached through
the real `openai` client (nothing is patched). A responder decides each answer from the request
body: a verdict dict (sent as the message content), a raw content string, or one of the failure
shapes below. It records every request and the highest number of requests it was serving at
once, and the highest number it held at once, in a slot or waiting for one. With `slots`, it
serves that many at once and says so as llama.cpp does (`GET /props` answers `total_slots`;
`props` answers something else); without, it has no such route, as other servers have none.

Run as a process: `python -m yzos_jobs.testing --latency 0.1 --slots 16` prints the base
URL on stdout, then serves until killed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Status:
    """An HTTP error response."""

    code: int
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=lambda: {"error": {"message": "boom"}})


@dataclass
class Hang:
    """Answer only after `seconds` (longer than the client's timeout)."""

    seconds: float


@dataclass
class Refusal:
    text: str


@dataclass
class Raw:
    """Message content sent as is (malformed JSON, prose, code fences…)."""

    content: str


class Drop:
    """Close the connection without answering."""


@dataclass
class Body:
    """HTTP 200 with this body as is, instead of a completion (HTML, a JSON array…), under
    `headers` too (a header may come more than once); `gzip`: compressed, whatever the request
    asked for."""

    text: str
    content_type: str = "application/json"
    gzip: bool = False
    headers: tuple[tuple[str, str], ...] = ()


@dataclass
class Drip:
    """A valid completion sent one byte every `interval_s` seconds; with `headers`, the status
    line and headers drip too (else they go out at once and only the body drips)."""

    interval_s: float
    headers: bool = False


@dataclass
class Cut:
    """A completion cut by the token limit (finish_reason "length")."""

    content: str


def nested(depth: int) -> str:
    """JSON nested `depth` levels deep: valid, and deeper than any recursive parser goes."""
    return "[" * depth + "]" * depth


Reply = dict[str, Any] | str | Status | Hang | Refusal | Raw | Drop | Body | Drip | Cut
Responder = Callable[[dict[str, Any]], Reply]

_CANDIDATE = re.compile(r"<candidate>\s*(.*?)\s*</candidate>", re.DOTALL)


def candidate_of(body: dict[str, Any]) -> dict[str, Any]:
    """The candidate data the classifier put between <candidate> tags in the first user turn."""
    for message in body.get("messages", []):
        if message.get("role") == "user":
            match = _CANDIDATE.search(message.get("content", ""))
            if match:
                return json.loads(match.group(1))
    return {}


def verdict(
    kind: str | None, real: bool | None = None, name: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "is_real_entity": (kind in ("person", "project", "task")) if real is None else real,
        "kind": kind,
        "display_name": name,
        "confidence": extra.get("confidence", 0.9),
        "reason": extra.get("reason", "test double"),
    }


_SESSION = re.compile(r"<session>\s*(.*?)\s*</session>", re.DOTALL)
_OPEN_TASKS = re.compile(r"<open_tasks>\s*(.*?)\s*</open_tasks>", re.DOTALL)


def _block(body: dict[str, Any], pattern: re.Pattern[str]) -> Any:
    for message in body.get("messages", []):
        if message.get("role") == "user":
            match = pattern.search(message.get("content", ""))
            if match:
                return json.loads(match.group(1))
    return None


def session_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The session digest of a triage request (None for a verdict request)."""
    found = _block(body, _SESSION)
    return found if isinstance(found, dict) else None


def open_tasks_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The open tasks a triage request offers: [{"id": …, "title": …}]."""
    return _block(body, _OPEN_TASKS) or []


def triage_reply(
    project: str | None = None,
    tasks: Sequence[dict[str, Any]] = (),
    persons: Sequence[str] = (),
) -> dict[str, Any]:
    return {"project": project, "tasks": list(tasks), "persons": list(persons)}


def task(title: str, lines: Sequence[int] = (), existing: int | None = None) -> dict[str, Any]:
    return {"title": title, "existing_task_id": existing, "lines": list(lines)}


def accept_suggested(body: dict[str, Any]) -> Reply:
    """Real, with the suggested kind: what dry_run would say, but over the wire. A triage
    request gets one task per request line, as line-level extraction would."""
    digest = session_of(body)
    if digest is not None:
        requests = [(n, text) for n, kind, text in digest.get("lines", []) if kind == "request"]
        return triage_reply(digest.get("project"), [task(text, [n]) for n, text in requests])
    cand = candidate_of(body)
    return verdict(cand.get("suggested_kind") or "noise", name=cand.get("raw_text"))


def by_category(body: dict[str, Any]) -> Reply:
    """App if the candidate carries an app category, noise if it has no letters, else suggested."""
    cand = candidate_of(body)
    if cand.get("app_category"):
        return verdict("app")
    if not any(c.isalpha() for c in cand.get("raw_text", "")):
        return verdict("noise")
    return accept_suggested(body)


# Characters per token of the usage the double reports: about what BPE tokenizers give for
# English text and JSON, so costs measured against the double are of the right size.
CHARS_PER_TOKEN = 4


def usage_of(request: dict[str, Any], content: str | None) -> dict[str, int]:
    """The usage a server would report: the prompt's and the reply's text in tokens."""
    prompt_chars = sum(len(str(m.get("content") or "")) for m in request.get("messages", []))
    prompt = -(-prompt_chars // CHARS_PER_TOKEN)
    completion = -(-len(content or "") // CHARS_PER_TOKEN)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion_body(
    model: str,
    content: str | None,
    refusal: str | None = None,
    finish_reason: str = "stop",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-double",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
                "finish_reason": finish_reason,
            }
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return body


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many clients connect at once in the benchmarks

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is what the fault tests provoke, not an error.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class OpenAIDouble:
    def __init__(
        self,
        responder: Responder = accept_suggested,
        *,
        latency_s: float = 0.0,
        slots: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        report_usage: bool = True,
        props: dict[str, Any] | Status | None = None,
    ) -> None:
        self.responder = responder
        # False: replies carry no `usage` (as some servers send), their tokens unknown.
        self.report_usage = report_usage
        self.latency_s = latency_s
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        # What `GET /props` answers (None: no such route; a Status: that error), and the headers
        # of each GET
        self.props = props if props is not None else ({"total_slots": slots} if slots else None)
        self.asked_props: list[dict[str, str]] = []
        self.held = 0
        self.max_held = 0
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        self._server = _Server((host, port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def start(self) -> OpenAIDouble:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> OpenAIDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _hold(self, change: int) -> None:
        with self._lock:
            self.held += change
            self.max_held = max(self.max_held, self.held)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"double": self})


class _Handler(BaseHTTPRequestHandler):
    double: OpenAIDouble  # set on the subclass each double makes
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes

    def log_message(self, *args: Any) -> None:
        pass

    def _send(
        self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self._send_bytes(code, json.dumps(payload).encode(), headers=headers)

    def _send_bytes(
        self,
        code: int,
        data: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        pairs = list(headers.items()) if isinstance(headers, dict) else headers or []
        for k, v in pairs:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _drip(self, payload: dict[str, Any], drip: Drip) -> None:
        body = json.dumps(payload).encode()
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        self.close_connection = True
        if not drip.headers:
            self.wfile.write(head)
            self.wfile.flush()
            head = b""
        try:
            for byte in head + body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(drip.interval_s)
        except OSError:
            pass  # the client gave up

    def do_GET(self) -> None:
        with self.double._lock:
            self.double.asked_props.append({k.lower(): v for k, v in self.headers.items()})
        props = self.double.props
        if self.path == "/props" and isinstance(props, Status):
            self._send(props.code, props.body, props.headers)
        elif self.path == "/props" and props is not None:
            self._send(200, props)
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        with self.double._lock:
            self.double.requests.append(body)
            self.double.headers.append({k.lower(): v for k, v in self.headers.items()})
        # Reading the request and writing the answer take no slot (as in a model server, where
        # a slot is the model's time); a slow reply's slowness is the model's.
        reply = self.double.responder(body)
        slow = isinstance(reply, Hang | Drip)
        self.double._hold(1)
        try:
            if self.double._slots:
                self.double._slots.acquire()
            self.double._enter()
            try:
                if self.double.latency_s:
                    time.sleep(self.double.latency_s)
                if slow:
                    self._answer(body, reply)
            finally:
                self.double._leave()
                if self.double._slots:
                    self.double._slots.release()
        finally:
            self.double._hold(-1)
        if not slow:
            self._answer(body, reply)

    def _completion(
        self,
        request: dict[str, Any],
        content: str | None,
        refusal: str | None = None,
        finish_reason: str = "stop",
    ) -> dict[str, Any]:
        model = request.get("model", "double")
        reported = content if content is not None else refusal
        usage = usage_of(request, reported) if self.double.report_usage else None
        return _completion_body(model, content, refusal, finish_reason, usage)

    def _answer(self, body: dict[str, Any], reply: Reply) -> None:
        if isinstance(reply, Status):
            self._send(reply.code, reply.body, reply.headers)
        elif isinstance(reply, Hang):
            time.sleep(reply.seconds)
            self._send(200, self._completion(body, json.dumps(verdict("noise"))))
        elif isinstance(reply, Drop):
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        elif isinstance(reply, Body):
            data = gzip.compress(reply.text.encode()) if reply.gzip else reply.text.encode()
            self._send_bytes(200, data, reply.content_type, list(reply.headers))
        elif isinstance(reply, Drip):
            self._drip(self._completion(body, json.dumps(verdict("noise"))), reply)
        elif isinstance(reply, Cut):
            self._send(200, self._completion(body, reply.content, finish_reason="length"))
        elif isinstance(reply, Refusal):
            self._send(200, self._completion(body, None, reply.text))
        elif isinstance(reply, Raw):
            self._send(200, self._completion(body, reply.content))
        elif isinstance(reply, str):
            self._send(200, self._completion(body, reply))
        else:
            self._send(200, self._completion(body, json.dumps(reply, ensure_ascii=False)))


RESPONDERS: dict[str, Responder] = {"suggested": accept_suggested, "by_category": by_category}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--slots", type=int, default=0)
    parser.add_argument("--responder", choices=sorted(RESPONDERS), default="suggested")
    args = parser.parse_args()
    double = OpenAIDouble(
        RESPONDERS[args.responder], latency_s=args.latency, slots=args.slots or None, port=args.port
    ).start()
    print(double.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        double.stop()
        sys.exit(0)


if __name__ == "__main__":
    main()
