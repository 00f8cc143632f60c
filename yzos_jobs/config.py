"""Settings: one typed object built once from config.toml plus the environment, then passed down."""

from __future__ import annotations

import codecs
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

DEFAULT_CONFIG_FILE = "config.toml"
DEFAULT_DATABASE_URL = "sqlite:///yzos.db"
# A config file is a few kilobytes; the bound keeps a wrong path (a log, an image) cheap to refuse.
MAX_CONFIG_BYTES = 1 << 20
DAY_S = 24 * 3600
YEAR_S = 365 * DAY_S


class ConfigError(Exception):
    """A configuration problem, reported to the user as one line."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class DatabaseSettings(_Section):
    url: str = DEFAULT_DATABASE_URL
    # None: migrate an embedded SQLite database on first use, never PostgreSQL.
    auto_migrate: bool | None = None

    @property
    def sqlalchemy_url(self) -> str:
        return normalize_database_url(self.url)

    @property
    def is_sqlite(self) -> bool:
        return self.url.startswith("sqlite")

    @property
    def should_auto_migrate(self) -> bool:
        return self.is_sqlite if self.auto_migrate is None else self.auto_migrate


class LlmSettings(_Section):
    backend: Literal["dry_run", "openai"] = "dry_run"
    base_url: str = "http://127.0.0.1:8080/v1"
    model: str = "qwen2.5-7b-instruct"
    api_key_env: str = "YZOS_LLM_API_KEY"
    # A model on a CPU takes a minute over a session's triage: a shorter deadline fails every call.
    timeout_s: float = Field(default=120.0, ge=0.1, le=3600)
    max_retries: int = Field(default=2, ge=0, le=10)
    max_concurrency: int = Field(default=8, ge=1, le=256)
    constraint: Literal["json_schema", "grammar"] = "json_schema"
    context_chars: int = Field(default=600, ge=0, le=100_000)
    cache_ttl_s: int = Field(default=7 * 24 * 3600, ge=0, le=10 * YEAR_S)
    breaker_threshold: int = Field(default=3, ge=1, le=1000)
    # Tokens a verdict may take (its reason included); a reply cut by it is invalid output.
    max_tokens: int = Field(default=384, ge=16, le=32768)
    # Send maxLength/maxItems in the JSON schema (llama.cpp and vLLM accept them; OpenAI's
    # strict mode has refused them). The grammar always carries the bounds.
    schema_string_bounds: bool = False
    # The most recent user corrections shown to the model as worked examples.
    max_correction_examples: int = Field(default=8, ge=0, le=100)
    # Daily LLM budgets (UTC days, shared by every daemon on the database); 0: no cap.
    daily_token_budget: int = Field(default=0, ge=0, le=10**12)
    daily_call_budget: int = Field(default=0, ge=0, le=10**9)


# Candidates claimed per promote batch when `batch_size` is unset: with a model, a batch is
# bounded by its LLM calls; without one (dry_run) only the database paces it.
PROMOTE_BATCH = 100
PROMOTE_BATCH_WITHOUT_MODEL = 2500


class EntityPromoteSettings(_Section):
    interval_s: int = Field(default=60, ge=1, le=DAY_S)
    batch_size: int | None = Field(default=None, ge=1, le=10_000)
    lease_s: int = Field(default=300, ge=1, le=DAY_S)
    max_attempts: int = Field(default=3, ge=1, le=100)
    run_at_start: bool = True

    def batch_for(self, with_model: bool) -> int:
        """The batch size in force: the one set, else the default for the mode."""
        if self.batch_size is not None:
            return self.batch_size
        return PROMOTE_BATCH if with_model else PROMOTE_BATCH_WITHOUT_MODEL


class EntityPurgeSettings(_Section):
    # One second to a year: slots are named to the second.
    interval_h: float = Field(default=6.0, ge=1 / 3600, le=YEAR_S / 3600)
    batch_size: int = Field(default=100, ge=1, le=10_000)
    max_llm_calls: int = Field(default=500, ge=0, le=1_000_000)
    run_at_start: bool = False


class TriageSettings(_Section):
    # Characters of a session's digest sent to the model.
    max_digest_chars: int = Field(default=6000, ge=200, le=200_000)
    # Tasks one triage reply may propose (the grammar bounds the list; extra ones are dropped).
    max_tasks: int = Field(default=8, ge=1, le=100)
    # Open tasks of the project offered to the model to merge into.
    max_open_tasks: int = Field(default=30, ge=0, le=500)
    # Runs a session's triage may fail before its candidates go down the line-level path.
    max_attempts: int = Field(default=3, ge=1, le=100)
    # Tokens a triage reply may take.
    max_tokens: int = Field(default=1024, ge=64, le=32768)


class DecisionsSettings(_Section):
    # Days a decision row is kept (the daily prune deletes older ones, but never a user
    # correction, an active entity's current-state decisions or a merge of one entity into
    # another); 0 keeps all.
    retention_days: int = Field(default=90, ge=0, le=36500)


class JobsSettings(_Section):
    # Seconds a running job_runs row is held; renewed while the job works. A row whose owner
    # died is marked failed once this runs out, and its slot may run again.
    run_lease_s: int = Field(default=120, ge=1, le=DAY_S)
    # `status --check` fails when more than this share of the last promote's decisions came
    # from the structural fallback (the LLM was down).
    max_fallback_share: float = Field(default=0.5, ge=0, le=1)
    entity_promote: EntityPromoteSettings = EntityPromoteSettings()
    entity_purge_v06: EntityPurgeSettings = EntityPurgeSettings()


LogLevel = Literal["debug", "info", "warning", "error"]


class LoggingSettings(_Section):
    format: Literal["auto", "json", "console"] = "auto"
    # None: "warning" for one-shot commands (their result is their output), "info" for the
    # daemon (one line per run that did something). -v/--verbose asks for more either way.
    level: LogLevel | None = None


class NoiseFilterSettings(_Section):
    # Structural markers of where work lives on disk; not a vocabulary of names.
    work_dir_segments: tuple[str, ...] = Field(
        default=(
            "Code",
            "code",
            "Volumes",
            "src",
            "Projects",
            "projects",
            "repos",
            "workspace",
            "dev",
            "git",
        ),
        strict=False,
    )


class ImportersSettings(_Section):
    # An aider or Claude Code session whose files have not changed for this long has ended.
    session_idle_s: int = Field(default=1800, ge=0, le=7 * DAY_S)
    max_field_chars: int = Field(default=4000, ge=16, le=1_000_000)
    # A work item whose name is this close (shingle Jaccard) to an open task of its project is
    # a sighting of that task; 1 merges only names of the same shingles.
    same_task_similarity: float = Field(default=0.55, ge=0.0, le=1.0)
    # A work item whose first request's text is this close to the first request of the item
    # before it in the session goes on with that item's task (the same thing asked again after
    # an attempt at it); 1 joins only requests of the same shingles.
    asked_again_similarity: float = Field(default=0.7, ge=0.0, le=1.0)


class DaemonSettings(_Section):
    # "host:port" where the daemon serves /healthz and /metrics; empty: no HTTP at all.
    http: str = ""
    # A bind address other than loopback is refused unless this is true.
    allow_remote: bool = False


class RetentionSettings(_Section):
    # Days a finished job run's row is kept (the daily prune deletes older ones); 0 keeps all.
    job_runs_days: int = Field(default=0, ge=0, le=36500)


class SourcesSettings(_Section):
    """Where the daemon's import_sources job looks for activity, every `interval_s`."""

    # Claude Code transcript directories (`~` is the user's home, `$NAME` an environment
    # variable); one that does not exist, or names a variable not set, is passed over, so the
    # default costs nothing where Claude Code is not installed. Claude Code keeps them below
    # `CLAUDE_CONFIG_DIR` where that is set, else in ~/.claude, and some versions wrote them to
    # ~/.config/claude.
    claude_code: tuple[str, ...] = Field(
        default=("$CLAUDE_CONFIG_DIR/projects", "~/.claude/projects", "~/.config/claude/projects"),
        strict=False,
    )
    # Roots searched for .aider.chat.history.md files, `aider_max_depth` directories deep
    # (`~` and `$NAME` expanded here and in `jsonl`, as in `claude_code`).
    aider: tuple[str, ...] = Field(default=(), strict=False)
    # JSONL files, or directories whose *.jsonl files are read.
    jsonl: tuple[str, ...] = Field(default=(), strict=False)
    # The platform's application folders (app names and categories for the judge).
    apps: bool = True
    interval_s: int = Field(default=60, ge=1, le=DAY_S)
    aider_max_depth: int = Field(default=6, ge=1, le=64)


