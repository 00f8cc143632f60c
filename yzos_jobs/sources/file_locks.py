"""One process at a time per file on a host: before a daemon imports a file it takes an
exclusive, non-blocking `flock` on a lock file named by the digest of the file's path, in the
runtime directory (`$YZOS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/yzos-jobs`, else
`<tmp>/yzos-jobs-<uid>`). A file whose lock another process holds is left to it this run; the
lock goes when the holder closes it or dies. Daemons on other hosts have their own files and
their own locks: the database's importer rows keep what they write apart."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from blake3 import blake3


def runtime_dir() -> Path:
    explicit = os.environ.get("YZOS_RUNTIME_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return Path(xdg) / "yzos-jobs"
    return Path(tempfile.gettempdir()) / f"yzos-jobs-{os.getuid()}"


def lock_path(path: Path) -> Path:
    return runtime_dir() / "locks" / f"{blake3(os.fsencode(path)).hexdigest()[:32]}.lock"


@contextmanager
def file_lock(path: Path) -> Iterator[bool]:
    """Hold the host-wide lock of `path` for the block, if no other process holds it; yields
    whether this process holds it."""
    target = lock_path(path)
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing the descriptor releases the lock
