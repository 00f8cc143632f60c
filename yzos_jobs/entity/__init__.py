"""The knowledge base's judgement: the one classifier, the pure promote policy, the structural
noise filter, and the orchestration that writes entities (`updater` for candidates, `engine` for
session triage — the seed's name for the module that merges or creates triaged entities)."""
