"""Reading history: replay, replies, depth ranges, lineage between sessions, branch
comparison, the files tool calls touched, and compaction (its summary and what it saves)."""