class Settings(_Section):
    database: DatabaseSettings = DatabaseSettings()
    llm: LlmSettings = LlmSettings()
    jobs: JobsSettings = JobsSettings()
    logging: LoggingSettings = LoggingSettings()
    noise_filter: NoiseFilterSettings = NoiseFilterSettings()
    importers: ImportersSettings = ImportersSettings()
    triage: TriageSettings = TriageSettings()
    decisions: DecisionsSettings = DecisionsSettings()
    daemon: DaemonSettings = DaemonSettings()
    retention: RetentionSettings = RetentionSettings()
    sources: SourcesSettings = SourcesSettings()
    source: str = Field(default="<defaults>", exclude=True)

    def llm_api_key(self) -> str | None:
        """The API key, read from the variable `llm.api_key_env` names; never stored in settings."""
        return os.environ.get(self.llm.api_key_env) or None


_ENV_OVERRIDES: dict[str, tuple[str, str]] = {
    "YZOS_DATABASE_URL": ("database", "url"),
    "YZOS_LLM_BACKEND": ("llm", "backend"),
    "YZOS_LLM_BASE_URL": ("llm", "base_url"),
    "YZOS_LLM_MODEL": ("llm", "model"),
}


_RANGE_ERRORS = frozenset({"greater_than_equal", "less_than_equal"})


