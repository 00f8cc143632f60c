"""Sources: where the daemon finds activity to import by itself (`[sources]`), the per-file
lock that keeps two processes on one host off the same file, and the `import_sources` job."""
