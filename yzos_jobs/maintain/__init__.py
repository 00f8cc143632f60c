"""The scheduled jobs that keep the knowledge base clean: promote candidates, re-judge entities,
prune old history."""

# The jobs by name (maintain/jobs.py maps each to its function), and earlier names still taken.
JOB_NAMES = ("entity_promote", "entity_purge_v06", "prune", "import_sources")
# The purge's name before it re-judged with the classifier; runs and is recorded as the same job.
JOB_ALIASES = {"entity_purge": "entity_purge_v06"}
