"""Credentials embedded in URLs (`http://user:sk-…@host/v1`, `…/v1?api-key=sk-…`) never leave the
process.

Applied to every message that may carry the LLM base URL or a transport error's text: errors
(which end up in `reject_reason` and `job_runs.error`), the circuit breaker's message, the
settings `config` prints, and logs.
"""

from __future__ import annotations

import re

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://\S+")
# scheme://userinfo@ — greedy up to the last "@" of the unbroken run, so a password holding an
# unescaped "@" is hidden whole.
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://)\S*@")
# A query parameter's value (`?api-key=…`, `&key=…`): some services take the key there
# (up to a mark that ends the URL's sentence rather than the value: `,`, a quote, a bracket)
_QUERY_VALUE = re.compile(r"([?&;][^=&;#\s]*=)[^&;#\s,'\")\]]+")


def _masked_url(m: re.Match[str]) -> str:
    url = _USERINFO.sub(r"\1***@", m.group(0))
    at = url.find("?")
    return url if at < 0 else url[:at] + _QUERY_VALUE.sub(r"\1***", url[at:])


def mask_url_credentials(text: str) -> str:
    """`text` with the user and password of every URL in it, and the values of its query
    parameters, replaced by `***`."""
    return _URL.sub(_masked_url, text)
