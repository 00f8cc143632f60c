"""Imports run one way (docs/design.md, Layout): each package imports only the ones below it."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "yzos_jobs"

# What each part of the package may import from the rest of it (top-level modules and
# subpackages by name). The entry points (cli, daemon, status, review, runtime) and the test kit
# sit above everything and are not listed.
ALLOWED: dict[str, set[str]] = {
    "kinds": set(),
    "text": set(),
    "files": set(),
    "shipped": set(),
    "config": {"kinds"},
    "inference": {"config", "kinds"},
    "logging": {"config", "inference"},
    "db": {"config", "kinds", "logging", "inference", "shipped"},
    "jobcontext": {"config", "db", "inference"},
    "observe": {"db", "files", "text"},
    "entity": {"config", "db", "inference", "jobcontext", "kinds", "logging", "importers"},
    "supply": {"db", "entity", "inference", "jobcontext", "logging"},
    "importers": {"db", "entity", "files", "jobcontext", "kinds", "supply", "text"},
    "sources": {"db", "files", "importers", "jobcontext", "logging", "observe"},
    "maintain": {
        "db",
        "entity",
        "inference",
        "jobcontext",
        "kinds",
        "logging",
        "sources",
        "supply",
    },
}
# Narrower rules inside an allowed edge: (importer, imported) -> the modules it may name.
ONLY: dict[tuple[str, str], set[str]] = {
    ("db", "inference"): {"yzos_jobs.inference.contract"},  # the contract types, never a client
    ("logging", "inference"): {"yzos_jobs.inference.redact"},
    ("entity", "importers"): {"yzos_jobs.importers.digests"},  # eval-triage rebuilds digests
    ("importers", "entity"): {"yzos_jobs.entity.noise_filter"},
}


def _part(module: str) -> str:
    return module.split(".")[1]


def imports() -> dict[tuple[str, str], set[str]]:
    """(importing part, imported part) -> the imported modules, over the whole package."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        source = rel.parts[1]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
                if (PACKAGE.parent / node.module.replace(".", "/")).is_dir():
                    # `from yzos_jobs.entity import noise_filter` names the module it imports
                    names = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("yzos_jobs.") and _part(name) != source:
                    found[(source, _part(name))].add(name)
    return found


def test_each_part_imports_only_what_is_below_it() -> None:
    wrong = sorted(
        f"{source} imports {', '.join(sorted(modules))}"
        for (source, target), modules in imports().items()
        if source in ALLOWED and target not in ALLOWED[source]
    )
    assert wrong == []


def test_narrow_edges_name_only_their_modules() -> None:
    found = imports()
    wrong = sorted(
        f"{source} imports {', '.join(sorted(found[(source, target)] - allowed))}"
        for (source, target), allowed in ONLY.items()
        if found.get((source, target), set()) - allowed
    )
    assert wrong == []


def test_nothing_below_the_entry_points_imports_them() -> None:
    entry_points = {"cli", "daemon", "status", "review", "runtime", "testing", "__main__"}
    wrong = sorted(
        f"{source} imports {target}"
        for (source, target) in imports()
        if target in entry_points and source in ALLOWED
    )
    assert wrong == []
