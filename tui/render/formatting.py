"""Small formatting helpers: ages, times, counts. Pure functions, no Textual."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

from core.agents.registry import colours
from core.model.clock import parse
from tui.render.role_names import ROLE_NAMES  # noqa: F401  (re-exported)

Clock = Callable[[], datetime]

ROLE_STYLES = {
    "user": "bold #5fafff",
    "assistant": "bold #87d787",
    "toolResult": "bold #d7af5f",
    "tool": "bold #d7af5f",
    "system": "bold #d787d7",
    "developer": "bold #d787d7",
    "bashExecution": "bold #5fafff",     # pi's `!command`: the user ran it
}

# each agent's colour (its `Agent.colour`, core/agents/)
SOURCE_STYLES = colours()

DIM = "#808890"
FAINT = "#5c6370"
LABEL_STYLE = "bold #1c1c1c on #d7af5f"
CURRENT_STYLE = "bold #87d787"
CHECKPOINT_STYLE = "#87afd7"
MARKER_STYLE = "bold #d787d7"
ERROR_STYLE = "bold #ff5f5f"


def age(moment: str | datetime | None, now: datetime) -> str:
    """A short age: 'now', '42s', '5m', '3h', '2d', '7w', '3mo', '2y'."""
    when = parse(moment) if not isinstance(moment, datetime) else moment
    if when is None:
        return "?"
    seconds = (now - when).total_seconds()
    if seconds < 0:
        return "now"
    if seconds < 45:
        return "now"
    if seconds < 3600:
        return f"{max(1, int(seconds // 60))}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    days = seconds / 86400
    if days < 14:
        return f"{int(days)}d"
    if days < 60:
        return f"{int(days // 7)}w"
    if days < 365:
        return f"{int(days // 30)}mo"
    return f"{int(days // 365)}y"


def clock_time(moment: str | datetime | None, now: datetime) -> str:
    """'09:03:07' today (UTC), 'Nov 20 09:03' this year, '2025-11-20' before."""
    when = parse(moment) if not isinstance(moment, datetime) else moment
    if when is None:
        return ""
    when = when.astimezone(timezone.utc)
    now = now.astimezone(timezone.utc)
    if when.date() == now.date():
        return when.strftime("%H:%M:%S")
    if when.year == now.year:
        return when.strftime("%b %d %H:%M")
    return when.strftime("%Y-%m-%d")


def count(number: int, singular: str, plural: str | None = None) -> str:
    word = singular if number == 1 else (plural or singular + "s")
    return f"{number:,} {word}"


def short_count(number: int) -> str:
    """1234 -> '1.2k', 100000 -> '100k'."""
    if number < 1000:
        return str(number)
    if number < 10_000:
        return f"{number / 1000:.1f}k"
    if number < 1_000_000:
        return f"{number // 1000}k"
    return f"{number / 1_000_000:.1f}M"


def branch_title(branch) -> str:
    """A branch's name, else what made it: 'rollback #8', 'branch #9' (an InternalSession)."""
    if branch.name:
        return branch.name
    if branch.parent_session_id is None:
        return f"main #{branch.id}"
    if (branch.metadata or {}).get("rolled_back_from"):
        return f"rollback #{branch.id}"
    return f"branch #{branch.id}"


def short_id(entry_id: str | None) -> str:
    if not entry_id:
        return "—"
    return entry_id[:8]


def usage_amount(figure) -> str:
    """A usage figure in a few cells: "$1.23" ("$1.23+" when part of it has no price), or
    its tokens ("52k tok") when none of it has a price."""
    from core.usage.tokens import fmt_tokens, fmt_usd

    if figure.unpriced and not figure.cost_usd:
        return f"{fmt_tokens(figure.total_tokens)} tok"
    return fmt_usd(figure.cost_usd) + ("+" if figure.unpriced else "")


def usage_style(figure) -> str:
    """Amber for a figure with an unpriced part, green otherwise."""
    return "#d7af5f" if figure.unpriced else "#87af87"
