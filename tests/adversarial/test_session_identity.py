"""Hostile session structure costs nothing: a Claude Code session id reused in another project
directory is another session of that project; a commit's subject is its message, not a file a
heredoc wrote before it; an aider line still being written is read once it is complete; two
byte-identical aider sessions are two sessions. Each through the real CLI, on both backends."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sqlalchemy import select

from tests.adversarial.importing import (
    candidate_texts,
    cc_edit,
    cc_line,
    idle_config,
    import_transcripts,
    requests_seen,
    run_import,
)
from tests.support.jobs import make_ctx
from yzos_jobs.db.models import ActivitySession, EntityCandidate


def _sessions(db_url: str) -> dict[str, str | None]:
    with make_ctx(db_url).sessions() as s:
        return {a.external_id: a.project_path for a in s.scalars(select(ActivitySession))}


def _transcript(root: Path, directory: str, cwd: str, lines: list[str]) -> Path:
    path = root / "projects" / directory / "reused.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(line.replace("/home/me/code/hostile", cwd) for line in lines))
    return path


def test_a_session_id_reused_in_another_project_directory_is_that_projects_session(
    db_url: str, tmp_path: Path
) -> None:
    _transcript(
        tmp_path,
        "-home-me-one",
        "/home/me/one",
        [cc_line("a1", "add the login form", "reused"), cc_edit("a2", "/home/me/one/x", "reused")],
    )
    _transcript(
        tmp_path,
        "-home-me-two",
        "/home/me/two",
        [cc_line("b1", "add the search box", "reused"), cc_edit("b2", "/home/me/two/y", "reused")],
    )
    imported = import_transcripts(tmp_path, db_url)
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert sorted(_sessions(db_url).values()) == ["/home/me/one", "/home/me/two"]
    with make_ctx(db_url).sessions() as s:
        rows = s.execute(select(EntityCandidate.raw_text, EntityCandidate.project_path))
        placed = {(text, path) for text, path in rows}
    assert {
        ("one", "/home/me/one"),
        ("two", "/home/me/two"),
        ("add the login form", "/home/me/one"),
        ("add the search box", "/home/me/two"),
    } <= placed


def _bash(uuid: str, call: str, command: str) -> str:
    record = {
        "uuid": uuid,
        "sessionId": "sess-1",
        "cwd": "/home/me/code/hostile",
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}
            ],
        },
        "timestamp": "2026-11-04T10:00:02Z",
    }
    return json.dumps(record) + "\n"


def _result(uuid: str, call: str, output: str) -> str:
    record = {
        "uuid": uuid,
        "sessionId": "sess-1",
        "cwd": "/home/me/code/hostile",
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call, "content": output}],
        },
        "timestamp": "2026-11-04T10:00:03Z",
    }
    return json.dumps(record) + "\n"


def test_a_heredoc_that_wrote_a_file_before_the_commit_is_not_its_subject(
    db_url: str, tmp_path: Path
) -> None:
    command = (
        "cat > NOTES.md <<'EOF'\n# Release notes draft\n\nNothing yet.\nEOF\n"
        'git add NOTES.md && git commit -m "docs: add release notes draft"'
    )
    path = tmp_path / "projects" / "-home-me-code-hostile" / "sess-1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        cc_line("u1", "write release notes for the next version")
        + _bash("u2", "t1", command)
        + _result("u3", "t1", "[main 1a2b3c4] docs: add release notes draft\n 1 file changed")
    )
    imported = import_transcripts(tmp_path, db_url)
    assert imported.returncode == 0, imported.stderr[-2000:]
    texts = candidate_texts(db_url)
    assert "add release notes draft" in texts  # the commit names the work item
    assert not any("Release notes draft" in t for t in texts)
    assert "write release notes for the next version" not in texts  # its evidence


HEADER = "# aider chat started at 2026-11-04 10:00:00\n\n> aider --model x\n> Git repo: .git\n\n"


def test_an_aider_line_cut_inside_a_utf8_sequence_is_read_once_complete(
    db_url: str, tmp_path: Path
) -> None:
    history = tmp_path / "repo" / ".aider.chat.history.md"
    history.parent.mkdir()
    whole = "#### 修复登录页面的错误\n".encode()
    cut = whole.index("错".encode()) + 1  # inside the three bytes of one character
    history.write_bytes(HEADER.encode() + whole[:cut])
    config = idle_config(tmp_path)
    first = run_import("aider", history, db_url=db_url, cwd=tmp_path, config=config)
    assert first.returncode == 0, first.stderr[-2000:]
    with history.open("ab") as fh:
        fh.write(whole[cut:] + "> Applied edit to login.py\n\n#### 添加测试\n".encode())
        fh.write(b"> Applied edit to test_login.py\n")
    second = run_import("aider", history, db_url=db_url, cwd=tmp_path, config=config)
    assert second.returncode == 0, second.stderr[-2000:]
    seen = requests_seen(db_url)
    assert "修复登录页面的错误" in seen  # the completed request names the work item
    with make_ctx(db_url).sessions() as s:
        stored = [
            t or ""
            for row in s.execute(select(EntityCandidate.raw_text, EntityCandidate.surrounding_text))
            for t in row
        ]
    assert not any("\ufffd" in text for text in stored)
    assert any("添加测试" in text for text in stored)  # the next request: its evidence


def test_two_byte_identical_aider_sessions_are_two_sessions(db_url: str, tmp_path: Path) -> None:
    history = tmp_path / "repo" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_text(
        HEADER
        + "#### add the login form\n\n> Applied edit to login.py\n\n"
        + HEADER
        + "#### add the logout button\n\n> Applied edit to logout.py\n"
    )
    imported = run_import(
        "aider", history, db_url=db_url, cwd=tmp_path, config=idle_config(tmp_path)
    )
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert imported.counts["sessions"] == 2 and imported.counts["skipped"] == 0
    assert len(_sessions(db_url)) == 2
    texts = candidate_texts(db_url)
    assert "add the login form" in texts and "add the logout button" in texts
    again = run_import("aider", history, db_url=db_url, cwd=tmp_path, config=idle_config(tmp_path))
    assert again.counts["sessions"] == 0 and len(_sessions(db_url)) == 2  # nothing twice


def test_a_resumed_session_is_its_own_whatever_the_files_modification_times(
    db_url: str, tmp_path: Path
) -> None:
    # `claude --resume` writes a new file that repeats the session's records, then its own; a
    # copied or synced folder can give the older file the newer modification time
    folder = tmp_path / "projects" / "-home-me-code-hostile"
    folder.mkdir(parents=True)
    day_one = {"timestamp": "2026-12-01T09:00:00Z"}
    first = [
        cc_line("p1", "add a retry limit to the upload worker", "parent", **day_one),
        cc_edit("p2", "/home/me/code/hostile/upload.py", "parent"),
    ]
    first[1] = first[1].replace("2026-11-04T10:00:01Z", "2026-12-01T09:00:20Z")
    (folder / "parent.jsonl").write_text("".join(first))
    copies = [line.replace('"parent"', '"resumed"') for line in first]
    own = [
        cc_line(
            "r1",
            "add a dry-run flag to the upload CLI",
            "resumed",
            timestamp="2026-12-06T10:00:00Z",
        ),
        cc_edit("r2", "/home/me/code/hostile/cli.py", "resumed").replace(
            "2026-11-04T10:00:01Z", "2026-12-06T10:00:20Z"
        ),
    ]
    (folder / "resumed.jsonl").write_text("".join(copies + own))
    os.utime(folder / "resumed.jsonl", (1_700_000_000, 1_700_000_000))
    os.utime(folder / "parent.jsonl", (1_700_000_060, 1_700_000_060))  # the later, though older
    imported = import_transcripts(tmp_path, db_url)
    assert imported.returncode == 0, imported.stderr[-2000:]
    with make_ctx(db_url).sessions() as s:
        started = {
            a.external_id.split(":", 1)[0]: a.started_at for a in s.scalars(select(ActivitySession))
        }
    assert set(started) == {"parent", "resumed"}
    assert started["resumed"].day == 6  # its own records, not the ones it repeats
