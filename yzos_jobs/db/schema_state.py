"""Is the database's schema the one this version needs? Answered without loading Alembic: the
current revision is a row of `alembic_version`, the head is read off the revision files."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from sqlalchemy import Engine, inspect, text

from yzos_jobs.shipped import ShippedFileMissing, alembic_dir

_REVISION = re.compile(r'^revision = "(\w+)"$', re.MULTILINE)
_DOWN = re.compile(r'^down_revision = (?:"(\w+)"|None)$', re.MULTILINE)


class SchemaNotReady(Exception):
    """The database is not at the head revision and may not be migrated automatically."""


class RevisionRefused(Exception):
    """Alembic cannot go to the revision asked for (unknown, or the wrong direction)."""


def migrations_dir() -> Path:
    """Alembic's environment and revisions, wherever this installation keeps them."""
    try:
        return alembic_dir()
    except ShippedFileMissing as exc:
        raise SchemaNotReady(str(exc)) from None


@lru_cache(maxsize=1)
def _revisions() -> tuple[frozenset[str], frozenset[str]]:
    """(every revision this installation ships, those another revision builds on)."""
    revisions, parents = set(), set()
    for script in (migrations_dir() / "versions").glob("*.py"):
        source = script.read_text(encoding="utf-8")
        if (rev := _REVISION.search(source)) is None:
            continue
        revisions.add(rev.group(1))
        if (down := _DOWN.search(source)) is not None and down.group(1):
            parents.add(down.group(1))
    return frozenset(revisions), frozenset(parents)


def known_revision(revision: str) -> bool:
    """Whether this installation ships `revision` (a database a newer yzos-jobs migrated is at
    one it does not)."""
    return revision in _revisions()[0]


@lru_cache(maxsize=1)
def head_revision() -> str:
    """The revision no other revision builds on."""
    versions = migrations_dir() / "versions"
    revisions, parents = _revisions()
    heads = sorted(revisions - parents)
    if len(heads) != 1:
        raise SchemaNotReady(f"migrations at {versions} have {len(heads)} heads: {heads}")
    return heads[0]


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
