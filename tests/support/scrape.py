"""Read a daemon's /metrics and /healthz as a monitoring system does: over real HTTP, the text
parsed by prometheus_client's own parser."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str, timeout: float = 10) -> tuple[int, str]:
    """The status and body of a GET; a refused connection is status 0."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, ""


def samples(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the daemon's /metrics by (name, sorted labels); empty when it does not
    answer yet."""
    status, body = get(f"http://127.0.0.1:{port}/metrics")
    if status != 200:
        return {}
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def value(port: int, name: str, **labels: str) -> float:
    return samples(port).get((name, tuple(sorted(labels.items()))), 0.0)
