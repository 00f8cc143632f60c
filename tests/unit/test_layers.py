"""Imports run one way (docs/ARCHITECTURE.md): each part of the package imports only the parts
below it, no two parts and no two modules import each other, even through others.

Every import counts: `import x`, `from x import y`, relative imports (`from ..entity import
classifier`), imports inside functions or under TYPE_CHECKING, and `importlib.import_module` with a
literal name. A part of the package missing from the table below fails until it is placed.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "yzos_jobs"

# What each part of the package may import from the rest of it (top-level modules and
# subpackages by name), lowest first.
ALLOWED: dict[str, set[str]] = {
    "kinds": set(),
    "text": set(),
    "files": set(),
    "redact": set(),
    "counters": set(),
    "shipped": set(),
    "config": {"kinds"},
    "inference": {"config", "counters", "kinds", "redact"},
    "logging": {"config", "redact"},
    "db": {"config", "kinds", "logging", "inference", "redact", "shipped"},
    "jobcontext": {"config", "db", "inference"},
    "observe": {"db", "files", "text"},
    "entity": {"config", "counters", "db", "inference", "jobcontext", "kinds", "logging", "text"},
    "supply": {"counters", "db", "entity", "inference", "jobcontext", "logging"},
    "importers": {"counters", "db", "entity", "files", "jobcontext", "kinds", "supply", "text"},
    "sources": {"counters", "db", "files", "importers", "jobcontext", "logging", "observe"},
    "maintain": {
        "counters",
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
# The entry points and the test kit: they sit above everything, may import any part below, and
# nothing in ALLOWED may import them.
ENTRY_POINTS = {
    "__init__",
    "__main__",
    "cli",
    "clock_steps",
    "config_report",
    "daemon",
    "health",
    "metrics",
    "operations",
    "output_stream",
    "ops_http",
    "probe_deadline",
    "progress",
    "review_render",
    "review_reports",
    "runtime",
    "status",
    "testing",
}
# Narrower rules inside an allowed edge: (importer, imported) -> the modules it may name.
ONLY: dict[tuple[str, str], set[str]] = {
    ("db", "inference"): {"yzos_jobs.inference.contract"},  # the contract types, never a client
    ("importers", "entity"): {"yzos_jobs.entity.noise_filter"},
}


@dataclass
class ImportGraph:
    """Who imports whom inside one package, module by module."""

    package: str
    edges: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    unreadable: list[str] = field(default_factory=list)  # import_module with a computed name

    def part(self, module: str) -> str:
        rest = module.removeprefix(self.package).lstrip(".")
        return rest.split(".")[0] if rest else "__init__"

    def part_edges(self) -> dict[tuple[str, str], set[str]]:
        """(importing part, imported part) -> the imported modules, between different parts."""
        found: dict[tuple[str, str], set[str]] = defaultdict(set)
        for source, targets in self.edges.items():
            for target in targets:
                if self.part(source) != self.part(target):
                    found[(self.part(source), self.part(target))].add(target)
        return found


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _exists(root: Path, module: str) -> bool:
    base = root.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of `from <level dots><name> import …` written in `module`."""
    if level == 0:
        return name or ""
    anchor = module.split(".")
    anchor = anchor if is_package else anchor[:-1]
    anchor = anchor[: len(anchor) - (level - 1)]
    return ".".join([*anchor, *([name] if name else [])])


