"""`observe` (the seed's name): what is read off the user's machine itself rather than from an
activity log — app metadata from application bundles and desktop entries."""