def _field_at(loc: tuple[int | str, ...]) -> FieldInfo | None:
    model: object = Settings
    info: FieldInfo | None = None
    for part in loc:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        info = model.model_fields.get(str(part))
        if info is None:
            return None
        model = info.annotation
    return info


def numeric_range(info: FieldInfo) -> tuple[float, float] | None:
    """The inclusive (lowest, highest) a numeric setting accepts, as declared by its Field."""
    bounds = {
        name: getattr(m, name) for m in info.metadata for name in ("ge", "le") if hasattr(m, name)
    }
    return (bounds["ge"], bounds["le"]) if len(bounds) == 2 else None


def format_bound(value: float) -> str:
    """A bound as config.toml documents it and errors print it."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def _shown(value: object) -> str:
    """The offending value, short: a 4,000-digit integer is not echoed back whole."""
    if isinstance(value, int) and value.bit_length() > 64:
        return "an integer beyond 64 bits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _overridden_keys(env: dict[str, str]) -> dict[str, str]:
    """The settings the environment overrides (`llm.backend`), each with its variable."""
    return {f"{s}.{k}": var for var, (s, k) in _ENV_OVERRIDES.items() if env.get(var)}


def _format_validation_error(
    source: str, err: ValidationError, overridden: dict[str, str] | None = None
) -> str:
    """One line naming where the bad value came from (the file, or the environment variable
    `overridden` names for its key) and the key."""
    first = err.errors()[0]
    key = ".".join(str(p) for p in first["loc"]) or "<root>"
    source = (overridden or {}).get(key, source)
    if first["type"] == "extra_forbidden":
        return f"{source}: unknown key '{key}'"
    value = first.get("input")
    got = _shown(value)
    # A number the field cannot hold (out of range, nan, an int too big for a float): the range.
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    out_of_range = first["type"] in _RANGE_ERRORS or (first["type"] == "float_type" and numeric)
    info = _field_at(first["loc"]) if out_of_range else None
    span = numeric_range(info) if info is not None else None
    if span is not None:
        low, high = (format_bound(b) for b in span)
        return f"{source}: key '{key}': must be from {low} to {high} (got {got})"
    return f"{source}: key '{key}': {first['msg']} (got {got})"


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _read_config_bytes(path: Path) -> bytes:
    """The file's bytes, read only if it is a regular file of at most MAX_CONFIG_BYTES. The read
    is non-blocking and bounded too, in case the path is swapped for a FIFO or a device."""
    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path}: not a regular file ({_file_kind(st.st_mode)})")
    too_big = ConfigError(f"{path}: config file larger than {MAX_CONFIG_BYTES} bytes")
    if st.st_size > MAX_CONFIG_BYTES:
        raise too_big
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with open(fd, "rb") as fh:
        data = fh.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise too_big
    return data


def _read_toml(path: Path) -> dict[str, object]:
    try:
        data = _read_config_bytes(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror}") from None
    try:
        # Notepad and other editors write a byte order mark first: it is no part of the TOML
        return tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        at = exc.start + (3 if data.startswith(codecs.BOM_UTF8) else 0)  # counted past the mark
        raise ConfigError(f"{path}: not UTF-8 text (byte {at}); is it a binary file?") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except ValueError:  # tomllib lets int() refuse a literal of thousands of digits
        raise ConfigError(f"{path}: invalid TOML: a number too long to read") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None


# The drivers this project ships (`postgresql://` and `postgres://` are normalised to psycopg 3):
# any other is not installed, and SQLAlchemy would fail with a traceback on first connect.
_SUPPORTED_DRIVERS = {
    "sqlite": ("sqlite", "sqlite+pysqlite"),
    "postgresql": ("postgresql+psycopg",),
}
_USE_INSTEAD = {"sqlite": "sqlite:///", "postgresql": "postgresql+psycopg:// (psycopg 3)"}


def _check_database_url(source: str, url: str) -> None:
    """A URL this project can connect by. Never echoed: it may hold the password; only the
    scheme, which cannot, is named."""
    key = f"{source}: key 'database.url'"
    normal = normalize_database_url(url)
    if _at_sign_past_the_host(normal):
        raise ConfigError(
            f"{key}: an '@' after the host: a password holding '/' or '?' and '@' cannot be told "
            "from the host; write them in the password (or the name) as %2F, %3F and %40"
        )
    try:
        parsed = make_url(normal)
        port = parsed.port  # SQLAlchemy's int() of it: ValueError for "54x2" or "[::1"
    except (ArgumentError, ValueError):
        raise ConfigError(
            f"{key}: not a database URL, or its port is not a number (sqlite:///path or "
            f"postgresql+psycopg://user:password@host:port/name)"
        ) from None
    if port is not None and not 0 < port < 65536:
        raise ConfigError(f"{key}: port must be from 1 to 65535 (got {port})")
    backend = parsed.get_backend_name()
    if backend not in _SUPPORTED_DRIVERS:
        raise ConfigError(
            f"{key}: unsupported database '{backend}' (use sqlite:/// or postgresql+psycopg://)"
        )
    if parsed.drivername not in _SUPPORTED_DRIVERS[backend]:
        raise ConfigError(
            f"{key}: driver '{parsed.drivername.partition('+')[2]}' is not installed; "
            f"use {_USE_INSTEAD[backend]}"
        )
    if _is_in_memory_sqlite(parsed):
        raise ConfigError(
            f"{key}: an in-memory SQLite database keeps nothing once the "
            f"command ends; name a file (sqlite:///yzos.db)"
        )
    options = {name for name, _ in parse_qsl(normal.partition("?")[2], keep_blank_values=True)}
    if backend == "sqlite" and (unknown := sorted(options - _SQLITE_OPTIONS)):
        raise ConfigError(
            f"{key}: unknown SQLite option {unknown[0]!r}: a '?' begins the options, so one "
            "in the file's path is written %3F"
        )


# What a SQLite URL's query may set: the driver's options, and a `file:` URI's parameters.
_SQLITE_OPTIONS = frozenset(
    {"timeout", "isolation_level", "detect_types", "check_same_thread", "cached_statements"}
    | {"uri", "mode", "cache", "immutable", "nolock", "psow", "vfs", "modeof"}
)


def _is_in_memory_sqlite(url: URL) -> bool:
    """`sqlite://`, `sqlite:///:memory:`, or a SQLite URI filename that asks for memory."""
    if url.get_backend_name() != "sqlite":
        return False
    database = url.database or ""
    return (
        database in ("", ":memory:")
        or database.startswith("file::memory:")
        or url.query.get("mode") == "memory"
    )


def normalize_database_url(url: str) -> str:
    """PostgreSQL URLs without a driver use psycopg 3, the driver this project ships with. An
    unescaped `@` in the password is escaped: SQLAlchemy ends the userinfo at the first `@`,
    and would connect to the rest of the password as the host (and a driver's error name it)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            url = "postgresql+psycopg://" + url[len(prefix) :]
    if not url.startswith("postgresql"):
        return url  # a SQLite path may hold an "@" of its own
    scheme, sep, rest = url.partition("://")
    end = _userinfo_end(rest)
    if not sep or end < 0:
        return url
    return f"{scheme}://{rest[:end].replace('@', '%40')}{rest[end:]}"


def _at_sign_past_the_host(url: str) -> bool:
    """A PostgreSQL URL with an `@` past its host (`me:P4ss@w0rd/x@db/yzos`): the password's
    `/` would end the host at `w0rd`, which the driver's error would then name."""
    if not url.startswith("postgresql"):
        return False  # a SQLite path may hold an "@" of its own
    rest = url.partition("://")[2]
    return "@" in rest[_userinfo_end(rest) + 1 :]


def _userinfo_end(rest: str) -> int:
    """Where the userinfo of `rest` (a URL after `scheme://`) ends: at the last `@` before the
    host part, which runs from there to the path or the query. -1: no userinfo."""
    first = rest.find("@")
    if first < 0:
        return -1
    host_end = re.search(r"[/?]", rest[first:])
    return rest.rfind("@", 0, first + host_end.start() if host_end else len(rest))


def load_settings(
    path: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None
) -> Settings:
    """Build the settings from a TOML file (explicit path, YZOS_CONFIG, or ./config.toml if it
    exists) and the environment overrides."""
    env = dict(os.environ) if env is None else env
    file = config_file(path, env)
    data: dict[str, object] = _read_toml(file) if file is not None else {}
    source = str(file) if file is not None else "<defaults>"
    for var, (section, key) in _ENV_OVERRIDES.items():
        if env.get(var):
            section_data = data.setdefault(section, {})
            if not isinstance(section_data, dict):
                raise ConfigError(f"{source}: key '{section}': expected a table")
            section_data[key] = env[var]
    if "source" in data:
        raise ConfigError(f"{source}: unknown key 'source'")
    try:
        settings = Settings.model_validate({**data, "source": source})
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(source, exc, _overridden_keys(env))) from None
    url_source = "YZOS_DATABASE_URL" if env.get("YZOS_DATABASE_URL") else source
    _check_database_url(url_source, settings.database.url)
    _check_llm_endpoint(
        "YZOS_LLM_BASE_URL" if env.get("YZOS_LLM_BASE_URL") else source, settings.llm
    )
    return settings


