"""What a message says of itself besides its content, in words for a reader.

A reply that did not end normally says how it ended (pi writes `stopReason` and
`errorMessage`; Claude Code's `stop_reason` is read into the same field): an aborted reply
has no content, and drawing it as "(empty)" hid what happened. A message with nothing to
show says so plainly. The messages pane, the full-screen view and the exports use these
words, so that each says the same.
"""

from __future__ import annotations

from typing import Any

# roles whose messages hold `content` (a message of any other role is drawn from its fields)
CONTENT_ROLES = frozenset({"user", "assistant", "system", "developer", "tool", "toolResult",
                           "custom"})
# pi's summaries written as messages (AgentMessage), not as summary entries
SUMMARY_ROLES = frozenset({"branchSummary", "compactionSummary"})
SHELL_ROLE = "bashExecution"        # pi's `!command`: a command the user ran, and its output
NO_SUMMARY = "(no summary was written)"


def role_of(message: dict[str, Any]) -> str | None:
    """A message's role when it is a word (a damaged line may hold any JSON there)."""
    role = message.get("role")
    return role if isinstance(role, str) and role else None


def reply_outcome(message: dict[str, Any]) -> str | None:
    """How a reply ended, when not normally: "aborted", "error: rate limited", "cut off at
    the output limit"; None for a reply that ended as replies do (or any other message)."""
    reason = message.get("stopReason")
    error = message.get("errorMessage")
    error = " ".join(error.split()) if isinstance(error, str) else ""
    if reason == "aborted":
        # ("Request was aborted", pi's usual words, says nothing more)
        return "aborted" + (f": {error}" if error and "abort" not in error.lower() else "")
    if reason == "error":
        return f"error: {error}" if error else "error"
    if reason == "length":
        return "cut off at the output limit"
    return None


def marked(outcome: str) -> str:
    """An outcome with its sign: "⊘ aborted", "✗ error: rate limited", "… cut off at …"."""
    sign = "✗" if outcome.startswith("error") else "⊘" if outcome.startswith("aborted") else "…"
    return f"{sign} {outcome}"


def empty_words(message: dict[str, Any]) -> str:
    """What a message with nothing to show is."""
    return "(an empty reply)" if message.get("role") == "assistant" else "(an empty message)"


def shell_outcome(message: dict[str, Any]) -> list[str]:
    """How a shell run (pi's bashExecution) ended: its exit code, cancelled, output cut,
    kept out of the model's context (`!!command`)."""
    words = []
    code = message.get("exitCode")
    if message.get("cancelled") is True:
        words.append("cancelled")
    elif isinstance(code, int) and not isinstance(code, bool):
        words.append(f"exit {code}")
    if message.get("truncated") is True:
        path = message.get("fullOutputPath")
        words.append("output cut" + (f" (all of it in {path})" if isinstance(path, str) and path
                                     else ""))
    if message.get("excludeFromContext") is True:
        words.append("not sent to the model (!!)")
    return words


def shell_failed(message: dict[str, Any]) -> bool:
    code = message.get("exitCode")
    return message.get("cancelled") is True or (
        isinstance(code, int) and not isinstance(code, bool) and code != 0)


def extension_message(data: dict[str, Any]) -> dict[str, Any] | None:
    """A pi `custom_message` entry (text an extension put in the context) as a message of
    role "custom", as pi's own CustomMessage is written; None when it holds no content."""
    message = data.get("message")
    if isinstance(message, dict):
        return message
    if "content" not in data:
        return None
    return {"role": "custom", "content": data["content"], "customType": data.get("customType")}
