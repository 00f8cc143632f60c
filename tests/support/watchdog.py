"""A generous deadline for work that must end, where hanging is the failure: past it, every
thread's stack is printed and the process ends (the test fails as a crashed one) — the only way
out of C code that holds the interpreter, such as a regular expression backtracking."""

from __future__ import annotations

import faulthandler
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def ends_within(seconds: float) -> Iterator[None]:
    faulthandler.dump_traceback_later(seconds, exit=True, file=sys.__stderr__)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
