"""The read tools of `arbor mcp`: search, list_sessions, get_session, get_messages,
get_entry, whoami, usage. Each declares its arguments (the JSON schema an agent sees) and
hands the work to queries.py / whoami.py through `Served.answer`."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from . import queries

Source = Literal["claude_code", "codex", "pi", "langgraph", "arbor", "gemini", "opencode",
                 "copilot", "qwen", "crush", "droid", "amp", "kimi", "aider"]
SessionRef = Annotated[str, Field(min_length=1, max_length=200,
                                  description="a session's uid, a unique uid prefix, or its name")]
BranchRef = Annotated[int | str | None, Field(
    description="a branch's number or name; default: the session's current branch")]
Project = Annotated[str | None, Field(max_length=1000, description=(
    "only sessions run in this folder or below it, or whose folder is named this"))]
Since = Annotated[str | None, Field(max_length=40, description="ISO date or time, e.g. 2025-06-01")]
Until = Annotated[str | None, Field(max_length=40, description="ISO date or time (a date: all of that day)")]
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def register(server, served) -> None:
    store = served.store

    @server.tool(annotations=READ)
    def search(
        query: Annotated[str, Field(min_length=1, max_length=1000, description=(
            'words (each matched by its stem and as a prefix) and "quoted phrases" '
            "(matched as written)"))],
        regex: Annotated[str | None, Field(max_length=500, description=(
            "a Python regular expression the text of each hit must also match"))] = None,
        project: Project = None,
        source: Annotated[Source | None, Field(description="only sessions of this agent")] = None,
        session: Annotated[str | None, Field(max_length=200, description=(
            "only this session (uid, unique uid prefix or name)"))] = None,
        since: Since = None,
        until: Until = None,
        limit: Annotated[int, Field(ge=1, le=50, description="hits on this page")] = 10,
        offset: Annotated[int, Field(ge=0, le=10_000, description=(
            "hits to skip: the next_offset of the previous page"))] = 0,
    ) -> CallToolResult:
        """Search the messages of every stored agent session through the full-text index,
        best match first. Each hit has its session, branch and entry (pass them to
        get_messages(session, branch, around=entry) to read around it) and a snippet."""
        return served.answer(lambda: queries.search(
            store, query, regex=regex, project=project, source=source, session=session,
            since=since, until=until, limit=limit, offset=offset))

    @server.tool(annotations=READ)
    def list_sessions(
        project: Project = None,
        source: Annotated[Source | None, Field(description="only sessions of this agent")] = None,
        archived: Annotated[bool, Field(description="archived sessions too")] = False,
        name: Annotated[str | None, Field(max_length=200, description=(
            "only sessions whose name matches this (as typed: prefixes, pieces of words)"))] = None,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> CallToolResult:
        """The stored sessions as `arbor list` shows them: newest activity first, sub-agents
        and forks under their session, with branches, messages, last activity and cost."""
        return served.answer(lambda: queries.list_sessions(
            store, project=project, source=source, archived=archived, name=name, limit=limit,
            offset=offset))

    @server.tool(annotations=READ)
    def get_session(session: SessionRef) -> CallToolResult:
        """One session: its metadata, every branch (number, name, head and fork entries,
        which is current), its checkpoints, sub-sessions and usage (tokens, cost)."""
        return served.answer(lambda: queries.get_session(store, session))

    @server.tool(annotations=READ)
    def get_messages(
        session: SessionRef,
        branch: BranchRef = None,
        start: Annotated[int | None, Field(ge=0, description=(
            "the first position (0: the branch's first entry)"))] = None,
        around: Annotated[int | None, Field(ge=0, description=(
            "an entry number (from search): the window is centred on it"))] = None,
        count: Annotated[int, Field(ge=1, le=200, description="entries in the window")] = 50,
        tools: Annotated[bool, Field(description=(
            "show tool calls' arguments and tool results whole (folded by default)"))] = False,
        replayed: Annotated[bool, Field(description=(
            "by default start no earlier than what the agent resumes with (the newest "
            "compaction's summary and what it kept); false: the whole history"))] = True,
    ) -> CallToolResult:
        """A window of a branch's messages in order: the newest `count` by default, or from
        position `start`, or around an entry. Tool calls are folded to their name unless
        `tools`; next_start / previous_start page through the branch."""
        return served.answer(lambda: queries.get_messages(
            store, session, branch=branch, start=start, around=around, count=count,
            tools=tools, replayed=replayed))

    @server.tool(annotations=READ)
    def get_entry(
        entry: Annotated[int | None, Field(ge=1, description="the entry's number")] = None,
        session: Annotated[str | None, Field(max_length=200, description=(
            "with entry_id: the session the entry is in"))] = None,
        entry_id: Annotated[str | None, Field(max_length=200, description=(
            "the agent's own id of the entry (a uuid in Claude Code)"))] = None,
    ) -> CallToolResult:
        """One entry whole (text, tool calls and results), with its session, branch,
        parent, label and usage."""
        return served.answer(lambda: queries.get_entry(store, entry, session=session,
                                                       entry_id=entry_id))

    @server.tool(annotations=READ)
    async def whoami(ctx: Context) -> CallToolResult:
        """The session and branch of the agent calling this server, and which rule found
        them (a session id the agent passes to its MCP servers, else the newest session of
        its working folder)."""
        from anyio import to_thread

        from . import whoami as who

        client = None
        roots: list[str] = []
        try:
            params = ctx.session.client_params
            client = params.client_info.name if params is not None else None
            roots = await _roots(ctx)
        except Exception:   # (a client that says less: the environment still answers)
            pass
        return await to_thread.run_sync(lambda: served.answer(lambda: who.identify(
            store, env=served.env, cwd=served.cwd, client=client, roots=roots)))

    @server.tool(annotations=READ)
    def usage(
        by: Annotated[Literal["session", "day", "week", "month", "model", "project"],
                      Field(description="one row per group")] = "day",
        since: Since = None,
        until: Until = None,
        source: Annotated[Source | None, Field(description="only sessions of this agent")] = None,
        timezone: Annotated[str | None, Field(max_length=60, description=(
            "an IANA zone for days (default: the server's local one)"))] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="rows at most")] = 100,
    ) -> CallToolResult:
        """Tokens and cost of the agents' responses, one row per group and a total (each
        response counted once), as `arbor usage` shows them."""
        return served.answer(lambda: queries.usage(
            store, by=by, since=since, until=until, source=source, timezone_name=timezone,
            limit=limit))


async def _roots(ctx) -> list[str]:
    """The client's roots (its working folders), when it declares it has some; waits 2 s."""
    import warnings

    import anyio

    caps = ctx.client_capabilities
    if caps is None or getattr(caps, "roots", None) is None:
        return []
    with anyio.move_on_after(2), warnings.catch_warnings():
        # (roots are deprecated from protocol 2026-07-28 on; the agents speak older ones)
        warnings.simplefilter("ignore", UserWarning)
        listed = await ctx.session.list_roots()
        return [str(root.uri) for root in listed.roots]
    return []
