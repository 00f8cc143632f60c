"""Importers: turn observers' records into activity sessions, candidates and app metadata.

Every importer is restart-safe: a record's importer_seen row is written in the same transaction
as what the record produced, and an append-only file is read on from where the last run stopped.
"""
