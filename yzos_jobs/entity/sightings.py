"""Sightings: every time an entity is seen again, deduplicated by the UNIQUE key of revision 018.

`add_sightings` is the only writer (the design's `add_sighting`, batched); it lives with the SQL
in `db/sightings.py` and is named here where the design's module map puts it.
"""

from yzos_jobs.db.sightings import Sighting, add_sightings, fingerprint

__all__ = ["Sighting", "add_sightings", "fingerprint"]
