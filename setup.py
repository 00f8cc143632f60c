"""Build hook: the wheel carries the files the package reads at run time that live outside
`yzos_jobs/` in the source tree: Alembic's environment and revisions (`alembic/`, `alembic.ini`),
the commented `config.toml` and the classifier's eval set (`datasets/`). They are copied into
`yzos_jobs/_shipped/` of the build, keeping their relative paths, so that the source tree keeps
its layout (`alembic upgrade head` from a clone works as before). An editable install copies
nothing: it reads them where the tree keeps them (see `yzos_jobs/shipped.py`)."""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = (
    "alembic.ini",
    "alembic/env.py",
    "alembic/script.py.mako",
    "alembic/versions/*.py",
    "config.toml",
    "datasets/classifier_eval.jsonl",
)
TARGET = ("yzos_jobs", "_shipped")


class BuildWithShippedFiles(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib, *TARGET)
        for pattern in SHIPPED:
            found = sorted(ROOT.glob(pattern))
            if not found:
                raise SystemExit(f"setup.py: nothing matches {pattern}; the wheel would lack it")
            for source in found:
                dest = target / source.relative_to(ROOT)
                self.mkpath(str(dest.parent))
                self.copy_file(str(source), str(dest))


setup(cmdclass={"build_py": BuildWithShippedFiles})