def _import_module_literal(node: ast.Call) -> str | None:
    """The name passed to importlib.import_module / __import__, if the call is one; "" when the
    name is computed (the checker cannot follow it)."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if called not in ("import_module", "__import__"):
        return None
    if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return ""


def imports_of(root: Path, package: str) -> ImportGraph:
    """Every import between the modules of `root/package`, resolved to module names."""
    graph = ImportGraph(package)
    for path in sorted((root / package).rglob("*.py")):
        module = _module_name(path, root)
        is_package = path.name == "__init__.py"
        named: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, is_package, node.level, node.module)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    # `from yzos_jobs.entity import noise_filter` names the module it imports
                    named.add(sub if _exists(root, sub) else base)
            elif (
                isinstance(node, ast.Call) and (literal := _import_module_literal(node)) is not None
            ):
                if literal == "":
                    graph.unreadable.append(f"{module}: import_module with a computed name")
                else:
                    dots = len(literal) - len(literal.lstrip("."))
                    named.add(_resolve(module, is_package, dots, literal.lstrip(".") or None))
        inside = {n for n in named if n == package or n.startswith(package + ".")}
        graph.edges[module].update(inside - {module})
    return graph


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph, as the path that closes it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start)):
            return found
    return None


def violations(
    root: Path,
    package: str,
    allowed: dict[str, set[str]],
    entry_points: set[str],
    only: dict[tuple[str, str], set[str]],
) -> list[str]:
    """What breaks the layering of `root/package`, one line each (empty: nothing)."""
    graph = imports_of(root, package)
    wrong = list(graph.unreadable)
    found = graph.part_edges()
    parts = {graph.part(m) for m in graph.edges}
    wrong += [
        f"{p} is in no layer: place it in the table"
        for p in sorted(parts)
        if p not in allowed and p not in entry_points
    ]
    for (source, target), modules in sorted(found.items()):
        names = ", ".join(sorted(modules))
        if source in allowed and target in entry_points:
            wrong.append(f"{source} imports the entry point {names}")
        elif source in allowed and target not in allowed[source]:
            wrong.append(f"{source} imports {names}")
        elif (source, target) in only and modules - only[(source, target)]:
            wrong.append(f"{source} imports {', '.join(sorted(modules - only[(source, target)]))}")
    part_graph: dict[str, set[str]] = defaultdict(set)
    for source, target in found:
        part_graph[source].add(target)
    if cycle := _cycle(part_graph):
        wrong.append("packages import each other: " + " -> ".join(cycle))
    if cycle := _cycle(graph.edges):
        wrong.append("modules import each other: " + " -> ".join(cycle))
    return wrong


def test_the_package_imports_one_way() -> None:
    assert violations(PACKAGE.parent, PACKAGE.name, ALLOWED, ENTRY_POINTS, ONLY) == []


# -- the checker fails on each way of breaking the layering ----------------------------------

SMALL_TABLE: dict[str, set[str]] = {"db": set(), "entity": {"db"}, "importers": {"db", "entity"}}


def _tree(root: Path, files: dict[str, str]) -> Path:
    """A package `pkg` under `root`, with a cli entry point over three layers."""
    base = {
        "pkg/__init__.py": "",
        "pkg/cli.py": "from pkg.importers import reader\n",
        "pkg/db/__init__.py": "",
        "pkg/db/rows.py": "",
        "pkg/entity/__init__.py": "",
        "pkg/entity/classifier.py": "from pkg.db import rows\n",
        "pkg/importers/__init__.py": "",
        "pkg/importers/reader.py": "from pkg.entity import classifier\n",
    }
    for name, text in {**base, **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _check(root: Path) -> list[str]:
    return violations(root, "pkg", SMALL_TABLE, {"__init__", "cli"}, {})


def test_a_well_layered_tree_passes(tmp_path: Path) -> None:
    assert _check(_tree(tmp_path, {})) == []


@pytest.mark.parametrize(
    ("files", "reported"),
    [
        pytest.param(
            {"pkg/db/rows.py": "from ..entity import classifier\n"},
            "db imports pkg.entity.classifier",
            id="relative-import-across-layers",
        ),
        pytest.param(
            {"pkg/db/rows.py": "import importlib\nimportlib.import_module('pkg.entity')\n"},
            "db imports pkg.entity",
            id="import-module-with-a-literal",
        ),
        pytest.param(
            {"pkg/db/rows.py": "from importlib import import_module\nimport_module(NAME)\n"},
            "pkg.db.rows: import_module with a computed name",
            id="import-module-with-a-computed-name",
        ),
        pytest.param(
            {"pkg/newthing.py": "from pkg import cli\n"},
            "newthing is in no layer: place it in the table",
            id="unlisted-module-importing-cli",
        ),
        pytest.param(
            {"pkg/entity/classifier.py": "def later():\n    from pkg import cli\n"},
            "entity imports the entry point pkg.cli",
            id="lazy-import-of-an-entry-point",
        ),
        pytest.param(
            {"pkg/db/rows.py": "from pkg.importers import reader\n"},
            "packages import each other: importers -> entity -> db -> importers",
            id="package-cycle",
        ),
        pytest.param(
            {"pkg/db/a.py": "from pkg.db import b\n", "pkg/db/b.py": "from . import a\n"},
            "modules import each other: pkg.db.a -> pkg.db.b -> pkg.db.a",
            id="module-cycle-inside-a-package",
        ),
    ],
)
def test_each_way_of_breaking_the_layering_fails(
    tmp_path: Path, files: dict[str, str], reported: str
) -> None:
    assert reported in _check(_tree(tmp_path, files))


def test_a_package_cycle_fails_even_where_each_edge_is_allowed(tmp_path: Path) -> None:
    """A table that allows both directions still cannot hide the cycle."""
    table = {**SMALL_TABLE, "db": {"importers"}}
    root = _tree(tmp_path, {"pkg/db/rows.py": "from pkg.importers import reader\n"})
    found = violations(root, "pkg", table, {"__init__", "cli"}, {})
    assert "packages import each other: importers -> entity -> db -> importers" in found


def _documented_layers() -> dict[str, set[str]]:
    """docs/ARCHITECTURE.md's layer table: each part it names -> the parts it says it may import
    (None for the entry points, which may import anything)."""
    doc = (PACKAGE.parent / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table: dict[str, set[str]] = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        parts = [p.strip("`").removesuffix(".py").rstrip("/") for p in cells[0].split(", ")]
        may = {w.strip("`").split(".")[0] for w in cells[2].replace(" only", "").split(", ")}
        for part in parts:
            table[part] = may
    return table


def test_the_architecture_doc_shows_the_table_this_test_enforces() -> None:
    documented = _documented_layers()
    assert set(documented) == set(ALLOWED) | ENTRY_POINTS - {"__init__", "__main__"}
    wrong = {
        part: sorted(documented[part] ^ allowed)
        for part, allowed in ALLOWED.items()
        if documented[part] != (allowed or {"nothing of the package"})
    }
    assert wrong == {}
