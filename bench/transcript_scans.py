"""Benchmark: the Claude Code importer's scans are linear in the text. One user turn holding a
pasted TypeScript file (`useState<number>` lines: opening tags never closed), one Bash command of
`git git …; commit commit …` (where a commit and the folder git ran in are looked for: no `git …
commit` in one part, no `&& git log` after a commit), and one tool result of base64 output
(separators and no spaces, where the worktree pattern looks), at 100 KB, 400 KB and 1.6 MB each,
read by the importer's parsing; time per size and per MB. Linear scans keep the time per MB flat
as the size grows fourfold twice; a quadratic one would multiply it by four.

    .venv/bin/python bench/transcript_scans.py
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yzos_jobs.importers.claude_transcript import TranscriptReader
from yzos_jobs.importers.reading import LinesBefore, Position

SIZES_KB = (100, 400, 1600)
TS_LINE = "  const [count, setCount] = useState<number>(0); // <number> again\n"


def records(size: int) -> list[bytes]:
    # a closing tag at the end and a `.git` path after the base64 make both scans run whole
    pasted = (TS_LINE * (size // len(TS_LINE) + 1))[:size] + "\n</div>\n"
    noise = base64.b64encode(os.urandom(size * 3 // 4)).decode() + " /srv/x/.git/HEAD"
    cwd = "/home/me/code/app/.claude/worktrees/feature"
    common = {"sessionId": "s", "cwd": cwd, "timestamp": "2026-11-04T10:00:00Z"}
    turn = {**common, "uuid": "u1", "type": "user", "message": {"role": "user", "content": pasted}}
    command = "git " * (size // 8) + "; " + "commit " * (size // 14)
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}
    asked = {**common, "uuid": "u2", "type": "assistant", "message": {"content": [call]}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": noise}
    output = {**common, "uuid": "u3", "type": "user", "message": {"content": [result]}}
    return [json.dumps(r).encode() + b"\n" for r in (turn, asked, output)]


def read_time(size: int) -> float:
    lines = records(size)
    before = LinesBefore(Path("scan.jsonl"), 0)
    numbered = [(Position(before, n), 0, raw) for n, raw in enumerate(lines, 1)]
    start = time.perf_counter()
    for _ in TranscriptReader(lambda err: None).facts(numbered, subagent=False):
        pass
    return time.perf_counter() - start


def main() -> None:
    print("Claude Code transcript scans (a pasted file, a command, a tool result, each of size):")
    for kb in SIZES_KB:
        seconds = min(read_time(kb * 1024) for _ in range(3))
        print(f"  {kb:5d} KB: {seconds:.3f} s, {seconds / (kb / 1024):.3f} s per MB")


if __name__ == "__main__":
    main()
