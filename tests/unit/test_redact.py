"""A database URL's password never reaches a person or a log: one mask for every place a URL is
shown (`db` commands, connection errors, `config`), whatever the password holds."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url

from yzos_jobs.config import normalize_database_url
from yzos_jobs.db.connection import create_db_engine, describe_url
from yzos_jobs.redact import mask_url

# Written as users write them, unescaped; each holds the secret "P4ss" + "w0rd".
DATABASE_URLS = {
    # libpq takes the password from the query too, under several names
    "query password": "postgresql+psycopg://me@db:5432/yzos?password=P4ssw0rd",
    "query passwd": "postgresql+psycopg://me@db/yzos?sslmode=require&passwd=P4ssw0rd",
    "query pwd": "postgresql+psycopg://me@db/yzos?pwd=P4ssw0rd",
    "query sslpassword": "postgresql+psycopg://me@db/yzos?sslpassword=P4ssw0rd",
    "space": "postgresql+psycopg://me:P4ss w0rd@db/yzos",
    "at sign": "postgresql+psycopg://me:P4ss@w0rd@db/yzos",
    "at sign and slash": "postgresql+psycopg://me:P4ss/@w0rd@db/yzos",
    "space in query": "postgresql+psycopg://me@db/yzos?password=P4ss w0rd",
    "comma in query": "postgresql+psycopg://me@db/yzos?password=P4ss,w0rd",
    "hash in query": "postgresql+psycopg://me@db/yzos?password=P4ss#w0rd",
    "ampersand in query": "postgresql+psycopg://me@db/yzos?password=P4ss&w0rd&sslmode=require",
}


def _assert_hidden(shown: str) -> None:
    assert "P4ss" not in shown and "w0rd" not in shown, shown


@pytest.mark.parametrize("url", DATABASE_URLS.values(), ids=DATABASE_URLS.keys())
def test_a_database_url_is_shown_without_its_password(url: str) -> None:
    shown = mask_url(url)
    _assert_hidden(shown)
    assert shown.startswith("postgresql+psycopg://")


@pytest.mark.parametrize("url", DATABASE_URLS.values(), ids=DATABASE_URLS.keys())
def test_the_db_commands_show_the_url_without_its_password(url: str) -> None:
    # `db current`, `db upgrade` and "cannot connect to database …" print this
    engine = create_db_engine(url)  # connects to nothing until asked
    try:
        shown = describe_url(engine)
    finally:
        engine.dispose()
    _assert_hidden(shown)
    assert "***@db" in shown  # where it connects to stays readable


def test_the_db_commands_show_where_they_connect() -> None:
    engine = create_db_engine("postgresql+psycopg://me:P4ss@w0rd@db.internal:5432/yzos?pwd=x")
    try:
        shown = describe_url(engine)
    finally:
        engine.dispose()
    assert shown == "postgresql+psycopg://***@db.internal:5432/yzos?pwd=***"


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("postgresql://me:P4ss@w0rd@db:5432/yzos", "P4ss@w0rd"),
        ("postgresql+psycopg://me:a@b@c@db/yzos?sslmode=require", "a@b@c"),
    ],
)
def test_a_password_holding_an_at_sign_connects_to_the_host_after_it(
    url: str, password: str
) -> None:
    # Parsed at the first "@", the rest of the password became the host, and the driver's
    # "failed to resolve host 'w0rd@db'" showed it.
    parsed = make_url(normalize_database_url(url))
    assert (parsed.password, parsed.host, parsed.database) == (password, "db", "yzos")


def test_an_at_sign_past_the_host_is_left_where_it_is() -> None:
    # Guards of the rule above: the settings refuse an "@" past the host (it cannot be told
    # from a password holding a "/"), and a SQLite path may hold an "@" of its own.
    parsed = make_url(normalize_database_url("postgresql+psycopg://me:pw@db/my@base"))
    assert (parsed.password, parsed.host, parsed.database) == ("pw", "db", "my@base")
    sqlite = "sqlite:////home/me@work/yzos.db"
    assert normalize_database_url(sqlite) == sqlite


def test_a_sqlite_url_is_shown_as_it_is() -> None:
    # a file's path holds no credentials, and may hold an "@" that is no user's
    for url in ("sqlite:////home/me@work/yzos.db", "sqlite:///yzos.db?mode=ro"):
        assert mask_url(url) == url
