"""Writing a batch of records so that a bad record costs only itself.

A batch is written in one transaction, with whatever must move with it (the file mark). If a
record in it cannot be written (a value the database refuses, a constraint, an index entry past
a limit), the batch is written again record by record, each in a savepoint: the bad one is
reported with its file and line and skipped, the others are committed, and the mark moves past
all of them. A record whose key was seen before is a repeat: the first wins, and a repeat with
other content (where content is compared) is reported as a conflict; the same rule within a
batch and across batches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, StatementError
from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.db.connection import run_in_transaction
from yzos_jobs.db.importer_state import claim_records, remember_contents, stored_contents
from yzos_jobs.importers.records import ImportRecordError, Unit, Written
from yzos_jobs.text import shown

T = TypeVar("T")
Write = Callable[[Session, list[Unit[T]]], Written]

# SQLSTATE classes of errors a row's values cause: data exception, integrity constraint
# violation, program limit exceeded (e.g. an index entry past PostgreSQL's btree limit).
_RECORD_SQLSTATE_CLASSES = ("22", "23", "54")


def is_record_error(exc: BaseException) -> bool:
    """An error one record's values cause while it is written, as opposed to the database
    going away (raised on) or a mistake in the statement itself."""
    if isinstance(exc, DataError | IntegrityError):
        return True
    if isinstance(exc, DBAPIError):
        sqlstate = getattr(exc.orig, "sqlstate", None) or ""
        return sqlstate[:2] in _RECORD_SQLSTATE_CLASSES
    # StatementError: a value that could not be bound (e.g. a date out of range).
    return isinstance(
        exc, StatementError | ImportRecordError | ValueError | OverflowError | RecursionError
    )


def write_batch(
    sessions: sessionmaker[Session],
    importer: str,
    units: Sequence[Unit[T]],
    write: Write[T],
    finish: Callable[[Session], None],
) -> Written:
    """Claim `units` in importer_seen and write the new ones with `write`, then `finish`, in
    one transaction; record by record if one of them cannot be written."""
    rounds = _rounds(units)

    def at_once(session: Session) -> Written:
        written = Written()
        for group in rounds:
            written.add(_claim_and_write(session, importer, group, write))
        finish(session)
        return written

    def one_by_one(session: Session) -> Written:
        written = Written()
        for unit in (unit for group in rounds for unit in group):
            try:
                with session.begin_nested():
                    written.add(_claim_and_write(session, importer, [unit], write))
            except Exception as exc:
                if not is_record_error(exc):
                    raise
                written.stats.error(ImportRecordError(unit.where, cannot_store(exc)))
        finish(session)
        return written

    try:
        return run_in_transaction(sessions, at_once)
    except Exception as exc:
        if not is_record_error(exc):
            raise
    return run_in_transaction(sessions, one_by_one)


def write_each(
    session: Session, items: Sequence[T], write: Callable[[Session, Sequence[T]], object]
) -> list[tuple[T, str]]:
    """Write `items` together in a savepoint; if one of them cannot be written, each on its own
    in a savepoint. Returns the items that could not be written, each with why."""
    if not items:
        return []
    try:
        with session.begin_nested():
            write(session, items)
        return []
    except Exception as exc:
        if not is_record_error(exc):
            raise
    failed: list[tuple[T, str]] = []
    for item in items:
        try:
            with session.begin_nested():
                write(session, [item])
        except Exception as exc:
            if not is_record_error(exc):
                raise
            failed.append((item, cannot_store(exc)))
    return failed


def _rounds(units: Sequence[Unit[T]]) -> list[list[Unit[T]]]:
    """Units in rounds: the first of each key in the first round, a key's second in the second,
    and so on. A round's keys are claimed together; a later round finds its keys taken (or, if
    the earlier one could not be written, free), so a repeat within a batch is judged exactly
    like a repeat across batches."""
    occurrences: dict[tuple[str, str], int] = {}
    rounds: list[list[Unit[T]]] = []
    for unit in units:
        n = occurrences.get(unit.key, 0)
        occurrences[unit.key] = n + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(unit)
    return rounds


def _claim_and_write(
    session: Session, importer: str, units: list[Unit[T]], write: Write[T]
) -> Written:
    fresh = claim_records(session, importer, [u.key for u in units])
    new = [u for u in units if u.key in fresh]
    written = Written()
    repeated = [u for u in units if u.key not in fresh]
    compared = [u.key for u in repeated if u.digest is not None]
    stored = stored_contents(session, importer, compared) if compared else {}
    for unit in repeated:
        # No stored hash: imported before hashes were kept; taken as a copy.
        if unit.digest is None or stored.get(unit.key, unit.digest) == unit.digest:
            written.stats.skipped += unit.records
        else:
            written.stats.error(_conflict(unit))
    remember_contents(session, importer, {u.key: u.digest for u in new if u.digest is not None})
    if new:
        written.add(write(session, new))
        written.stats.records += sum(u.records for u in new)
    return written


def _conflict(unit: Unit[T]) -> ImportRecordError:
    sid, rid = unit.key
    return ImportRecordError(
        unit.where,
        f"record_id {shown(rid)} of session {shown(sid)} was imported before with other "
        "content; the first is kept",
    )


def cannot_store(exc: BaseException) -> str:
    cause = getattr(exc, "orig", None) or exc
    text = str(cause).strip()
    detail = text.splitlines()[0] if text else cause.__class__.__name__
    return f"cannot be stored ({detail[:160]})"
