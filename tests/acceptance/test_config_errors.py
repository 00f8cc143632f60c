"""A bad config or an unreachable database gives one clear line and a non-zero exit."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.support.cli import assert_one_line_error, cli_env, run_cli


def _assert_one_line_error(result, code: int, *needles: str) -> None:
    assert result.returncode == code, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize(
    ("body", "needles"),
    [
        ("[llm]\nbackend = 'dry_run'\nmodle = 'x'\n", ["llm.modle", "unknown key"]),
        ("[jobs.entity_promote]\nbatch_size = 'ten'\n", ["jobs.entity_promote.batch_size"]),
        ("[llm]\nbackend = 'gpt'\n", ["llm.backend"]),
        ("[database]\nurl = 'not a url'\n", ["database.url"]),
        ("[database]\nurl = 'mysql://localhost/x'\n", ["database.url", "mysql"]),
        ("[llm\n", ["invalid TOML"]),
        # a model URL the client cannot reach by: no scheme, none it speaks, no host, a bad port
        ("[llm]\nbase_url = '127.0.0.1:8080/v1'\n", ["llm.base_url", "http(s)"]),
        ("[llm]\nbase_url = 'ftp://models.example/v1'\n", ["llm.base_url"]),
        ("[llm]\nbase_url = 'http:///v1'\n", ["llm.base_url"]),
        ("[llm]\nbase_url = 'http://[::1'\n", ["llm.base_url"]),
        ("[llm]\nbase_url = 'http://127.0.0.1:80a/v1'\n", ["llm.base_url"]),
    ],
)
def test_bad_config_is_one_line_exit_2(tmp_path: Path, body: str, needles: list[str]) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(body)
    result = run_cli("--config", str(cfg), "db", "current", cwd=tmp_path)
    _assert_one_line_error(result, 2, str(cfg), *needles)


@pytest.mark.parametrize(
    "body",
    [
        # the key put where its variable's name goes, or in the URL's query string
        "[llm]\napi_key_env = 'sk-SECRET0123456789'\n",
        "[llm]\napi_key_env = 'gsk_SECRET8f3a9b2c4d5e6f7a8b9c0d1e'\n",
        "[llm]\nbase_url = 'localhost:8080/v1?api-key=sk-SECRET0123456789'\n",
    ],
)
def test_a_key_in_a_bad_setting_is_not_echoed(tmp_path: Path, body: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(body)
    for command in (["config"], ["db", "current"]):
        result = run_cli("--config", str(cfg), *command, cwd=tmp_path)
        _assert_one_line_error(result, 2, str(cfg), "llm.")
        assert "SECRET" not in result.stderr + result.stdout


def test_missing_config_file_is_one_line_exit_2(tmp_path: Path) -> None:
    result = run_cli("--config", str(tmp_path / "nope.toml"), "db", "current", cwd=tmp_path)
    _assert_one_line_error(result, 2, "nope.toml", "not found")


def test_config_path_from_environment(tmp_path: Path) -> None:
    cfg = tmp_path / "other.toml"
    cfg.write_text("[llm]\nbogus = 1\n")
    result = run_cli("db", "current", cwd=tmp_path, env=cli_env(YZOS_CONFIG=str(cfg)))
    _assert_one_line_error(result, 2, "other.toml", "llm.bogus")


def test_unreachable_database_is_one_line(tmp_path: Path) -> None:
    result = run_cli(
        "db", "current", cwd=tmp_path, db_url="postgresql+psycopg://nobody@127.0.0.1:1/none"
    )
    _assert_one_line_error(result, 1, "cannot connect", "127.0.0.1:1")


def test_db_commands_and_alembic_read_the_same_url(empty_db_url: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.support.cli import REPO

    up = run_cli("db", "upgrade", "019", db_url=empty_db_url, cwd=tmp_path)
    assert up.returncode == 0, up.stderr
    alembic = subprocess.run(
        [sys.executable, "-m", "alembic", "-c", str(REPO / "alembic.ini"), "current"],
        env=cli_env(empty_db_url),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert "019" in alembic.stdout
    current = run_cli("db", "current", db_url=empty_db_url, cwd=tmp_path)
    assert "019 (head 028, behind)" in current.stdout


def test_db_current_tells_a_database_a_newer_version_migrated(db_url: str, tmp_path: Path) -> None:
    # another host's newer yzos-jobs migrated the shared database past this installation's head
    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '999'"))
    engine.dispose()
    current = run_cli("db", "current", db_url=db_url, cwd=tmp_path)
    assert current.returncode == 0, current.stderr
    assert "999 (head 028, newer than this yzos-jobs knows: upgrade yzos-jobs)" in current.stdout
    # the commands that need the schema say so too, rather than try to migrate it
    for command in (["entities"], ["once", "entity_promote"]):
        refused = run_cli(*command, db_url=db_url, cwd=tmp_path)
        assert_one_line_error(refused, 1, "at revision 999", "a newer yzos-jobs made")


# Database URLs the project cannot connect by, each holding the password "SECRETpw": the user's
# fix is in the line, and the password is in neither stream.
BAD_DATABASE_URLS = {
    # the project ships psycopg 3 only
    "psycopg2": ("postgresql+psycopg2://me:SECRETpw@db/yzos", "postgresql+psycopg://"),
    "asyncpg": ("postgresql+asyncpg://me:SECRETpw@db/yzos", "postgresql+psycopg://"),
    "port not a number": ("postgresql+psycopg://me:SECRETpw@db:54x2/yzos", "port"),
    "port out of range": ("postgresql+psycopg://me:SECRETpw@db:99999/yzos", "port"),
    "unclosed IPv6 host": ("postgresql+psycopg://me:SECRETpw@[::1", "not a database URL"),
    # a password holding "@" and "/": parsed, "w0rd" would be the host and the error name it
    "at sign past the host": ("postgresql://me:SECRETpw@w0rd/x@db/yzos", "%40"),
    "a name holding an at sign": ("postgresql://me:SECRETpw@db/my@base", "%40"),
}
# Every command reads the settings first: none may start, nor show a traceback.
COMMANDS = [["config"], ["config", "--json"], ["db", "current"], ["db", "upgrade"], ["run"]]


@pytest.mark.parametrize("given_in", ["file", "environment"])
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize(
    ("url", "needle"), BAD_DATABASE_URLS.values(), ids=BAD_DATABASE_URLS.keys()
)
def test_a_bad_database_url_is_one_line_exit_2(
    tmp_path: Path, url: str, needle: str, command: list[str], given_in: str
) -> None:
    if given_in == "file":
        cfg = tmp_path / "config.toml"
        cfg.write_text(f"[database]\nurl = '{url}'\n")
        result = run_cli("--config", str(cfg), *command, cwd=tmp_path)
        named = str(cfg)
    else:
        result = run_cli(*command, cwd=tmp_path, db_url=url)
        named = "YZOS_DATABASE_URL"
    _assert_one_line_error(result, 2, named, "database.url", needle)
    assert "SECRETpw" not in result.stdout + result.stderr


# Passwords as users type them, unescaped; each holds "P4ss" and "w0rd", neither to be shown.
SECRET_PASSWORDS = {
    "in the query": "postgresql+psycopg://me@127.0.0.1:1/none?password=P4ssw0rd",
    "sslpassword in the query": "postgresql+psycopg://me@127.0.0.1:1/none?sslpassword=P4ssw0rd",
    "with a space": "postgresql+psycopg://me:P4ss w0rd@127.0.0.1:1/none",
    "with an at sign": "postgresql+psycopg://me:P4ss@w0rd@127.0.0.1:1/none",
}


@pytest.mark.parametrize("url", SECRET_PASSWORDS.values(), ids=SECRET_PASSWORDS.keys())
def test_a_refused_connection_does_not_show_the_password(tmp_path: Path, url: str) -> None:
    result = run_cli("db", "current", cwd=tmp_path, db_url=url)
    # the host it tried is named: for the "@" password, the one after the last "@"
    _assert_one_line_error(result, 1, "cannot connect", "***@127.0.0.1:1/none")
    assert "P4ss" not in result.stderr and "w0rd" not in result.stderr


@pytest.mark.parametrize("as_json", [[], ["--json"]], ids=["text", "json"])
@pytest.mark.parametrize("url", SECRET_PASSWORDS.values(), ids=SECRET_PASSWORDS.keys())
def test_config_does_not_show_the_password(tmp_path: Path, url: str, as_json: list[str]) -> None:
    result = run_cli("config", *as_json, cwd=tmp_path, db_url=url)
    assert result.returncode == 0, result.stderr
    assert "***@127.0.0.1:1/none" in result.stdout
    assert "P4ss" not in result.stdout and "w0rd" not in result.stdout


@pytest.mark.postgres
@pytest.mark.parametrize("command", [["db", "upgrade"], ["db", "current"]], ids=" ".join)
def test_the_db_commands_do_not_show_a_password_given_in_the_query(
    postgres_ready: None, tmp_path: Path, command: list[str]
) -> None:
    from sqlalchemy.engine import make_url

    from tests.support import databases

    with databases.pg_database() as plain:
        # libpq's `?password=`; the test server's own password, if it has one, goes there too
        url = make_url(plain)
        password = url.password or "Secr3tPw"
        with_query = url.set(password=None).update_query_dict({"password": password})
        result = run_cli(
            *command, cwd=tmp_path, db_url=with_query.render_as_string(hide_password=False)
        )
    assert result.returncode == 0, result.stderr
    assert f"@{url.host}" in result.stdout and "?password=***" in result.stdout
    assert password not in result.stdout + result.stderr


def test_a_bad_value_from_the_environment_names_its_variable_not_the_file(
    tmp_path: Path,
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[llm]\nbackend = "dry_run"\n')
    result = run_cli(
        "--config", str(cfg), "status", cwd=tmp_path, env=cli_env(YZOS_LLM_BACKEND="bogus")
    )
    line = assert_one_line_error(result, 2, "YZOS_LLM_BACKEND", "llm.backend", "bogus")
    assert str(cfg) not in line
    # a bad value in the file, beside a good override, is still the file's
    cfg.write_text('[llm]\nbackend = "dry_run"\ntimeout_s = -1\n')
    result = run_cli(
        "--config", str(cfg), "status", cwd=tmp_path, env=cli_env(YZOS_LLM_BACKEND="openai")
    )
    _assert_one_line_error(result, 2, str(cfg), "llm.timeout_s")


def test_a_question_mark_in_a_sqlite_path_is_refused_not_cut_there(tmp_path: Path) -> None:
    # `a?b/yzos.db` would open `a`, and take `b/yzos.db` for an option nobody reads
    result = run_cli("once", "prune", cwd=tmp_path, db_url=f"sqlite:///{tmp_path}/a?b/yzos.db")
    assert_one_line_error(result, 2, "YZOS_DATABASE_URL", "unknown SQLite option 'b/yzos.db'")
    assert list(tmp_path.iterdir()) == []
    escaped = run_cli("once", "prune", cwd=tmp_path, db_url=f"sqlite:///{tmp_path}/a%3Fb.db")
    assert escaped.returncode == 0, escaped.stderr
    assert (tmp_path / "a?b.db").is_file()
