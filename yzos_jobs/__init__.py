"""yzos-jobs: scheduled jobs that keep a knowledge base of real work entities clean."""

__version__ = "0.3.2"