# An environment variable's name, as a shell exports it
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_llm_endpoint(source: str, llm: LlmSettings) -> None:
    """The model's URL is an http(s) URL with a host, and `api_key_env` names a variable. Neither
    value is echoed as typed: a key put there by mistake, or one in the URL, is a secret."""
    name = llm.api_key_env
    if name and not _VARIABLE_NAME.fullmatch(name):
        raise ConfigError(
            f"{source}: key 'llm.api_key_env': must name an environment variable (letters, "
            f"digits and _, not a digit first), not hold the key itself"
        )
    if _looks_like_a_key(name):
        raise ConfigError(
            f"{source}: key 'llm.api_key_env': looks like a key, not the name of the variable "
            f"that holds it (such as YZOS_LLM_API_KEY)"
        )
    if (wrong := _url_fault(llm.base_url)) is not None:
        raise ConfigError(
            f"{source}: key 'llm.base_url': {wrong}: an http(s) URL with a host, such as "
            f"http://127.0.0.1:8080/v1"
        )


def _looks_like_a_key(name: str) -> bool:
    """A long run of lower-case letters and digits mixed (`gsk_…`, `hf_…`, a bare hex key), as
    variable names are not: one pasted where its variable's name goes."""
    letters = sum(ch.islower() for ch in name)
    digits = sum(ch.isdigit() for ch in name)
    return len(name) >= 24 and letters >= 4 and digits >= 4


