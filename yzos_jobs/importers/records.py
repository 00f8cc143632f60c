"""What importers share: counts, typed record errors, text cleaning for the database."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


class ImportRecordError(Exception):
    """One record cannot be imported; reported with its file and line, then skipped."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


class ImportPathError(Exception):
    """A path given to an importer does not exist or cannot be read."""


@dataclass
class ImportStats:
    files: int = 0
    files_unchanged: int = 0
    records: int = 0
    sessions: int = 0
    candidates: int = 0
    apps: int = 0
    triaged: int = 0
    sessions_ended: int = 0
    promoted: int = 0
    skipped: int = 0
    errors: int = 0
    bytes_read: int = 0
    error_messages: list[str] = field(default_factory=list)

    def error(self, err: ImportRecordError) -> None:
        self.errors += 1
        if len(self.error_messages) < 1000:
            self.error_messages.append(str(err))

    def merge(self, other: ImportStats) -> None:
        for name, value in other.counts().items():
            setattr(self, name, getattr(self, name) + value)
        self.error_messages.extend(other.error_messages[: 1000 - len(self.error_messages)])

    def counts(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if isinstance(v, int)}


def clean_text(value: object, limit: int) -> str | None:
    """Text as the database accepts it: no NUL bytes (PostgreSQL refuses them), at most `limit`
    characters (longer values are cut and marked), whitespace trimmed."""
    if value is None:
        return None
    text = str(value).replace("\x00", "").strip()
    if not text:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"
