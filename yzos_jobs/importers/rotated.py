"""Where an observer's file went when it was rotated by renaming (logrotate's `out.jsonl.1` or
`out.jsonl-20261207`, or a copy made before truncating it in place): the records written after
the last read are in that file now, and the new file under the old name starts empty."""

from __future__ import annotations

from pathlib import Path
from stat import S_ISREG

from yzos_jobs.db.importer_state import FileMark
from yzos_jobs.importers.base import head_hash

# A rotated file compressed: its bytes are not the records' (and it was read before it was
# compressed, or compressed with the tail unread: that tail is not read from the archive)
_COMPRESSED = frozenset({".gz", ".bz2", ".xz", ".zst", ".lz4", ".z", ".zip"})


def rotated_copy(path: Path, previous: FileMark) -> Path | None:
    """The file beside `path`, named after it (`<name>.<suffix>` or `<name>-<suffix>`), that
    begins with what the last read of `path` saw (its first bytes and those before where the
    read ended): the file as it was, renamed or copied, with whatever was written to it since;
    None where there is none. Of several (a copy a person made earlier beside the rotated
    file), the one holding the most, then the one written last."""
    try:
        siblings = list(path.parent.iterdir())
    except OSError:
        return None
    found: list[tuple[int, int, Path]] = []
    for sibling in siblings:
        name = sibling.name
        if (
            sibling == path
            or not name.startswith((f"{path.name}.", f"{path.name}-"))
            or sibling.suffix.lower() in _COMPRESSED
        ):
            continue
        try:
            found_stat = sibling.stat()
            if not S_ISREG(found_stat.st_mode) or found_stat.st_size < previous.size:
                continue
            if head_hash(sibling, previous.size) == previous.head_hash:
                found.append((found_stat.st_size, found_stat.st_mtime_ns, sibling))
        except OSError:
            continue  # unreadable, or gone meanwhile: not the one
    return max(found)[2] if found else None
