"""Finding the files of each source: Claude Code transcripts below their directories, aider
histories below the configured roots (depth-limited, never inside .git, node_modules, virtual
environments or build output), JSONL files named or found below directories."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from yzos_jobs.files import find_regular_files, walk

OnError = Callable[[Path, OSError], None]

AIDER_HISTORY = ".aider.chat.history.md"
# Directories that hold tools, dependencies or build output, never a person's aider history.
NOT_ENTERED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "__pycache__",
        "site-packages",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
        ".gradle",
        ".next",
        "target",
        "dist",
        "build",
        "Library",
    }
)


_VARIABLE = re.compile(r"\$(?:(\w+)|\{(\w+)\})")


# What `stat` says of a path that is not there: gone, below a file, through a loop of links, or
# longer than the system takes. Any other refusal (a folder this user cannot enter) leaves it
# possibly there.
_NOT_THERE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG})


def _exists(path: Path) -> bool:
    """Whether `path` exists, or may: a path `stat` is refused on counts as there, so that
    reading it reports why it was not read rather than it being passed over as not
    configured."""
    try:
        path.stat()
    except OSError as exc:
        return exc.errno not in _NOT_THERE
    return True


def _kind(path: Path, on_error: OnError) -> str | None:
    """ "dir", "file" (anything else that is not a folder: the reader says what it is) or None
    where `path` is not there, or cannot be looked at (passed to `on_error`: a folder this user
    cannot enter is one line, and the other sources are read)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno not in _NOT_THERE:
            on_error(path, exc)
        return None
    return "dir" if stat.S_ISDIR(mode) else "file"


def expand_paths(configured: Iterable[str]) -> tuple[list[Path], list[Path]]:
    """The configured paths with `~` and environment variables (`$NAME`, `${NAME}`) expanded:
    (those that exist, those that do not). A path naming a variable that is not set, or is
    empty, is passed over (`$CLAUDE_CONFIG_DIR/projects` where Claude Code keeps its default
    folder), unless a folder of that very name exists; a folder named twice is read once."""
    found: list[Path] = []
    missing: list[Path] = []
    seen: set[str] = set()
    for text in configured:
        values = [os.environ.get(a or b, "") for a, b in _VARIABLE.findall(text)]
        if all(values):
            path = Path(_VARIABLE.sub(lambda m: os.environ[m.group(1) or m.group(2)], text))
        elif _exists(path := Path(text).expanduser()):
            pass  # a folder whose name holds a `$` (`~/my$stuff`)
        else:
            continue  # a variable not set: nothing is configured there
        path = path.expanduser()
        key = os.path.normcase(os.path.abspath(path))
        if key in seen:
            continue
        seen.add(key)
        (found if _exists(path) else missing).append(path)
    return found, missing


def _virtual_env(path: Path) -> bool:
    """A Python virtual environment, whatever its name (`env`, `.direnv/python-3.11`, …). A folder
    this user cannot enter is no environment here: walking into it reports that it cannot be
    listed."""
    try:
        return (path / "pyvenv.cfg").is_file()
    except OSError:
        return False


def aider_histories(roots: Iterable[Path], max_depth: int, on_error: OnError) -> list[Path]:
    """Every aider history at most `max_depth` directories below a root (a root that is a file
    is taken as a history itself)."""
    found: set[Path] = set()
    for root in roots:
        kind = _kind(root, on_error)
        if kind == "file":
            found.add(root.resolve())
        if kind != "dir":
            continue
        base_depth = len(root.parts)
        for here, subdirs, files in walk(root, on_error):
            if AIDER_HISTORY in files and _kind(here / AIDER_HISTORY, on_error) == "file":
                found.add((here / AIDER_HISTORY).resolve())
            depth = len(here.parts) - base_depth
            subdirs[:] = (
                []
                if depth >= max_depth
                else [d for d in subdirs if d not in NOT_ENTERED and not _virtual_env(here / d)]
            )
    return sorted(found)


def files_below(paths: Iterable[Path], pattern: str, on_error: OnError) -> list[Path]:
    """Files named directly, and those matching `pattern` below directories."""
    found: set[Path] = set()
    for path in paths:
        kind = _kind(path, on_error)
        if kind == "dir":
            found.update(find_regular_files(path, pattern, on_error))
        elif kind == "file":
            found.add(path.resolve())
    return sorted(found)
