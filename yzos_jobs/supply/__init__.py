"""What an ended session supplies: its candidates promoted inline, its triage applied."""
