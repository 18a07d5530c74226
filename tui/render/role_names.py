"""What a role is called where it is shown (any other role by its own name). Apart from
formatting.py so that `arbor search`, which must start fast, names roles as the app does."""

ROLE_NAMES = {"toolResult": "tool result", "bashExecution": "shell", "custom": "extension message",
              "branchSummary": "branch summary", "compactionSummary": "compaction summary"}
