"""PostgreSQL databases at head for tests, reused: a database a test leaves with the schema it
was given is emptied (its rows deleted, its sequences as a fresh copy's) and handed to the next
test; one whose schema the test changed (a renamed table, a trigger, a migration) is dropped.
Emptying takes milliseconds, where copying the template and dropping the copy take a second or
more."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, create_engine, text

from tests.support.databases import create_pg_database, drop_pg_database, pg_url

# Everything in the database that is not a row: tables, columns, defaults, constraints, indexes,
# triggers, functions, views, schemas and the Alembic revision.
_SHAPE = text(
    """
    SELECT md5(string_agg(item, E'\\n' ORDER BY item)) FROM (
        SELECT format('rel %s.%s %s %s %s', n.nspname, c.relname, c.relkind, c.reloptions,
                      c.relrowsecurity) AS item
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
        UNION ALL
        SELECT format('col %s.%s %s %s %s', a.attrelid::regclass, a.attname,
                      format_type(a.atttypid, a.atttypmod), a.attnotnull,
                      pg_get_expr(d.adbin, d.adrelid))
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
        UNION ALL
        SELECT format('con %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace
        UNION ALL
        SELECT format('idx %s', pg_get_indexdef(i.indexrelid)) FROM pg_index i
        JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = 'public'::regnamespace
        UNION ALL
        SELECT format('trg %s', pg_get_triggerdef(oid)) FROM pg_trigger WHERE NOT tgisinternal
        UNION ALL
        SELECT format('fn %s %s', p.oid::regprocedure, md5(p.prosrc)) FROM pg_proc p
        JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
        UNION ALL
        SELECT format('view %s %s', c.oid::regclass, pg_get_viewdef(c.oid)) FROM pg_class c
        WHERE c.relkind IN ('v', 'm') AND c.relnamespace = 'public'::regnamespace
        UNION ALL
        SELECT format('type %s %s', t.typname, t.typtype) FROM pg_type t
        WHERE t.typnamespace = 'public'::regnamespace AND t.typrelid = 0
          AND t.typcategory <> 'A'
        UNION ALL
        SELECT format('schema %s', nspname) FROM pg_namespace
        WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
        UNION ALL
        SELECT format('alembic %s', version_num) FROM alembic_version
    ) shape
    """
)

# A fresh sequence's state: the next value is 1.
_RESTART_SEQUENCES = text(
    "SELECT setval(c.oid::regclass, 1, false) FROM pg_class c "
    "WHERE c.relkind = 'S' AND c.relnamespace = 'public'::regnamespace"
)

_TABLES = text(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
)


def _filled_tables(conn: Connection) -> list[str]:
    """The tables with at least one row."""
    tables = list(conn.scalars(_TABLES))
    if not tables:
        return []
    probes = " UNION ALL ".join(f"SELECT '{t}' WHERE EXISTS (SELECT 1 FROM {t})" for t in tables)
    return list(conn.scalars(text(probes)))


class PgPool:
    """Databases copied from `template` (at head), handed out one per test and reused."""

    def __init__(self, template: str) -> None:
        self.template = template
        self._spare: list[str] = []
        with self._connect(template) as conn:
            self._shape = conn.scalar(_SHAPE)

    @contextmanager
    def database(self) -> Iterator[str]:
        name = self._spare.pop() if self._spare else create_pg_database(self.template)
        try:
            yield pg_url(name)
        finally:
            if self._emptied(name):
                self._spare.append(name)
            else:
                drop_pg_database(name)

    def close(self) -> None:
        while self._spare:
            drop_pg_database(self._spare.pop())

    def _emptied(self, name: str) -> bool:
        """Whether `name` has the template's shape again, with no rows; False if its shape
        differs (it is then dropped) or emptying failed."""
        try:
            with self._connect(name) as conn:
                # Connections the test left open (pooled, idle, or inside a transaction) would
                # hold locks on the tables; they end with the test.
                conn.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                )
                if conn.scalar(_SHAPE) != self._shape:
                    return False
                # Deleting the few rows a test wrote is much cheaper than TRUNCATE (new files
                # for every table); foreign keys are not checked meanwhile (replica role).
                conn.execute(text("SET LOCAL session_replication_role = replica"))
                for table in _filled_tables(conn):
                    conn.execute(text(f"DELETE FROM {table}"))
                conn.execute(_RESTART_SEQUENCES)
                conn.commit()
            return True
        except Exception:
            return False

    @staticmethod
    @contextmanager
    def _connect(name: str) -> Iterator[Connection]:
        engine = create_engine(pg_url(name))
        try:
            with engine.connect() as conn:
                yield conn
        finally:
            engine.dispose()
