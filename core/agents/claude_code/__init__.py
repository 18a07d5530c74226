"""Claude Code: its transcripts read into the store (`importer`) and a branch written back as
a new transcript (`writer`)."""
