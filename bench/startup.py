"""Benchmark: start-up of the command a user runs, against Python importing what it must.

`yzos-jobs --help` against `python -c "import click"` (target: within 0.25 s), and `yzos-jobs
status` on SQLite with the shipped config.toml against `python -c "import click, sqlalchemy"`
(target: within 0.35 s). Medians of repeated runs, each pair in the same run.

    .venv/bin/python bench/startup.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import _support


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        shutil.copy(_support.SHIPPED_CONFIG, here / "config.toml")  # ./config.toml, as shipped
        env = _support.cli_env()
        subprocess.run(
            [_support.YZOS_JOBS, "status"], env=env, cwd=here, check=True, capture_output=True
        )  # creates and migrates ./yzos.db once
        pairs = [
            ("yzos-jobs --help", [_support.YZOS_JOBS, "--help"],
             "python -c 'import click'", [sys.executable, "-c", "import click"], 0.25),
            ("yzos-jobs status (SQLite)", [_support.YZOS_JOBS, "status"],
             "python -c 'import click, sqlalchemy'",
             [sys.executable, "-c", "import click, sqlalchemy"], 0.35),
        ]  # fmt: skip
        print(f"start-up, median of {args.repeat} runs, {_support.cores()} cores")
        for name, command, base_name, base, target in pairs:
            ours = _support.median_seconds(command, env, here, args.repeat)
            floor = _support.median_seconds(base, env, here, args.repeat)
            verdict = "ok" if ours - floor <= target else "OVER"
            print(f"  {name:<28} {ours:6.3f} s   {base_name:<38} {floor:6.3f} s")
            print(f"  {'':<28} difference {ours - floor:6.3f} s (target <= {target}) {verdict}")


if __name__ == "__main__":
    main()
