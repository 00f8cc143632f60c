"""Credentials embedded in URLs (`http://user:sk-…@host/v1`) never leave the process.

Applied to every message that may carry the LLM base URL or a transport error's text: errors
(which end up in `reject_reason` and `job_runs.error`), the circuit breaker's message and logs.
"""

from __future__ import annotations

import re

# scheme://userinfo@ — greedy up to the last "@" of the unbroken run, so a password holding an
# unescaped "@" is hidden whole.
_URL_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)\S*@")


def mask_url_credentials(text: str) -> str:
    """`text` with the user and password of every URL in it replaced by `***`."""
    return _URL_USERINFO.sub(r"\1***@", text)
