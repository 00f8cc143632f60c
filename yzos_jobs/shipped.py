"""Files the package ships beside its code: Alembic's environment and revisions, the commented
config.toml and the classifier's eval set. Installed from a wheel they sit in
`yzos_jobs/_shipped/` (the build copies them there, see setup.py); run from a source tree or an
editable install, they are read where the tree keeps them."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
PACKAGED = PACKAGE / "_shipped"
# Only a source tree has a pyproject.toml beside the package (site-packages/alembic is the
# library, not these migrations).
SOURCE_TREE = PACKAGE.parent if (PACKAGE.parent / "pyproject.toml").is_file() else None


class ShippedFileMissing(Exception):
    """The installation lacks a file the package ships (a broken or partial install)."""


def shipped_path(relative: str) -> Path:
    """Where the shipped file or directory `relative` (as the source tree names it) is."""
    for base in (PACKAGED, SOURCE_TREE):
        if base is not None and (base / relative).exists():
            return base / relative
    raise ShippedFileMissing(
        f"{relative} is missing from this installation ({PACKAGED}); reinstall yzos-jobs"
    )


def alembic_ini() -> Path:
    return shipped_path("alembic.ini")


def alembic_dir() -> Path:
    return shipped_path("alembic")


def config_template() -> Path:
    """The commented config.toml: every key with its default and range."""
    return shipped_path("config.toml")


def eval_set() -> Path:
    """The labelled cases `yzos-jobs eval` scores when given no dataset."""
    return shipped_path("datasets/classifier_eval.jsonl")
