"""What arbor knows of each agent's own files.

One module per agent: `pi`, `claude_code` and `codex` write a branch as a new native session
of that agent (the way its own fork does) for `arbor resume` and the app's `o` key; `arbor`
hands a session written through `core` back to the agent that continues it. `native` holds
what they share (the branch being written, new ids, writing a new file atomically), and
`resume` the plan and the run.
"""

from __future__ import annotations

from .native import Ids, ResumeError
from .resume import ResumePlan, prepare_resume, run

__all__ = ["Ids", "ResumeError", "ResumePlan", "prepare_resume", "run"]
