"""One line of a JSON-lines file as a record: what the standard's JSON allows is read whatever
parser reads it fastest; anything else is the line's error, in words."""

from __future__ import annotations

import pytest

from yzos_jobs.importers.base import parse_json_object
from yzos_jobs.importers.records import ImportRecordError


@pytest.mark.parametrize(
    ("raw", "field", "value"),
    [
        (b'{"type": "user", "n": 3}', "n", 3),
        (b'{"n": 123456789012345678901234567890}', "n", 1.2345678901234568e29),  # past 64 bits
        (b'{"x": NaN}', "x", None),  # read as before; NaN is a float that equals nothing
        (b'{"t": "caf\xc3\xa9"}', "t", "café"),
        (b'{"t": "bad \xff byte"}', "t", "bad \ufffd byte"),  # invalid UTF-8 replaced
        (b'{"a": 1, "a": 2}', "a", 2),  # the last of a repeated key
    ],
)
def test_a_record_is_read_as_the_standard_library_reads_it(
    raw: bytes, field: str, value: object
) -> None:
    record = parse_json_object(raw, "f:1")
    if value is None:
        assert record[field] != record[field]
    else:
        assert record[field] == value


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b'{"a": ', "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, "not JSON"),
    ],
)
def test_what_is_no_record_is_the_lines_error(raw: bytes, error: str) -> None:
    with pytest.raises(ImportRecordError, match=error):
        parse_json_object(raw, "f:1")
