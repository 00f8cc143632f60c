"""How many requests the model's server works on at once, where it says so: llama.cpp answers
`GET /props` with `total_slots` (the parallel slots it was started with, `-np`).

A request past the server's slots waits in its queue, and the wait counts against the request's
deadline (`llm.timeout_s`): against a model answering slowly on a CPU, requests time out that
were only waiting their turn behind this process's own, and the circuit breaker then takes a
working server for a dead one. Held back here instead, a request waits on no clock. Any other
server (OpenAI, vLLM, Ollama: no such route) or an answer that is not a count says nothing, and
`llm.max_concurrency` alone bounds what is in flight.
"""

from __future__ import annotations

import json

# The probe is one small GET with a deadline of its own: a server that takes longer, or drips its
# answer, is taken to say nothing for now.
PROBE_S = 5.0
# llama.cpp's answer is a few kilobytes; one past this is no answer about slots.
PROPS_BYTES = 256 * 1024
# Answers that say "not now": too many requests, a server loading its model or gone away
_NOT_NOW = frozenset({408, 429, 500, 502, 503, 504})
# No server runs more slots than this; a larger number is no count a server could mean.
MAX_SLOTS = 4096


def props_url(base_url: str) -> str:
    """The server's `/props` beside its OpenAI routes: `http://host:8080/v1` →
    `http://host:8080/props`."""
    return base_url.rstrip("/").removesuffix("/v1") + "/props"


def server_slots(base_url: str, api_key: str | None, timeout_s: float) -> tuple[int | None, bool]:
    """(the requests the server at `base_url` works on at once as its `/props` says, or None;
    whether the server answered the question). Not answered: unreachable, too slow, or not ready
    (llama.cpp answers 503 while it loads its model), so worth asking again later; answered with
    no count: a server with no such route, or one whose answer holds none. Asked as the chat
    requests are (the proxy the environment names, a total deadline, never a redirect
    followed) with the key, which a server started with `--api-key` wants on this route too."""
    import httpx2

    from yzos_jobs.inference.bounded_body import ReplyUnread
    from yzos_jobs.inference.deadline import DeadlineTransport, proxy_for

    budget = min(PROBE_S, timeout_s)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        transport = DeadlineTransport(
            budget, max_connections=1, proxy=proxy_for(base_url), max_body_bytes=PROPS_BYTES
        )
        with (
            httpx2.Client(transport=transport, timeout=budget) as client,
            client.stream("GET", props_url(base_url), headers=headers) as response,
        ):
            if response.status_code in _NOT_NOW:
                return None, False
            if response.status_code != 200:
                return None, True  # no such route (404, 405, 501), or not for us (401, 403)
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > PROPS_BYTES:
                    return None, True
    except ReplyUnread:
        return None, True  # answered, with more than any count takes or in no readable coding
    except (httpx2.HTTPError, httpx2.InvalidURL, ValueError):
        return None, False  # unreachable, too slow, or a URL no request can go to
    try:
        props = json.loads(body)
    except (ValueError, RecursionError):
        return None, True
    slots = props.get("total_slots") if isinstance(props, dict) else None
    return (slots if type(slots) is int and 1 <= slots <= MAX_SLOTS else None), True
