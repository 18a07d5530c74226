"""What the read tools of `arbor mcp` answer, without the protocol: each function takes the
store and plain arguments and returns JSON-ready dicts (shapes.py), or raises an ArborError
whose message is one sentence for the agent (`Refused` for arguments that make no sense)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from core.model.errors import ArborError, NotFound
from . import shapes

SEARCH_POOL = 500        # hits read when filters or a regex narrow them down afterwards
REGEX_TEXT = 200_000     # characters of a hit's text a regular expression is run over


class Refused(ArborError):
    """Arguments that cannot be answered, said in one sentence."""


def when(value: str | None, name: str, *, end: bool = False) -> datetime | None:
    """An ISO date or time given by an agent (a bare date: its start, or with `end` its end;
    no zone: UTC)."""
    if value is None or not value.strip():
        return None
    raw = value.strip()
    try:
        if len(raw) == 10:
            moment = datetime.fromisoformat(raw + ("T23:59:59.999999" if end else "T00:00:00"))
        else:
            moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise Refused(f"{name} must be an ISO date or time such as 2025-06-01 or "
                      f"2025-06-01T14:30:00Z, not {shapes.text(raw, 40)!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def resolve_session(store, ref: str):
    from core.export.formats import resolve_session as resolve

    return resolve(store, ref)


def resolve_branch(store, session, ref: int | str | None):
    from core.export.formats import resolve_branch as resolve

    return resolve(store, session, None if ref is None else str(ref))


def _compile(pattern: str | None):
    if pattern is None or pattern == "":
        return None
    if len(pattern) > 500:
        raise Refused("the regular expression is longer than 500 characters")
    try:
        return re.compile(pattern)
    except re.error as error:
        raise Refused(f"the regular expression does not compile: {error}") from None


def search(store, query: str, *, regex: str | None = None, project: str | None = None,
           source: str | None = None, session: str | None = None, since: str | None = None,
           until: str | None = None, limit: int = 10, offset: int = 0) -> dict[str, Any]:
    """Message text through the store's full-text index (words by stem and prefix, "quoted
    phrases" as written), best first, then narrowed down by scope and `regex`; a page of
    `limit` hits from `offset`."""
    from core.history.search_query import SearchQuery
    from core.history.session_list import in_project
    from core.model.clock import parse
    from core.model.entries import search_text

    parsed = SearchQuery(query or "")
    if not parsed:
        raise Refused("the query has no words to search for")
    pattern = _compile(regex)
    start, stop = when(since, "since"), when(until, "until", end=True)
    scoped = session is not None
    target = resolve_session(store, session) if scoped else None
    narrowed = bool(pattern or project or source or start or stop)
    want = offset + limit + 1
    pool = max(want, SEARCH_POOL) if narrowed else want
    raw = store.search.messages(parsed, limit=pool,
                                external_session_id=target.id if target else None)
    sessions: dict[int, Any] = {}
    kept: list[tuple[Any, Any, str]] = []
    for h in raw:
        row = sessions.get(h.external_session_id)
        if row is None:
            row = sessions[h.external_session_id] = store.sessions.get(h.external_session_id)
        if row is None or (source and row.source != source) or \
                (project and not in_project(row.cwd, project)):
            continue
        if start or stop:
            moment = parse(h.timestamp)
            if moment is None or (start and moment < start) or (stop and moment > stop):
                continue
        snippet = h.snippet
        if pattern is not None:
            entry = store.entries.get(h.seq)
            body = search_text(entry.type, entry.data)[:REGEX_TEXT] if entry else ""
            found = pattern.search(body)
            if found is None:
                continue
            left = max(0, found.start() - 60)
            snippet = ("…" if left else "") + " ".join(body[left:found.end() + 100].split())
        kept.append((h, row, snippet))
        if len(kept) >= want:
            break
    page = kept[offset:offset + limit]
    hits = []
    for h, row, snippet in page:
        branch = store.branches.containing(h.seq)
        hits.append(shapes.hit(h, session_row=row, branch_id=branch.id if branch else None,
                               snippet=snippet))
    out: dict[str, Any] = {"hits": hits, "offset": offset,
                           "next_offset": offset + limit if len(kept) > offset + limit else None}
    coverage = store.search.coverage()
    if coverage.pending:
        out["coverage"] = f"the index covers {coverage.percent}% of messages so far (indexing)"
    if narrowed and len(raw) >= pool and len(kept) < want:
        out["note"] = (f"only the {pool} best matches of the words were narrowed down; "
                       "more words or a session scope find older ones")
    return out


def list_sessions(store, *, project: str | None = None, source: str | None = None,
                  archived: bool = False, name: str | None = None, limit: int = 50,
                  offset: int = 0) -> dict[str, Any]:
    """The sessions as `arbor list` shows them (newest activity first, sub-agents under
    their session), optionally only those whose name matches `name`."""
    from core.history.session_list import listing

    every = store.sessions.list(include_archived=True)
    rows = listing(every, store.usage.by_session(), project=project, source=source,
                   archived=archived)
    if name:
        wanted = {s.uid for s in store.search.session_names(name, include_archived=archived)}
        rows = [r for r in rows if r["uid"] in wanted]
    page = rows[offset:offset + limit]
    keep = ("uid", "short_uid", "name", "source", "kind", "parent_uid", "cwd", "branches",
            "messages", "last_activity", "archived", "cost_usd", "tokens")
    sessions = []
    for row in page:
        item = {k: row[k] for k in keep}
        item["session"] = item.pop("uid")
        for field in ("name", "cwd", "last_activity"):
            item[field] = shapes.text(item[field], 500) if item[field] else item[field]
        sessions.append(item)
    return {"sessions": sessions, "total": len(rows), "offset": offset,
            "next_offset": offset + limit if len(rows) > offset + limit else None}


def get_session(store, ref: str) -> dict[str, Any]:
    s = resolve_session(store, ref)
    out = shapes.session(s)
    labels = store.annotations.branch_labels(s.id)
    out["branches"] = [shapes.branch(b, labels) for b in
                       store.branches.of_session(s.id, newest_first=False)]
    out["checkpoints"] = [shapes.checkpoint(c) for c in
                          store.annotations.checkpoints_of_session(s.id) if not c.is_hidden]
    out["usage"] = shapes.figure(store.usage.by_session().get(s.id))
    children = store.sessions.children(s.id)
    if children:
        out["sub_sessions"] = []
        for child in children[:50]:
            row = store.sessions.get(child.id)
            out["sub_sessions"].append({"session": row.uid if row else None, "kind": child.kind,
                                        "name": shapes.text(child.name, 200),
                                        "spawned_at": child.spawn_seq})
    return out


def get_messages(store, session: str, *, branch: int | str | None = None,
                 start: int | None = None, around: int | None = None, count: int = 50,
                 tools: bool = False, replayed: bool = True) -> dict[str, Any]:
    """A window of a branch's messages by position (depth on the branch: 0 is the first
    entry), from `start`, or centred on the entry `around`; the newest `count` by default.
    `replayed`: the window starts no earlier than what the agent resumes with (the newest
    compaction's summary and what it kept)."""
    s = resolve_session(store, session)
    b = resolve_branch(store, s, branch)
    head = b.head_seq
    length = store.paths.length(head)
    first = 0
    compaction = None
    if replayed and head is not None:
        try:
            compaction, first = store.paths.replay_start(head)
        except ArborError:
            compaction, first = None, 0
    if around is not None:
        entry = store.entries.get(around)
        if entry is None or head is None or not store.paths.is_ancestor(around, head):
            raise NotFound(f"entry {around} is not on branch {b.id} of session {s.uid}")
        begin = max(0, entry.depth - count // 2)
    elif start is not None:
        begin = start
    else:
        begin = max(first, length - count)
    entries = store.paths.entries(head, max(0, begin), max(0, begin) + count) if head else []
    messages = [shapes.message(e, tools=tools) for e in entries]
    out: dict[str, Any] = {"session": s.uid, "branch": b.id, "length": length,
                           "replay_starts_at": first, "start": max(0, begin),
                           "messages": messages}
    if compaction is not None and max(0, begin) <= first:
        out["compaction_summary"] = shapes.text(compaction.data.get("summary", ""))
    end = max(0, begin) + len(entries)
    out["next_start"] = end if end < length else None
    out["previous_start"] = max(0, begin - count) if begin > 0 else None
    return out


def get_entry(store, entry: int | None = None, *, session: str | None = None,
              entry_id: str | None = None) -> dict[str, Any]:
    """One entry whole: by its `entry` number, or by the agent's own id within a session."""
    if entry is not None:
        found = store.entries.get(entry)
    elif entry_id:
        if session is None:
            raise Refused("an entry_id is looked up within a session: give the session too")
        found = store.entries.find(resolve_session(store, session).id, entry_id)
    else:
        raise Refused("give an entry number, or a session and an entry_id")
    if found is None:
        raise NotFound(f"there is no entry {entry if entry is not None else entry_id!r}")
    row = store.sessions.get(found.external_session_id)
    branch = store.branches.containing(found.seq)
    out = shapes.message(found, tools=True, limit=shapes.ENTRY_LIMIT)
    out.update({"session": row.uid if row else None, "branch": branch.id if branch else None,
                "entry_id": shapes.text(found.id, 200), "parent": found.parent_seq})
    label = store.annotations.entry_labels(found.external_session_id).get(found.seq)
    if label:
        out["label"] = shapes.text(label, 200)
    usage = store.usage.of_responses([found.seq]).get(found.seq)
    if usage is not None:
        out["usage"] = shapes.response(usage)
    return out


def usage(store, *, by: str = "day", since: str | None = None, until: str | None = None,
          source: str | None = None, timezone_name: str | None = None,
          limit: int = 100) -> dict[str, Any]:
    """Tokens and cost grouped as `arbor usage` groups them."""
    from core.usage.tokens import local_zone

    try:
        local_zone(timezone_name)
    except ValueError as error:
        raise Refused(str(error)) from None
    days = [when(v, n) for v, n in ((since, "since"), (until, "until"))]
    report = store.usage.report(by, since=days[0].date() if days[0] else None,
                                until=days[1].date() if days[1] else None, source=source,
                                timezone=timezone_name)
    data = report.as_json()
    rows = data["rows"]
    for row in rows:
        row["key"] = shapes.text(row["key"], 300)
        row["models"] = [shapes.text(m, 100) for m in row["models"]]
    data["totals"]["models"] = [shapes.text(m, 100) for m in data["totals"]["models"]]
    out = {"by": by, "rows": rows[:limit], "totals": data["totals"]}
    if len(rows) > limit:
        out["note"] = f"{len(rows) - limit} more rows left out (raise limit or narrow the range)"
    return out
