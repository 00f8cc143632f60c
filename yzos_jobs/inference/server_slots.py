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

# The probe is one small GET with a deadline of its own: a server that takes longer, or drips its
# answer, is taken to say nothing.
PROBE_S = 5.0
# No server runs more slots than this; a larger number is no count a server could mean.
MAX_SLOTS = 4096


def props_url(base_url: str) -> str:
    """The server's `/props` beside its OpenAI routes: `http://host:8080/v1` →
    `http://host:8080/props`."""
    return base_url.rstrip("/").removesuffix("/v1") + "/props"


def server_slots(base_url: str, api_key: str | None, timeout_s: float) -> int | None:
    """The requests the server at `base_url` works on at once, as its `/props` says, or None.
    Asked as the chat requests are (the proxy the environment names, a total deadline) with the
    key, which a server started with `--api-key` wants on this route too."""
    import httpx2

    from yzos_jobs.inference.deadline import DeadlineTransport, proxy_for

    transport = DeadlineTransport(
        min(PROBE_S, timeout_s), max_connections=1, proxy=proxy_for(base_url)
    )
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with httpx2.Client(transport=transport, timeout=min(PROBE_S, timeout_s)) as client:
            response = client.get(props_url(base_url), headers=headers)
            response.raise_for_status()
            props = response.json()
    except (httpx2.HTTPError, ValueError, RecursionError):
        return None
    slots = props.get("total_slots") if isinstance(props, dict) else None
    return slots if type(slots) is int and 1 <= slots <= MAX_SLOTS else None
