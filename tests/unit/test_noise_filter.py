"""noise_filter judges structure only: the same rules for any script or language."""

from __future__ import annotations

import pytest

from yzos_jobs.entity.noise_filter import (
    is_meaningful_summary,
    is_noise,
    is_plausible_project_path,
    normalize_project_path,
)

MARKERS = ("Code", "Volumes", "src", "Projects", "repos", "workspace")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "\t\n",
        "x",
        "我",
        "7",
        "12345",
        "2026-11-29",
        "1.2.3",
        "/Users/me/Code",
        "~/Projects/yzos",
        "./build",
        "C:\\Users\\me\\repo",
        "src/lib/util",
        "node_modules/",
        None,
    ],
)
def test_structural_junk_is_noise(text: str | None) -> None:
    assert is_noise(text)


@pytest.mark.parametrize(
    "text",
    [
        "YZOS Core",
        "Telegram",
        "Cursor",
        "陈晓明",
        "李雷",
        "José Álvarez",
        "Ёжик",
        "v2 launch",
        "Fix login redirect",
        "A/B testing plan",
        "田中さん",
        "ok",
    ],
)
def test_names_are_left_to_the_classifier(text: str) -> None:
    # Apps and people alike pass: deciding "Telegram" is an app is semantic, not structural.
    assert not is_noise(text)


@pytest.mark.parametrize(
    "text",
    [
        "3f2b9c1e-8d4a-4b7e-9f10-2c6d5e8a1b22",
        "/Users/me/Code/yzos",
        "deadbeefcafebabe0123",
        '{"a": 1, "b": [2, 3]}',
        "[1, 2, 3]",
        'Traceback (most recent call last):\n  File "x.py"',
        "",
        "  ",
        "42",
        "a",
    ],
)
def test_machine_text_is_not_a_meaningful_summary(text: str) -> None:
    assert not is_meaningful_summary(text)


@pytest.mark.parametrize(
    "text",
    [
        "Refactored the classifier prompt",
        "和陈晓明确认发布时间",
        "Reviewed PR #42 for the importer",
        "Commit a1b2c3d fix lease renewal",
    ],
)
def test_prose_is_a_meaningful_summary(text: str) -> None:
    assert is_meaningful_summary(text)


@pytest.mark.parametrize(
    ("path", "plausible"),
    [
        ("/Users/me/Code/yzos-core", True),
        ("/Volumes/work/client-site", True),
        ("/home/ana/src/parser/", True),
        ("C:\\Users\\ana\\Projects\\site", True),
        ("/Users/me/Code", False),  # the work directory itself is no project
        ("/Users/me/Downloads/file", False),
        ("/tmp/x", False),
        ("", False),
        (None, False),
        ("/Users/me/Code/项目甲", True),
    ],
)
def test_plausible_project_path(path: str | None, plausible: bool) -> None:
    assert is_plausible_project_path(path, MARKERS) is plausible


@pytest.mark.parametrize(
    ("path", "normalized"),
    [
        ("/Users/me/Code/yzos/", "/Users/me/Code/yzos"),
        ("/Users/me/Code/yzos///", "/Users/me/Code/yzos"),
        ("/Users/me/Code/yzos/README.md", "/Users/me/Code/yzos"),
        ("/Users/me/Code/yzos/.git", "/Users/me/Code/yzos"),
        ("  '/Users/me/Code/yzos'  ", "/Users/me/Code/yzos"),
        ("/", "/"),
    ],
)
def test_normalize_project_path(path: str, normalized: str) -> None:
    assert normalize_project_path(path) == normalized
