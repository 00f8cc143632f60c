"""The real corpus (tests/fixtures/real) laid out as where its files were written."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"

AQUATICAT = "aider/Aquaticat__Monochromatic/.aider.chat.history.md"
FLASK = "aider/Aider-AI__aider/examples/hello-world-flask.md"
HEALTH = "aider/0xf1e__health-analyzer-poc/.aider.chat.history.md"
KEVINMATZ = "aider/kevinmatz__AiderExperiments/aider.chat.history 2023-10-02_1654.md"
AUTOMATAII = "aider/AlanSynn__automataii/.aider.chat.history.md"
WORKTREE = "aider/tom-doerr__simple_test_project/custom_aider_history.md"
TRADEPIRATES = "aider/BartoshMaxim__TradePirates/.aider.chat.history.md"
SUPPLYCHAIN = "aider/87maxi__SupplyChainTracker2/.aider.chat.history.md"
MOZGOSLAV = "aider/AlexShchuka__mozgoslav/.aider.chat.history.md"
ZEN = "aider/BeehiveInnovations__zen-mcp-server/.aider.chat.history.md"

TRIVIVO = "claude-code/-Users-himankdave-Documents-code-personal-gh-trivivo"
REVIEW = f"{TRIVIVO}/83f3bee0-85cf-4a31-99c1-97febffb6011.jsonl"
PLAN = f"{TRIVIVO}/6f2e9e1b-295d-4083-a8a7-32ad7fe5de14.jsonl"
COMMITS = f"{TRIVIVO}/be9a4e78-5796-404d-a12f-e42ae0800d3f.jsonl"
KARACHI = (
    "claude-code/-Users-himankdave-conductor-workspaces-trivivo-karachi/"
    "f3cc9144-4103-439b-81fa-50148bff2373.jsonl"
)
WORCESTER = (
    "claude-code/-Users-himankdave-conductor-workspaces-trivivo-worcester/"
    "b058f6c1-f906-4c53-91b0-8134a610c5ab.jsonl"
)
NANCY = (
    "claude-code/-home-nancy-src-github-com-nansystem-nancy-blog-astro/"
    "e7af5ba5-ee2f-4fa7-a3cb-843f68ff479d.jsonl"
)
DEMO = "claude-code/-path-to-Demo/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
INTERRUPTED = (
    "claude-code/-Users-ob1-projects-opus-hackathon-napoli-matcha/"
    "f98b3209-fb48-4e97-95f3-85f1836b3673.jsonl"
)


def at_rest(path: Path, seconds_ago: float = 2 * 86400) -> None:
    """Make a file look untouched for a while: its sessions count as closed."""
    then = time.time() - seconds_ago
    os.utime(path, (then, then))


def history(root: Path, source: str, directory: str | None = None) -> Path:
    """An aider history at `<root>/<repository>/<its path in the repository>` (the repository
    named as on GitHub, or `directory`)."""
    _, owner_repo, inside = source.split("/", 2)
    target = root / (directory or owner_repo.split("__", 1)[1]) / inside
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REAL / source, target)
    at_rest(target)
    return target


def transcript(root: Path, source: str) -> Path:
    """A Claude Code transcript at `<root>/projects/<encoded cwd>/<session>.jsonl`."""
    target = root / "projects" / source.split("/", 1)[1]
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REAL / source, target)
    at_rest(target)
    return target
