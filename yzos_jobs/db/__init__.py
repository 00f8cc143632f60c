"""Database layer: models, engine and sessions, dialect helpers, migrations. Knows SQL, not LLMs."""
