"""Credentials embedded in URLs (`http://user:sk-…@host/v1`, `…/v1?api-key=sk-…`,
`postgresql://me:pw@db/yzos`, `…/yzos?password=pw`) never leave the process.

Applied to every message that may carry the LLM base URL, the database URL or a transport
error's text: errors (which end up in `reject_reason` and `job_runs.error`), the circuit
breaker's message, the database URL the `db` commands print, the settings `config` prints, and
logs.
"""

from __future__ import annotations

import re

_SCHEME = r"[A-Za-z][A-Za-z0-9+.\-]*://"
_URL = re.compile(_SCHEME + r"\S+")
_STARTS_AS_URL = re.compile(_SCHEME)
# scheme://userinfo@ — greedy up to the last "@" of the URL, so a password holding an unescaped
# "@" is hidden whole (an "@" further on, in a query, hides the host too: too much beats too
# little). DOTALL: a URL given whole may hold any character.
_USERINFO = re.compile(r"^(" + _SCHEME + r").*@", re.DOTALL)
# A query parameter's value (`?api-key=…`, `&key=…`, `?password=…`): some services take the
# key there, and libpq a password (`password`, `sslpassword`, …). Every value is hidden, not
# only those whose names look secret: the names services use vary too much to list.
# In text, a value ends at a mark that ends the URL's sentence (`,`, a quote, a bracket).
_QUERY_VALUE_IN_TEXT = re.compile(r"([?&;][^=&;#\s]*=)[^&;#\s,'\")\]]+")
# In a URL given whole, only at the next parameter: the driver takes the rest (spaces, `#`,
# `,` and all) as the value.
# An "&" not followed by a parameter of its own (`password=P4ss&w0rd`) is the value's.
_QUERY_VALUE = re.compile(r"([?&][^=&]*=)(?:[^&]|&(?![^=&]*=))+")
# A SQLite URL names a file, and holds no credentials: its path may hold an "@"
# (`sqlite:////home/me@work/yzos.db`), which is no user's.
_FILE_URL = re.compile(r"sqlite(?:\+\w+)?://", re.IGNORECASE)


def _mask(url: str, query_value: re.Pattern[str]) -> str:
    if _FILE_URL.match(url):
        return url
    url = _USERINFO.sub(r"\1***@", url)
    at = url.find("?")
    return url if at < 0 else url[:at] + query_value.sub(r"\1***", url[at:])


def mask_url(url: str) -> str:
    """`url` taken whole as one URL (a setting's value, such as `database.url`, where a
    password may hold a space or an `@`), with its user and password, and the values of its
    query parameters, replaced by `***`. Text that does not start as a URL is masked as
    mask_url_credentials masks it."""
    if _STARTS_AS_URL.match(url) is None:
        return mask_url_credentials(url)
    return _mask(url, _QUERY_VALUE)


def mask_url_credentials(text: str) -> str:
    """`text` with the user and password of every URL in it, and the values of its query
    parameters, replaced by `***`. A URL in text ends at whitespace: a URL whose password may
    hold a space is masked with mask_url before it joins any text."""
    return _URL.sub(lambda m: _mask(m.group(0), _QUERY_VALUE_IN_TEXT), text)
