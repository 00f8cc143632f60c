"""Files a user or an observer names: only regular files are opened, reads are bounded, and a
directory that cannot be listed is reported, not skipped in silence.

A FIFO would block `open()` forever and a character device (/dev/zero) never ends, so a file is
opened without blocking and checked with fstat before anything is read from it.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO


class NotRegularFile(OSError):
    """A FIFO, a device, a socket or a directory where a file was expected."""


class FileTooLarge(OSError):
    """A file longer than the reader's bound."""


def describe(exc: OSError) -> str:
    """Why a file was not read, as the end of one line: "not a regular file", "larger than …
    bytes", "cannot read (Permission denied)"."""
    if isinstance(exc, NotRegularFile | FileTooLarge):
        return str(exc)
    return f"cannot read ({exc.strerror or exc.__class__.__name__})"


def open_regular(path: Path) -> BinaryIO:
    """Open `path` for binary reading if it is a regular file (symlinks followed), else raise
    NotRegularFile. O_NONBLOCK makes opening a FIFO return at once; on a regular file it has no
    effect."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile("not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """The whole content of a regular file of at most `max_bytes` bytes."""
    with open_regular(path) as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLarge(f"larger than {max_bytes} bytes")
    return data


def walk(
    top: Path, on_error: Callable[[Path, OSError], None]
) -> Iterator[tuple[Path, list[str], list[str]]]:
    """os.walk, with every directory that cannot be listed passed to `on_error` instead of
    being skipped without a word. A symlinked directory is entered (a project kept on another
    disk, `~/Code/app -> /mnt/ssd/app`) once however many links lead to it, unless it lies
    inside `top` (walked as it is anyway) or holds the folder the link is in (a link to the
    home folder or to `/`, a loop), which would search everything again."""

    def report(exc: OSError) -> None:
        on_error(Path(exc.filename) if exc.filename else top, exc)

    real_top = os.path.realpath(top)
    linked: set[str] = set()  # the folders links led to
    for root, dirs, files in os.walk(top, onerror=report, followlinks=True):
        above = (os.path.abspath(root), os.path.realpath(root))
        kept = []
        for name in dirs:
            path = os.path.join(root, name)
            if os.path.islink(path):
                target = os.path.realpath(path)
                if (
                    _within(target, real_top)
                    or any(_within(here, target) for here in above)
                    or target in linked
                ):
                    continue
                linked.add(target)
            kept.append(name)
        dirs[:] = kept
        yield Path(root), dirs, files


def _within(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies below it (both absolute)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def find_regular_files(
    top: Path, pattern: str, on_error: Callable[[Path, OSError], None]
) -> list[Path]:
    """Regular files whose name matches `pattern` below `top`, resolved and sorted. Anything else
    by that name (a FIFO, a device, a dangling link) and every directory that cannot be listed
    is passed to `on_error`."""
    found: list[Path] = []
    for root, _dirs, files in walk(top, on_error):
        for name in files:
            if not fnmatch.fnmatchcase(name, pattern):
                continue
            path = root / name
            try:
                if not stat.S_ISREG(os.stat(path).st_mode):
                    raise NotRegularFile("not a regular file")
            except OSError as exc:
                on_error(path, exc)
                continue
            found.append(path.resolve())
    return sorted(found)
