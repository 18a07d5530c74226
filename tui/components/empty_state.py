"""What an empty store shows: how to import logs and how to open the demo."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.render.safe_text import safe_line


def empty_text(store_path: str) -> Text:
    out = Text(justify="left")
    out.append("No sessions here yet\n\n", "bold #5fafff")
    out.append("This store is empty: ", "")
    out.append_text(safe_line(store_path, 200, style="#d7af5f"))
    out.append("\n\nImport the logs your agents already write:\n\n", "")
    for command, what in [
        ("arbor import --discover", "Claude Code, Codex and pi logs in their usual places"),
        ("arbor import PATH...", "files or folders of .jsonl logs, LangGraph checkpoint .sqlite"),
        ("ctrl+p → Import agent logs…", "the same, from inside this app"),
    ]:
        out.append(f"  {command:<30}", "bold #87d787")
        out.append(f"{what}\n", "#808890")
    out.append("\nOr look around the demo store first:\n\n", "")
    out.append(f"  {'arbor --demo':<30}", "bold #87d787")
    out.append("builds a small demo store and opens it\n", "#808890")
    out.append("\nq quits · ? shows every key", "#5c6370")
    return out


def importing_text(store_path: str, places) -> Text:
    """What an empty store shows while its first import reads the agents' folders."""
    out = Text(justify="left")
    out.append("Importing your agents' logs\n\n", "bold #5fafff")
    out.append("Into ", "")
    out.append_text(safe_line(store_path, 200, style="#d7af5f"))
    out.append(", newest sessions first, from:\n\n", "")
    for place in places:
        out.append("  ")
        out.append_text(safe_line(str(place), 200, style="#87d787"))
        out.append("\n")
    out.append("\nThey show here as they land. The status line says how far it is; x stops it "
               "(the next start goes on where it stopped).\n", "#808890")
    return out


class EmptyState(Static):
    DEFAULT_CSS = """
    EmptyState {
        width: 100%;
        height: 1fr;
        content-align: center middle;
        padding: 2 4;
    }
    """