def _url_fault(url: str) -> str | None:
    """What keeps `url` from being the model's address, said without the URL itself (it may hold
    the key), or None."""
    try:
        parsed = urlsplit(url)
        parsed.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        return "not a URL"
    if "://" not in url:
        return "no scheme://host"
    if parsed.scheme not in ("http", "https"):
        return "a scheme other than http or https"
    if not parsed.hostname:
        return "no host"
    return None


def config_file(
    path: str | os.PathLike[str] | None, env: dict[str, str] | None = None
) -> Path | None:
    """The config file settings are read from: the explicit path, else YZOS_CONFIG, else
    ./config.toml if something is there (a FIFO or directory there is reported, not skipped);
    None: the documented defaults."""
    env = dict(os.environ) if env is None else env
    explicit = path if path is not None else env.get("YZOS_CONFIG")
    if explicit:
        return Path(explicit)
    return Path(DEFAULT_CONFIG_FILE) if Path(DEFAULT_CONFIG_FILE).exists() else None


def _flatten(data: dict[str, object], prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def setting_origins(
    path: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None
) -> tuple[Settings, dict[str, str]]:
    """The effective settings and, per dotted key, where its value came from: "default",
    "file PATH" or "env VARIABLE" (an override)."""
    env = dict(os.environ) if env is None else env
    settings = load_settings(path, env)
    file = config_file(path, env)
    in_file = set(_flatten(_read_toml(file))) if file is not None else set()
    from_env = {key: f"env {var}" for key, var in _overridden_keys(env).items()}
    origins = {
        key: from_env.get(key) or (f"file {file}" if key in in_file else "default")
        for key in _flatten(settings.model_dump())
    }
    return settings, origins
