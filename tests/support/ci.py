"""Whether the tests run in CI: then a test that needs PostgreSQL or the local llama.cpp server
fails without it instead of being skipped. The same rule as .ci/lib.sh's in_ci."""

from __future__ import annotations

import os


def in_ci() -> bool:
    """CI is 1, true or yes, in any case (CI=YES too)."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")
