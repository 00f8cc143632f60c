"""Engines and sessions for PostgreSQL (production, shared by daemons) and SQLite (embedded)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlsplit

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError, OperationalError

if TYPE_CHECKING:  # the ORM is loaded by the commands that use sessions, not by `status`
    from sqlalchemy.orm import Session, sessionmaker

from yzos_jobs.config import normalize_database_url
from yzos_jobs.redact import mask_url

T = TypeVar("T")

WAL_CHECKPOINT_PAGES = 10_000
WAL_KEPT_BYTES = 16 << 20


class DatabaseUnavailable(Exception):
    """The database cannot be reached; reported to the user as one line."""


def create_db_engine(
    url: str,
    *,
    for_migrations: bool = False,
    reads_only: bool = False,
    read_only_if_unwritable: bool = False,
    must_exist: bool = False,
    **kwargs: Any,
) -> Engine:
    """`reads_only`: an engine that never writes (the daemon's health probes and gauges); on
    SQLite its transactions then take no write lock, so they neither wait for a writer nor
    hold one up. `read_only_if_unwritable`: for a command that only reads (`status`,
    `entities`, `export`), a SQLite file this process may not write, or in a folder it may not
    write (a service account's database an operator reads), is opened read-only rather than
    refused.
    `must_exist`: a command that acts on what is stored (a listing, a pause): a SQLite file
    that is not there is named rather than made empty, which from another working directory
    than the daemon's would answer for a database nothing writes."""
    url = normalize_database_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        file = _sqlite_file(parsed)
        if must_exist and file is not None:
            _refuse_missing(file, parsed)
        if file is not None:
            _refuse_other_than_file(file)
        read_only = _read_only_url(parsed, file) if read_only_if_unwritable and file else None
        given_read_only = parsed.query.get("mode") == "ro"  # a `file:` URI of the user's
        if file is not None and not (reads_only or read_only or given_read_only):
            _refuse_unwritable(file)
        # Batches bind lists of varying length, so nearly every batch is a new statement text;
        # the driver's default cache of 128 prepared statements per connection then holds tens
        # of MB of them for nothing (an aider import of 100 MB peaked at 165 MB, 141 with 32).
        connect_args = {"timeout": 60, "check_same_thread": False, "cached_statements": 32}
        engine = create_engine(read_only or url, connect_args=connect_args, **kwargs)
        _configure_sqlite(
            engine,
            foreign_keys=not for_migrations,
            immediate=not (reads_only or read_only or given_read_only),
            read_only=read_only is not None or given_read_only,
        )
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    kwargs.setdefault("connect_args", {"connect_timeout": 10})
    engine = create_engine(url, **kwargs)
    event.listen(engine, "connect", _session_in_utc)
    return engine


def _session_in_utc(dbapi_connection: Any, _record: Any) -> None:
    """PostgreSQL hands a timestamp back in the session's time zone (the server's or the
    database's setting, or the client's PGTZ): a time stored near either end of the calendar
    (an observer's zero time, 0001-01-01Z) is then one Python cannot hold, and every query that
    meets it fails. The stored times are UTC; so is every session."""
    with dbapi_connection.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'UTC'")
    dbapi_connection.commit()


def _sqlite_file(url: URL) -> Path | None:
    """The file a SQLite URL names, as an absolute path (a `file:` URI's too); None for an
    in-memory database. A relative path is read from the working directory, which must exist."""
    database = url.database or ""
    if database.startswith("file:"):
        uri = urlsplit(database)
        if "mode=memory" in uri.query or uri.path in ("", ":memory:"):
            return None
        database = unquote(uri.path)
    if database in ("", ":memory:"):
        return None
    try:
        return Path(database).absolute()
    except FileNotFoundError:  # the working directory was removed under the command
        raise DatabaseUnavailable(
            f"no database at {database}: a relative SQLite URL names a file in the working "
            "directory, which was removed; run from an existing folder, or set database.url "
            "to an absolute path"
        ) from None


def _read_only_url(url: URL, file: Path) -> URL | None:
    """The URL that opens an existing SQLite file read-only, where this process may not write
    the file or its folder (SQLite would otherwise fail at the first write it tries, the WAL
    setting); None where it may, or where the URL names no file. A link is followed: the
    file's own folder is where SQLite keeps what it needs beside it.

    Under WAL a reader needs the database's `-shm` index beside it. Where a writer has one,
    the reader shares it. Where none is there (no writer has the file open, and the last one
    folded its log into the file as it closed) the file alone is the whole database, and
    SQLite is told so (`immutable`): it then makes nothing beside it, neither in a folder this
    user may not write nor, in a folder it may, an index and a log of this user's that would
    lock the file's owner out. A log left without its index (a writer killed, the index
    removed) is refused: reading it would make that index; so is a rollback journal left by a
    writer killed mid-transaction (SQLite rolls it back only for a writer). A `file:` URI of
    the user's keeps its other parameters."""
    try:
        path = file.resolve(strict=True)
    except (OSError, RuntimeError):  # not there, or a loop of links: the open says which
        return None
    if not path.is_file():
        return None  # a new embedded database is made where it is first used
    if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK):
        return None
    query = {**url.query, "mode": "ro", "uri": "true"}
    log, index, journal = (Path(f"{path}-{end}") for end in ("wal", "shm", "journal"))
    if not index.exists():
        left = next((f for f in (log, journal) if f.exists() and f.stat().st_size), None)
        if left is not None:
            raise DatabaseUnavailable(
                f"cannot read {path}: {left.name} holds writes a stopped process left, which "
                "only a user who may write the database and its folder can fold in (any "
                "yzos-jobs command run by one does)"
            )
        query["immutable"] = "1"
    return url.set(database=path.as_uri(), query=query)


def _refuse_other_than_file(file: Path) -> None:
    """A SQLite URL naming a device, a pipe or a folder: SQLite would say only "disk I/O
    error", and make its journal beside it (`/dev/null-journal`) on the way."""
    try:
        path = file.resolve(strict=True)
    except (OSError, RuntimeError):  # not there yet, or a loop of links: the open says which
        return
    if not path.is_file():
        raise DatabaseUnavailable(f"cannot use {file} as the database: it is not a regular file")


def _refuse_unwritable(file: Path) -> None:
    """Refuse, before SQLite opens it, an existing database this process may not write, or
    whose folder, log or index it may not. SQLite would fail at the first write, and on the
    way leave an index (`-shm`) with the database's own read-only mode, which then locks out
    even the user who may write the database."""
    try:
        path = file.resolve(strict=True)
    except (OSError, RuntimeError):
        return  # a new embedded database is made where it is first used
    if not os.access(path, os.W_OK):
        mounted_read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
        why = "its file system is read-only" if mounted_read_only else "this user may not write it"
        raise DatabaseUnavailable(f"cannot write the database {path}: {why}")
    if not os.access(path.parent, os.W_OK):
        raise DatabaseUnavailable(
            f"cannot write the database {path}: this user may not write its folder, where "
            "SQLite keeps its log beside it"
        )
    for beside in (Path(f"{path}-{end}") for end in ("wal", "shm", "journal")):
        if beside.exists() and not os.access(beside, os.W_OK):
            raise DatabaseUnavailable(
                f"cannot write the database {path}: this user may not write {beside.name} "
                "beside it (left by a process of another user, or made while the database "
                "was read-only); give it the database's owner and mode, or remove it while "
                "nothing has the database open"
            )


def _refuse_missing(file: Path, url: URL) -> None:
    if file.exists():
        return
    given = url.database or ""
    if given.startswith("file:") or Path(given).is_absolute():
        raise DatabaseUnavailable(f"no database at {file}: nothing has written one there yet")
    raise DatabaseUnavailable(
        f"no database at {file}: a relative SQLite URL names a file in the working directory; "
        "run where the daemon runs, or set database.url to an absolute path"
    )


def is_read_only(engine: Engine) -> bool:
    """Whether `engine` opens its SQLite file read-only (see `_read_only_url`)."""
    return engine.dialect.name == "sqlite" and engine.url.query.get("mode") == "ro"


def _configure_sqlite(
    engine: Engine, *, foreign_keys: bool, immediate: bool, read_only: bool = False
) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the driver, open transactions (see the "begin" hook below).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        if not read_only:  # a file read-only keeps the journal mode its writer gave it
            cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        # Checkpoint every ~40 MB of log, not every 4 MB: a bulk write (an import, a promote)
        # rewrites the same index pages batch after batch, and each checkpoint copied them all
        # back again (an import's commits, 7-9 % of its time, take a third less). Left over
        # between runs: at most 16 MB.
        cur.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
        cur.execute(f"PRAGMA journal_size_limit={WAL_KEPT_BYTES}")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Take the write lock up front: a deferred transaction that later writes can fail with
        # "database is locked" without waiting when another process (an importer) writes too.
        # One that only reads needs no lock: under WAL it reads beside any writer.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def database_identity(engine: Engine) -> str:
    """Which database an engine writes to, the same however its URL was spelt: for keeping
    processes that write to one database apart from those that write to another. SQLite: the
    file's real path (a relative path, a `file:` URI, a folder reached through a link);
    PostgreSQL: what the server says of itself (when it started, its port, the database), not
    the URL (`localhost` or `127.0.0.1`, a socket or TCP, the port left out)."""
    if engine.dialect.name == "sqlite":
        found = _sqlite_file(engine.url)
        return f"sqlite:{os.path.realpath(found) if found else ':memory:'}"
    with engine.connect() as conn:
        started, port, name = conn.execute(
            text(
                "SELECT pg_postmaster_start_time()::text, current_setting('port'), "
                "current_database()"
            )
        ).one()
    return f"postgresql:{started}:{port}:{name}"


def describe_url(engine_or_url: Engine | str) -> str:
    """The database's URL as the `db` commands and connection errors print it: through the one
    mask every URL goes through, which also hides the user, a password libpq takes from the
    query (`?password=`) and the whole of one holding an `@`, all of which SQLAlchemy's
    `hide_password` shows."""
    if isinstance(engine_or_url, Engine) and is_read_only(engine_or_url):
        return f"sqlite:///{_sqlite_file(engine_or_url.url)} (read-only)"
    if isinstance(engine_or_url, Engine):
        return mask_url(engine_or_url.url.render_as_string(hide_password=True))
    return mask_url(engine_or_url)


def check_connection(engine: Engine) -> None:
    """Raise DatabaseUnavailable with one readable line if the database cannot be reached."""
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except (OperationalError, DBAPIError) as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        raise DatabaseUnavailable(
            f"cannot connect to database {describe_url(engine)}: {reason}"
        ) from None


@contextmanager
def bounded_read(engine: Engine, timeout_ms: int) -> Iterator[Connection]:
    """A connection for a read that must not outlast `timeout_ms` in the server (PostgreSQL's
    statement_timeout; SQLite's reads wait on nobody); rolled back when done."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text(f"SET LOCAL statement_timeout = {int(timeout_ms)}"))
        try:
            yield conn
        finally:
            conn.rollback()


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    from sqlalchemy.orm import sessionmaker

    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: commit on success, roll back on error."""
    with factory() as session, session.begin():
        yield session


_RETRYABLE_SQLSTATES = {"40001", "40P01"}  # serialization failure, deadlock detected
_FOREIGN_KEY_VIOLATION = "23503"


def _sqlstate(exc: BaseException) -> str | None:
    return getattr(getattr(exc, "orig", None), "sqlstate", None)


def is_retryable(exc: BaseException) -> bool:
    return _sqlstate(exc) in _RETRYABLE_SQLSTATES


def run_in_transaction(
    factory: sessionmaker[Session],
    work: Callable[[Session], T],
    attempts: int | None = None,
    *,
    idempotent: bool = False,
    refs_may_go: bool = False,
) -> T:
    """Run `work` in one transaction, again from the start if PostgreSQL reports a deadlock or a
    serialization failure (another daemon touched the same rows in another order).

    `idempotent`: also again, on a fresh connection, when the one it ran on was terminated
    under it (an operator or the server ended that backend). Only for work that may safely land
    twice: a drop during COMMIT leaves unknown whether the first attempt landed. A server that
    refuses connections is not waited for.

    `refs_may_go`: also again when a row the work refers to was deleted meanwhile by another
    transaction (an entity merged away by a correction between the work reading its id and
    writing its sightings): the next attempt reads where it went. Ten attempts then, not three:
    a user merging one entity after another can take one the work names before each."""
    attempts = attempts or (10 if refs_may_go else 3)
    for attempt in range(1, attempts + 1):
        try:
            with transaction(factory) as session:
                return work(session)
        except DBAPIError as exc:
            dropped = idempotent and exc.connection_invalidated
            gone = refs_may_go and _sqlstate(exc) == _FOREIGN_KEY_VIOLATION
            if attempt == attempts or not (dropped or gone or is_retryable(exc)):
                raise
            time.sleep(0.05 * attempt)
    raise AssertionError("unreachable")


def has_concurrent_writers(factory: sessionmaker[Session]) -> bool:
    """PostgreSQL lets several daemons write at once; SQLite serialises writers."""
    bind = factory.kw["bind"]
    return bool(bind is not None and bind.dialect.name == "postgresql")
