"""A response body read under a size bound, decompressed here where the server compressed it.

A reply larger than any the request could want (a server gone wrong, a base URL pointing at a
file server, a hostile proxy) must not be read into memory whole: past `max_bytes` of what the
body holds, reading stops with `ReplyTooLarge`. The bound counts the body as decoded, so the
transport decodes gzip and deflate itself, a chunk at a time with the inflater told how much it
may give back (a few kilobytes can inflate to gigabytes), and hands the client the body without
its `Content-Encoding`. A coding it cannot bound that way (brotli, zstd, two codings in a row) is
`ReplyEncoded`. The request asks for no compression, so most servers never send any; some
gateways compress whatever they are asked.

Both errors are `OpenAIError`s, which the OpenAI client passes on as they are instead of retrying
the request.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator

from openai import OpenAIError

# What a Content-Encoding may say of a body sent as it is (`none` is a proxy's way of saying so).
_AS_IS = frozenset({"", "identity", "none"})
# zlib's window bits: a gzip member, a zlib stream, and raw deflate (what some servers send as
# `deflate`).
_GZIP_BITS, _ZLIB_BITS, _RAW_BITS = 31, 15, -15


class ReplyUnread(OpenAIError):
    """A response body the transport would not read."""


class ReplyTooLarge(ReplyUnread):
    def __init__(self, limit: int) -> None:
        super().__init__(f"reply larger than {limit} bytes")
        self.limit = limit


class ReplyEncoded(ReplyUnread):
    def __init__(self, encoding: str) -> None:
        super().__init__(f"reply compressed in a way that cannot be read bounded ({encoding})")


def codings(headers: Iterable[tuple[bytes, bytes]]) -> list[str]:
    """The content codings applied to a body, in order, from every Content-Encoding line (a
    server may send several, and one may list several), leaving out those that change nothing."""
    found: list[str] = []
    for key, value in headers:
        if key.lower() == b"content-encoding":
            for coding in value.decode("latin-1").split(","):
                if coding.strip().lower() not in _AS_IS:
                    found.append(coding.strip().lower())
    return found


def without_codings(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers of a body handed on decoded: no Content-Encoding, no Content-Length (the
    length of the encoded body)."""
    dropped = (b"content-encoding", b"content-length")
    return [(k, v) for k, v in headers if k.lower() not in dropped]


def check_codings(found: list[str]) -> None:
    """Raise `ReplyEncoded` unless the body is sent as it is or in one coding read here."""
    if len(found) > 1 or (found and found[0] not in ("gzip", "x-gzip", "deflate")):
        raise ReplyEncoded(", ".join(found))


def bounded(chunks: Iterator[bytes], found: list[str], max_bytes: int) -> Iterator[bytes]:
    """The body's bytes as decoded (`found`: its codings, checked by `check_codings`), ending
    with `ReplyTooLarge` once more than `max_bytes` would be given."""
    given = 0
    if not found:
        for chunk in chunks:
            given += len(chunk)
            if given > max_bytes:
                raise ReplyTooLarge(max_bytes)
            yield chunk
        return
    bits = _GZIP_BITS if found[0] in ("gzip", "x-gzip") else _ZLIB_BITS
    inflater = zlib.decompressobj(bits)
    first = True
    for chunk in chunks:
        if first and bits == _ZLIB_BITS and chunk:
            first = False
            try:
                inflater.copy().decompress(chunk[:64])
            except zlib.error:
                inflater = zlib.decompressobj(_RAW_BITS)  # deflate sent without its zlib header
        pending = chunk
        while pending:
            try:
                out = inflater.decompress(pending, max_bytes - given + 1)
            except zlib.error as exc:
                raise ReplyEncoded(f"{found[0]}, not readable: {exc}") from None
            given += len(out)
            if given > max_bytes:
                raise ReplyTooLarge(max_bytes)
            if out:
                yield out
            pending = inflater.unconsumed_tail
    tail = inflater.flush()
    if given + len(tail) > max_bytes:
        raise ReplyTooLarge(max_bytes)
    if tail:
        yield tail
