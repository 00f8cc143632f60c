"""The name a package manifest gives its project (`package.json`'s `name`, `pyproject.toml`'s
`[project] name`, `Cargo.toml`'s `[package] name`, `go.mod`'s module): what a project laid out in
a folder that is not named after it (a home directory) is called."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import orjson

# A name a person would call a project by: a package name, not a template's placeholder
# (`{{name}}`) or a path.
_NAME = re.compile(r"[A-Za-z0-9][\w.-]{0,99}")
# go.mod's module path, bare or quoted (`module "example.com/x"`); a major version past 1 is
# its path's last element (`example.com/relay/v2`), not its name
_GO_MODULE = re.compile(r"^module\s+(?:\"([^\"\n]+)\"|`([^`\n]+)`|(\S+))", re.MULTILINE)
_GO_MAJOR_VERSION = re.compile(r"v[2-9]\d*|v1\d+")
MANIFESTS = frozenset({"package.json", "composer.json", "pyproject.toml", "Cargo.toml", "go.mod"})


def manifest_name(file_name: str, content: str) -> str | None:
    """The project name the manifest `file_name` with `content` declares, or None (no such
    manifest, unreadable, or no plain name in it). An npm scope is left off (`@me/app`: `app`)."""
    name: Any = None
    try:
        if file_name in ("package.json", "composer.json"):
            data = orjson.loads(content)
            name = data.get("name") if isinstance(data, dict) else None
            if isinstance(name, str):
                name = name.rsplit("/", 1)[-1]  # `@scope/app`, composer's `vendor/app`
        elif file_name == "pyproject.toml":
            data = tomllib.loads(content)
            name = data.get("project", {}).get("name") or (
                data.get("tool", {}).get("poetry", {}).get("name")
            )
        elif file_name == "Cargo.toml":
            name = tomllib.loads(content).get("package", {}).get("name")
        elif file_name == "go.mod" and (module := _GO_MODULE.search(content)):
            path = next(p for p in module.groups() if p is not None).rstrip("/").split("/")
            if len(path) > 1 and _GO_MAJOR_VERSION.fullmatch(path[-1]):
                path.pop()
            name = path[-1]
    except (orjson.JSONDecodeError, tomllib.TOMLDecodeError, AttributeError, RecursionError):
        return None  # RecursionError: TOML nested thousands deep
    return name if isinstance(name, str) and _NAME.fullmatch(name) else None
