"""Entities: the classifier, the structural noise filter, and the code that writes entities."""
