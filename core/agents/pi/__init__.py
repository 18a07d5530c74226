"""pi: its session files, versions 1 to 3, read into the store (`importer`) and a branch
written back as a new session file (`writer`)."""
