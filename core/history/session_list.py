"""The session list as `arbor list` shows it (and `arbor mcp`'s `list_sessions` returns it):
one JSON-ready row per session, newest activity first, a sub-agent or fork right under the
session it came from, with the shortest uid prefix that names it alone and its cost."""

from __future__ import annotations

import os

SHORTEST_UID = 8


def listing(sessions, usage: dict, *, project: str | None = None, source: str | None = None,
            archived: bool = False) -> list[dict]:
    """The rows `arbor list` shows, as JSON-ready dicts, in the order shown."""
    from core.history.lineage import family_rows

    prefixes = unique_prefixes([s.uid for s in sessions])
    shown = [s for s in sessions if (archived or s.is_active)
             and (source is None or s.source == source)
             and (project is None or in_project(s.cwd, project))]
    rows = family_rows(shown, {s.id for s in shown})
    uid_of = {s.id: s.uid for s in shown}
    out = []
    for row in rows:
        s = row.session
        figure = usage.get(s.id)
        out.append({
            "uid": s.uid, "short_uid": prefixes[s.uid], "name": s.name, "source": s.source,
            "kind": s.kind, "parent_uid": uid_of.get(s.parent_id) if row.depth else None,
            "depth": row.depth, "cwd": s.cwd,
            "branches": s.branch_count, "messages": s.message_count,
            "messages_with_subagents": row.messages, "last_activity": row.updated_at,
            "archived": not s.is_active,
            "cost_usd": round(figure.cost_usd, 6) if figure else 0.0,
            "cost_incomplete": bool(figure and figure.incomplete),
            "tokens": figure.total_tokens if figure else 0,
        })
    return out


def unique_prefixes(uids: list[str]) -> dict[str, str]:
    """Each uid's shortest prefix (at least 8 characters) that no other uid starts with."""
    ordered = sorted(set(uids))
    out = {}
    for index, uid in enumerate(ordered):
        need = SHORTEST_UID
        for other in (ordered[index - 1] if index else None,
                      ordered[index + 1] if index + 1 < len(ordered) else None):
            if other is not None:
                common = len(os.path.commonprefix([uid, other]))
                need = max(need, common + 1)
        out[uid] = uid[:need]
    return out


def in_project(cwd: str | None, project: str) -> bool:
    """Whether a session run in `cwd` belongs to `project`: the same folder or one inside
    it, or a folder whose last part is `project` (when `project` names no folder path)."""
    if not cwd:
        return False
    cwd = cwd.rstrip("/") or "/"
    if "/" not in project and project not in (".", ".."):
        return os.path.basename(cwd) == project or cwd == project
    folder = os.path.abspath(os.path.expanduser(project)).rstrip("/") or "/"
    return cwd == folder or cwd.startswith(folder.rstrip("/") + "/")
