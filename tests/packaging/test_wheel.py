"""The built wheel carries everything a command reads: Alembic's environment and revisions, the
commented config.toml and the eval set. The wheel is built as pip builds it and its contents are
run from outside the source tree (the dependencies come from the test environment)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import yzos_jobs
from tests.support.cli import REPO
from yzos_jobs.db.schema_state import head_revision

pytestmark = pytest.mark.slow
NOT_SOURCES = (".git", ".venv", "build", "*.egg-info", "__pycache__", "*.db", "tests", "bench")


@pytest.fixture(scope="module")
def unpacked_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy: pip builds in the tree it is given and would leave build/ in the clone.
    tree = out / "tree"
    shutil.copytree(REPO, tree, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(tree)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = out.glob("yzos_jobs-*.whl")
    site = out / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    return site


def _run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("YZOS_")}
    env["PYTHONPATH"] = str(site)  # before site-packages: the wheel's copy, not the clone
    return subprocess.run(
        [sys.executable, "-m", "yzos_jobs", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_wheel_holds_every_revision_and_the_shipped_files(unpacked_wheel: Path) -> None:
    shipped = unpacked_wheel / "yzos_jobs" / "_shipped"
    revisions = sorted(p.name for p in (REPO / "alembic" / "versions").glob("*.py"))
    assert sorted(p.name for p in (shipped / "alembic" / "versions").glob("*.py")) == revisions
    for name in ("alembic.ini", "alembic/env.py", "alembic/script.py.mako", "config.toml"):
        assert (shipped / name).read_bytes() == (REPO / name).read_bytes(), name
    dataset = "datasets/classifier_eval.jsonl"
    assert (shipped / dataset).read_bytes() == (REPO / dataset).read_bytes()


def test_commands_run_from_the_wheel_in_an_empty_directory(
    unpacked_wheel: Path, tmp_path: Path
) -> None:
    upgrade = _run(unpacked_wheel, tmp_path, "db", "upgrade")
    assert upgrade.returncode == 0, upgrade.stderr
    assert upgrade.stdout.strip().endswith(f"at revision {head_revision()}")
    imported = _run(
        unpacked_wheel, tmp_path, "import", "jsonl", str(REPO / "examples" / "observations.jsonl")
    )
    assert imported.returncode == 0, imported.stderr
    scored = _run(unpacked_wheel, tmp_path, "eval", "--json")
    assert scored.returncode == 0, scored.stderr
    cases = sum(1 for line in (REPO / "datasets" / "classifier_eval.jsonl").open() if line.strip())
    assert json.loads(scored.stdout)["cases"] == cases
    init = _run(unpacked_wheel, tmp_path, "config", "--init")
    assert init.returncode == 0, init.stderr
    assert (tmp_path / "config.toml").read_text() == (REPO / "config.toml").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml", "yzos.db"]


def test_the_wheel_is_the_release_the_package_names(unpacked_wheel: Path, tmp_path: Path) -> None:
    # pip replaces an installed wheel only with a newer version: the one the package declares
    (metadata,) = unpacked_wheel.glob("yzos_jobs-*.dist-info/METADATA")
    declared = next(
        line.split(": ", 1)[1]
        for line in metadata.read_text().splitlines()
        if line.startswith("Version: ")
    )
    assert declared == yzos_jobs.__version__
    shown = _run(unpacked_wheel, tmp_path, "--version")
    assert shown.returncode == 0 and shown.stdout.split()[-1] == declared


def test_a_missing_revision_directory_is_one_line(unpacked_wheel: Path, tmp_path: Path) -> None:
    broken = tmp_path / "site"
    subprocess.run(["cp", "-r", str(unpacked_wheel), str(broken)], check=True)
    subprocess.run(["rm", "-r", str(broken / "yzos_jobs" / "_shipped" / "alembic")], check=True)
    work = tmp_path / "work"
    work.mkdir()
    result = _run(broken, work, "db", "upgrade")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "alembic is missing from this installation" in result.stderr
