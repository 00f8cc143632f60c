"""The supply pipeline: what happens when an observed session ends."""
