"""The database layer: every SQL statement of the package, one module per table family (models,
connection and sessions, dialect differences, migrations, the lease on queued rows). Knows SQL,
not LLMs; imports nothing above it (only `config`, `kinds`, `logging`)."""
