"""The command's stdout: what its encoding cannot hold is escaped, and a result that cannot be
written (a full disk, a stdout closed, a pipe whose reader left) is found where it happened,
said once by the command line, and not written again as Python exits."""

from __future__ import annotations

import errno
import io
import os
import sys

# A write to stdout that failed for want of room or of stdout itself (`> /dev/full`, `>&-`):
# the command's result is lost, which one line says. A pipe closed early (`| head -1`) is what
# its reader asked for: the command ends quietly, exit 1, as click ends it.
LOST = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EBADF, errno.EPIPE)


class ClosedOutput(io.TextIOBase):
    """stdout where the command was started with it closed: a write fails as on a closed
    descriptor, and so does the flush after one, so the command says its result was lost."""

    def __init__(self) -> None:
        super().__init__()
        self.written = False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.written = True
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        if self.written:
            raise OSError(errno.EBADF, "standard output is closed")


def prepare() -> None:
    """Before any command prints: a stdout closed at start (`>&-`) fails where it is written,
    and one whose encoding cannot hold a character writes it as a backslash escape (`\\u9648`)
    instead of raising: under a Latin-1 locale, or cp1252 redirected on Windows, a CJK name
    would otherwise end a listing in a traceback. stderr already does so (Python's default)."""
    if sys.stdout is None:
        sys.stdout = ClosedOutput()
    buffer = getattr(sys.stdout, "buffer", None)
    if isinstance(buffer, io.RawIOBase):
        # unbuffered (`python -u`, PYTHONUNBUFFERED): a write that failed would leave nothing
        # behind to tell it by; a buffer flushed at each line keeps what could not be written
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(buffer),
            encoding=sys.stdout.encoding,
            errors=sys.stdout.errors,
            line_buffering=True,
        )
    reconfigure = getattr(sys.stdout, "reconfigure", None)  # only a TextIOWrapper has it
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")


def lost() -> OSError | None:
    """Why stdout cannot take what it holds, or None where it can: an error raised while the
    output was written is the output's only if stdout still refuses it."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        if exc.errno in LOST:
            return exc
        raise
    return None


def drop() -> None:
    """What stdout still holds goes nowhere: Python would try to write it again as it exits
    and print a warning of its own."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor: a closed stdout
        sys.stdout = io.StringIO()
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
