"""Observation helpers: app metadata from application bundles and desktop entries."""
