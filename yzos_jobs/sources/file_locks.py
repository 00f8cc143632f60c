"""One process at a time per file and database on a host: before a daemon imports a file it
takes an exclusive, non-blocking `flock` on a lock file named by the digest of the database it
writes to and the file's path (daemons on two databases each import the file), in the
runtime directory (`$YZOS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/yzos-jobs`, else
`<tmp>/yzos-jobs-<uid>`). A file whose lock another process holds is left to it this run; the
lock goes when the holder closes it or dies. Daemons on other hosts have their own files and
their own locks: the database's importer rows keep what they write apart.

The shared temporary folder is writable by every user, who could make `<tmp>/yzos-jobs-<uid>`
first: the lock folders are used only when they are this user's own folders (not a link), with
no access for anyone else, and a lock file is never opened through a link."""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from blake3 import blake3


class ForeignLockFolder(PermissionError):
    """A lock folder that is not this user's own: another user made it, or it is a link."""


def runtime_dir() -> Path:
    explicit = os.environ.get("YZOS_RUNTIME_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return Path(xdg) / "yzos-jobs"
    return _shared_tmp_dir()


def _shared_tmp_dir() -> Path:
    return Path(tempfile.gettempdir()) / f"yzos-jobs-{os.getuid()}"


def lock_path(path: Path, database: str = "") -> Path:
    digest = blake3(database.encode() + b"\0" + os.fsencode(path)).hexdigest()[:32]
    return runtime_dir() / "locks" / f"{digest}.lock"


def _own_folder(folder: Path) -> None:
    """Make `folder` (mode 0700) or check that it is this user's own folder, closed to others
    (a folder of ours left open is closed); ForeignLockFolder where it is not. Checked at every
    lock: the folder may be removed (a cleaner of `/tmp`) and made again by someone else while
    the daemon runs."""
    with suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    found = os.lstat(folder)
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
        raise ForeignLockFolder(
            f"{folder}: the lock folder is not this user's own (a link, or made by another "
            "user); set YZOS_RUNTIME_DIR to a folder of your own"
        )
    if stat.S_IMODE(found.st_mode) & 0o077:
        os.chmod(folder, 0o700)


@contextmanager
def file_lock(path: Path, database: str = "") -> Iterator[bool]:
    """Hold the host-wide lock of `path` for imports into `database` for the block, if no other
    process holds it; yields whether this process holds it."""
    target = lock_path(path, database)
    root = target.parent.parent
    if root == _shared_tmp_dir():
        _own_folder(root)  # in a folder every user may write to
    else:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)  # a folder the person chose
    _own_folder(target.parent)
    fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing the descriptor releases the lock
