"""Make one kind of write fail inside the database, after the writes that precede it in the same
transaction: a trigger that refuses decision rows of one call site (both backends)."""

from __future__ import annotations

from sqlalchemy import Engine, text

_PG_FUNCTION = """
CREATE OR REPLACE FUNCTION refuse_decision() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'decision trail refused (test fault)';
END $$ LANGUAGE plpgsql
"""


def refuse_decisions(engine: Engine, call_site: str) -> None:
    """From now on, inserting a decision row of `call_site` fails."""
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text(_PG_FUNCTION))
            conn.execute(
                text(
                    "CREATE TRIGGER refuse_decision BEFORE INSERT ON decisions FOR EACH ROW "
                    f"WHEN (NEW.call_site = '{call_site}') EXECUTE FUNCTION refuse_decision()"
                )
            )
        else:
            conn.execute(
                text(
                    "CREATE TRIGGER refuse_decision BEFORE INSERT ON decisions "
                    f"WHEN NEW.call_site = '{call_site}' "
                    "BEGIN SELECT RAISE(ABORT, 'decision trail refused (test fault)'); END"
                )
            )


def allow_decisions(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(
            text(
                "DROP TRIGGER IF EXISTS refuse_decision"
                + (" ON decisions" if conn.dialect.name == "postgresql" else "")
            )
        )
