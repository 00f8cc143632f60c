"""The knowledge base's judgement: the one classifier (`classifier`, its prompt and reply contract
in `verdict_prompt`), the pure promote policy, the structural noise filter, and the orchestration
that writes entities (`updater` for candidates, `triage_writes` for session triage)."""
