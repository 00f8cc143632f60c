"""Counters kept as dataclasses of numbers (a job's stats, an import's counts, what the model
cost): summed field by field, and read as the {name: count} that `job_runs.stats` and `--json`
show."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, Self


def summed(a: Any, b: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Each field of `a` plus the same field of `b` (numbers, tuples, anything with +), by name;
    the fields named in `skip` are left out."""
    return {
        f.name: getattr(a, f.name) + getattr(b, f.name) for f in fields(a) if f.name not in skip
    }


def int_counts(counters: Any, prefix: str = "") -> dict[str, int]:
    """The whole-number fields, by name (with `prefix`), in the order they are declared."""
    return {
        prefix + f.name: value
        for f in fields(counters)
        if isinstance(value := getattr(counters, f.name), int) and not isinstance(value, bool)
    }


class Counters:
    """For a dataclass of counters: `add` sums another of its kind into this one, `+` makes a new
    one (also for a frozen dataclass), `counts` reads the whole numbers."""

    def add(self, other: Self, skip: tuple[str, ...] = ()) -> None:
        for name, value in summed(self, other, skip).items():
            setattr(self, name, value)

    def __add__(self, other: Self) -> Self:
        return replace(self, **summed(self, other))  # type: ignore[type-var]

    def counts(self) -> dict[str, int]:
        return int_counts(self)
