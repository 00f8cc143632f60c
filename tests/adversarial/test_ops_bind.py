"""`[daemon] http` as a careless or hostile operator writes it: what is not plainly host and
port is refused (ConfigError: one line naming the key, exit 2) before the daemon starts."""

from __future__ import annotations

import pytest

from yzos_jobs.config import ConfigError, DaemonSettings
from yzos_jobs.ops_http import parse_bind


@pytest.mark.parametrize(
    "http",
    [
        "127.0.0.1:\u0664\u0665\u0668\u0668\u0660",  # Arabic-Indic digits: int() reads them
        "127.0.0.1:\uff19\uff14\uff16\uff14",  # fullwidth digits
        "127.0.0.1:9464\n",
        "127.0.0.1:0",
        "127.0.0.1:1e3",
    ],
)
def test_a_port_not_written_in_ascii_digits_is_refused(http: str) -> None:
    with pytest.raises(ConfigError, match=r"key 'daemon.http': expected host:port") as refused:
        parse_bind(DaemonSettings(http=http), "c.toml")
    assert "\n" not in str(refused.value).rstrip("'")


@pytest.mark.parametrize("http", ["LOCALHOST:9464", "LocalHost:9464"])
def test_localhost_is_loopback_whatever_its_case(http: str) -> None:
    assert parse_bind(DaemonSettings(http=http), "c.toml") == (http.split(":")[0], 9464)
