"""Scheduled jobs: promote candidates, re-judge entities."""
