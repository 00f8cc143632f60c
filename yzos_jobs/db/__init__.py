"""The database layer: every SQL statement of the package, one module per table family (models,
engine and sessions, dialect differences, migrations). Knows SQL, not LLMs; imports nothing
above it (only `config`, `kinds`, `logging`)."""
