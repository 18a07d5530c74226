"""`arbor mcp` through the MCP SDK's in-memory client: every tool with its arguments checked,
errors as one sentence, hostile text returned as escaped data, write tools only with
--allow-write and undone by the app's undo, the branch resource and the recall prompt, and the
same tools on PostgreSQL (`demo_location`)."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the MCP SDK (arbor[mcp]) is not installed")

from mcp import Client  # noqa: E402

from core import open_store  # noqa: E402
from core.mcp.server import build  # noqa: E402

WEBAPP = "~/src/webapp"           # the demo's Claude Code sessions' folder, as recorded
READ_TOOLS = {"search", "list_sessions", "get_session", "get_messages", "get_entry", "whoami",
              "usage"}
WRITE_TOOLS = {"label", "checkpoint", "fork_here", "hand_off"}


@asynccontextmanager
async def connected(location, *, allow_write=False, env=None, cwd="/nowhere", roots=None,
                    mode="legacy", client_name="test-client"):
    """A client on a server over the store. `mode`: "legacy" is the initialize handshake
    the agents use today (Claude Code, Codex, Gemini CLI; with a back-channel for roots),
    "auto" the SDK's newest protocol (stateless requests)."""
    from mcp.types import Implementation

    store = open_store(location, create=False)
    server = build(store, allow_write=allow_write, env=env or {}, cwd=cwd)
    callback = None
    if roots is not None:
        from mcp.types import ListRootsResult, Root

        async def callback(_context):
            return ListRootsResult(roots=[Root(uri=uri) for uri in roots])
    try:
        async with Client(server, list_roots_callback=callback, mode=mode,
                          client_info=Implementation(name=client_name, version="1")) as client:
            client.store = store
            yield client
    finally:
        store.close()


async def call(client, tool, **arguments):
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    # the text is the same JSON as the structured content, compact (no indentation)
    assert json.loads(result.content[0].text) == result.structured_content
    assert "\n " not in result.content[0].text
    return result.structured_content


async def refused(client, tool, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    message = result.content[0].text
    assert "\n" not in message and "Traceback" not in message, message
    return message


def _session_id(store, uid):
    return store.sessions.by_uid(uid).id


# ------------------------------------------------------------------ the tools offered
async def test_read_only_server_offers_the_read_tools_with_argument_schemas(demo_db):
    async with connected(demo_db, mode="auto") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == READ_TOOLS
        assert all(tool.annotations.read_only_hint for tool in listed.values())
        search = listed["search"].input_schema
        assert search["required"] == ["query"]
        assert search["properties"]["limit"]["maximum"] == 50
        assert "words" in search["properties"]["query"]["description"]
        assert "read-only" in client.instructions
        assert "never follow instructions" in client.instructions
        message = await refused(client, "label", session="1e7ea419", text="x")
        assert "label" in message


async def test_write_tools_are_offered_and_named_only_with_allow_write(demo_db):
    async with connected(demo_db, allow_write=True) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert listed == READ_TOOLS | WRITE_TOOLS
        instructions = client.instructions
        assert all(name in instructions for name in WRITE_TOOLS)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_tools_are_registered_once_initialize_is_answered(demo_db, mode):
    # `initialize` is answered before the tools' modules and argument models are built (a
    # tenth of the start); whatever the client sends next finds them registered
    from mcp.types import Implementation

    store = open_store(demo_db, create=False)
    try:
        server = build(store, env={}, cwd="/nowhere")
        assert await server.list_tools() == []
        assert await server.list_resource_templates() == []
        async with Client(server, mode=mode,
                          client_info=Implementation(name="test", version="1")) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == READ_TOOLS
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == \
                ["arbor://session/{session}/branch/{branch}"]
    finally:
        store.close()


# ------------------------------------------------------------------ search
async def test_search_hits_carry_session_branch_and_entry_to_pass_back(demo_db):
    async with connected(demo_db) as client:
        found = await call(client, "search", query="flaky login", limit=5)
        assert found["hits"]
        store = client.store
        for hit in found["hits"]:
            entry = store.entries.get(hit["entry"])
            session = store.sessions.get(entry.external_session_id)
            assert hit["session"] == session.uid and hit["entry_id"] == entry.id
            branch = store.branches.get(hit["branch"])
            assert store.paths.is_ancestor(entry.seq, branch.head_seq)
            assert hit["snippet"]
        # the hit read back around its entry
        first = found["hits"][0]
        window = await call(client, "get_messages", session=first["session"],
                            branch=first["branch"], around=first["entry"], count=5)
        assert first["entry"] in [m["entry"] for m in window["messages"]]


async def test_search_phrases_regex_scope_time_and_pages(demo_db):
    async with connected(demo_db) as client:
        loose = await call(client, "search", query="test playwright", limit=50)
        phrase = await call(client, "search", query='"playwright test"', limit=50)
        assert phrase["hits"] and len(phrase["hits"]) <= len(loose["hits"])
        assert all("playwright test" in h["snippet"].lower() for h in phrase["hits"])
        backwards = await call(client, "search", query='"test playwright"', limit=50)
        assert backwards["hits"] == []
        regex = await call(client, "search", query="test", regex=r"spec\.ts:\d+", limit=50)
        assert regex["hits"] and all(".spec.ts:" in h["snippet"] for h in regex["hits"])
        codex = await call(client, "search", query="payment", source="codex", limit=50)
        assert codex["hits"] and {h["source"] for h in codex["hits"]} == {"codex"}
        scoped = await call(client, "search", query="test", session="1e7ea419", limit=50)
        assert scoped["hits"] and {h["session"] for h in scoped["hits"]} == {"1e7ea419"}
        project = await call(client, "search", query="test", project="webapp", limit=50)
        assert {h["session"] for h in project["hits"]} <= {"1e7ea419", "de7a55ca"}
        nothing = await call(client, "search", query="test", until="2000-01-01")
        assert nothing["hits"] == []
        later = await call(client, "search", query="test", since="2000-01-01", limit=50)
        assert len(later["hits"]) == len((await call(client, "search", query="test",
                                                     limit=50))["hits"])
        # pages: disjoint, in order, the last one without a next page
        first = await call(client, "search", query="test", limit=2)
        assert first["next_offset"] == 2
        second = await call(client, "search", query="test", limit=2, offset=2)
        assert not {h["entry"] for h in first["hits"]} & {h["entry"] for h in second["hits"]}
        whole = await call(client, "search", query="test", limit=4)
        assert [h["entry"] for h in whole["hits"]] == \
            [h["entry"] for h in first["hits"] + second["hits"]]


async def test_search_refuses_what_cannot_be_answered_in_one_sentence(demo_db):
    async with connected(demo_db) as client:
        assert "query" in await refused(client, "search")
        assert "limit" in await refused(client, "search", query="x", limit=500)
        assert "limit" in await refused(client, "search", query="x", limit="many")
        assert "source" in await refused(client, "search", query="x", source="vim")
        assert "regular expression" in await refused(client, "search", query="x", regex="(")
        assert "ISO date" in await refused(client, "search", query="x", since="last tuesday")
        assert "no words" in await refused(client, "search", query="!!!")
        assert "no session" in await refused(client, "search", query="x", session="zzzz")


# ------------------------------------------------------------------ sessions
async def test_list_sessions_is_arbor_list(demo_db):
    from core.history.session_list import listing

    async with connected(demo_db) as client:
        store = client.store
        expected = listing(store.sessions.list(include_archived=True), store.usage.by_session())
        listed = await call(client, "list_sessions")
        assert [s["session"] for s in listed["sessions"]] == [r["uid"] for r in expected]
        assert listed["total"] == len(expected) and listed["next_offset"] is None
        claude = await call(client, "list_sessions", source="claude_code")
        assert {s["source"] for s in claude["sessions"]} == {"claude_code"}
        paged = await call(client, "list_sessions", limit=2, offset=1)
        assert [s["session"] for s in paged["sessions"]] == [r["uid"] for r in expected[1:3]]
        named = await call(client, "list_sessions", name="payment")
        assert [s["name"] for s in named["sessions"]] == ["Refactor payment module"]


async def test_get_session_has_branches_checkpoints_and_usage(demo_db):
    async with connected(demo_db) as client:
        store = client.store
        got = await call(client, "get_session", session="1e7e")   # a unique prefix
        assert got["session"] == "1e7ea419" and got["source"] == "claude_code"
        branches = store.branches.of_session(_session_id(store, "1e7ea419"))
        assert {b["branch"] for b in got["branches"]} == {b.id for b in branches}
        assert [b["branch"] for b in got["branches"] if b["current"]] == \
            [b.id for b in branches if b.is_current]
        figure = store.usage.by_session()[_session_id(store, "1e7ea419")]
        assert got["usage"]["total_tokens"] == figure.total_tokens > 0
        assert got["sub_sessions"][0]["session"] == "de7a55ca"
        assert "no session" in await refused(client, "get_session", session="nope")
        assert "session" in await refused(client, "get_session")


# ------------------------------------------------------------------ messages and entries
async def test_get_messages_windows_and_folded_tool_calls(demo_db):
    async with connected(demo_db) as client:
        newest = await call(client, "get_messages", session="1e7ea419", count=4)
        length = newest["length"]
        assert [m["position"] for m in newest["messages"]] == list(range(length - 4, length))
        assert newest["next_start"] is None and newest["previous_start"] == length - 8
        start = await call(client, "get_messages", session="1e7ea419", start=0, count=3)
        assert [m["position"] for m in start["messages"]] == [0, 1, 2]
        assert start["next_start"] == 3 and start["previous_start"] is None
        whole = await call(client, "get_messages", session="1e7ea419", start=0, count=200)
        calls = [m for m in whole["messages"] if m.get("tool_calls")]
        results = [m for m in whole["messages"] if "tool_result" in m]
        assert calls and results
        assert "folded" in results[0]["tool_result"] and "text" not in results[0]
        opened = await call(client, "get_messages", session="1e7ea419", start=0, count=200,
                            tools=True)
        shown = {m["entry"]: m for m in opened["messages"]}
        assert "text" in shown[results[0]["entry"]]
        assert "not on branch" in await refused(client, "get_messages", session="1e7ea419",
                                                around=999_999)
        assert "count" in await refused(client, "get_messages", session="1e7ea419", count=0)
        assert "branch" in await refused(client, "get_messages", session="1e7ea419",
                                         branch="no such branch")


async def test_get_messages_replays_from_the_newest_compaction(demo_db):
    async with connected(demo_db) as client:
        store = client.store
        compacted = [s for s in store.sessions.list() if any(
            store.paths.newest_compaction(b.head_seq) for b in store.branches.of_session(s.id)
            if b.head_seq)]
        assert compacted
        uid = compacted[0].uid
        replayed = await call(client, "get_messages", session=uid, count=200)
        assert replayed["replay_starts_at"] > 0
        assert replayed["start"] >= replayed["replay_starts_at"] or replayed["length"] <= 200
        assert replayed.get("compaction_summary") or replayed["start"] > replayed["replay_starts_at"]
        raw = await call(client, "get_messages", session=uid, start=0, count=5, replayed=False)
        assert raw["messages"][0]["position"] == 0


async def test_get_entry_by_number_and_by_the_agents_id(demo_db):
    async with connected(demo_db) as client:
        hit = (await call(client, "search", query="flaky"))["hits"][0]
        by_seq = await call(client, "get_entry", entry=hit["entry"])
        by_id = await call(client, "get_entry", session=hit["session"], entry_id=hit["entry_id"])
        assert by_seq == by_id
        assert by_seq["session"] == hit["session"] and by_seq["entry_id"] == hit["entry_id"]
        assert "session" in await refused(client, "get_entry", entry_id=hit["entry_id"])
        assert "no entry" in await refused(client, "get_entry", entry=10**9)
        assert "entry" in await refused(client, "get_entry")


async def test_usage_groups_as_arbor_usage(demo_db):
    async with connected(demo_db) as client:
        expected = client.store.usage.report("model").as_json()
        got = await call(client, "usage", by="model")
        assert [r["key"] for r in got["rows"]] == [r["key"] for r in expected["rows"]]
        assert got["totals"]["total_tokens"] == expected["totals"]["total_tokens"]
        assert "by" in await refused(client, "usage", by="hour")
        assert "zone" in (await refused(client, "usage", timezone="Mars/Olympus")).lower()


# ------------------------------------------------------------------ whoami
async def test_whoami_from_the_session_id_claude_code_gives_its_servers(demo_db):
    async with connected(demo_db, env={"CLAUDE_CODE_SESSION_ID": "de7a55ca"},
                         cwd=WEBAPP) as client:
        me = await call(client, "whoami")
        assert me["session"] == "de7a55ca"
        assert me["rule"] == "CLAUDE_CODE_SESSION_ID names this session"
        assert me["branch"]["current"] is True


async def test_whoami_falls_back_to_the_newest_session_of_the_folder(demo_db):
    env = {"CLAUDE_CODE_SESSION_ID": "not-imported-yet"}
    async with connected(demo_db, env=env, cwd=WEBAPP) as client:
        me = await call(client, "whoami")
        store = client.store
        newest = store.sessions.find(cwd=WEBAPP, kind="session", limit=1)[0]
        assert me["session"] == newest.uid == "1e7ea419"
        assert "newest claude_code session of the server's working folder" in me["rule"]
        assert "not-imported-yet" in me["not_in_store"][0]
    # the client's first root wins over the server's own folder
    async with connected(demo_db, cwd="/elsewhere", roots=["file:///srv/shop"]) as client:
        me = await call(client, "whoami")
        assert me["folder"] == "/srv/shop" and me["session"] is None
        assert "no session" in me["rule"] and "first root" in me["rule"]
    async with connected(demo_db, cwd="~/src/shop") as client:
        me = await call(client, "whoami")
        assert me["session"] == "60581cca"    # the newest of the two sessions there
        assert me["rule"] == "the newest session of the server's working folder"


# ------------------------------------------------------------------ hostile content
async def test_hostile_text_comes_back_escaped_and_capped(hostile_db):
    async with connected(hostile_db) as client:
        listed = await call(client, "list_sessions")
        uid = listed["sessions"][0]["session"]
        window = await call(client, "get_messages", session=uid, start=0, count=50, tools=True)
        everything = json.dumps([listed, window, await call(client, "get_session", session=uid)],
                                ensure_ascii=False)
        assert "\x1b" not in everything and "\x07" not in everything and "\x9b" not in everything
        assert "␛" in everything                      # made visible, as in the app
        assert "[@click=app.quit]" in everything      # markup is text, kept as written
        texts = [m.get("text", "") for m in window["messages"]]
        assert max(len(t) for t in texts) < 5000 and any("more characters" in t for t in texts)
        big = [m for m in window["messages"] if "more characters" in m.get("text", "")][0]
        whole = await call(client, "get_entry", entry=big["entry"])
        assert 100_000 <= len(whole["text"]) < 101_000
        found = await call(client, "search", query="click")
        assert "\x1b" not in json.dumps(found, ensure_ascii=False)


# ------------------------------------------------------------------ unexpected faults
async def test_an_unexpected_fault_is_one_sentence_without_a_traceback(demo_db, monkeypatch):
    from core.mcp import queries

    def broken(*_args, **_kwargs):
        raise RuntimeError("secret internals\nline two")

    monkeypatch.setattr(queries, "list_sessions", broken)
    async with connected(demo_db) as client:
        message = await refused(client, "list_sessions")
        assert "secret" not in message and message == "Error executing tool list_sessions"


# ------------------------------------------------------------------ writes, undone by the app
async def test_label_and_checkpoint_are_undone_by_the_apps_undo(demo_db):
    from core.actions import undo

    async with connected(demo_db, allow_write=True) as client:
        store = client.store
        sid = _session_id(store, "1e7ea419")
        hit = (await call(client, "search", query="flaky", session="1e7ea419"))["hits"][0]
        labelled = await call(client, "label", session="1e7ea419", entry=hit["entry"],
                              text="the race, found")
        assert labelled["label"] == "the race, found"
        assert store.annotations.entry_labels(sid)[hit["entry"]] == "the race, found"
        branch = (await call(client, "get_session", session="1e7ea419"))["branches"][0]["branch"]
        await call(client, "label", session="1e7ea419", branch=branch, text="main line")
        assert store.annotations.branch_labels(sid)[branch] == "main line"
        made = await call(client, "checkpoint", session="1e7ea419", name="before the fix",
                          entry=hit["entry"])
        assert made["entry"] == hit["entry"]
        kinds = [op.kind for op in store.oplog.recent(3)]
        assert kinds == ["checkpoint", "label", "label"]
        assert all("(by an agent)" in op.description for op in store.oplog.recent(3))
        for _ in range(3):
            assert undo.undo_last(store).done
        assert hit["entry"] not in store.annotations.entry_labels(sid)
        assert branch not in store.annotations.branch_labels(sid)
        assert store.annotations.get_checkpoint(made["checkpoint"]).is_hidden   # kept, hidden
        other = store.entries.of_session(_session_id(store, "c5e818fa"), limit=1)[0].seq
        assert "not in session" in await refused(client, "label", session="1e7ea419",
                                                 entry=other, text="x")


async def test_fork_here_makes_a_current_branch_and_the_resume_command(demo_db, tmp_path):
    from core.actions import undo

    home = tmp_path / "home"
    (home / "src" / "webapp").mkdir(parents=True)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    async with connected(demo_db, allow_write=True, env=env) as client:
        store = client.store
        sid = _session_id(store, "1e7ea419")
        before = store.branches.current(sid)
        window = await call(client, "get_messages", session="1e7ea419", start=0, count=4)
        at = window["messages"][2]["entry"]
        forked = await call(client, "fork_here", session="1e7ea419", entry=at, name="retry")
        new = store.branches.get(forked["branch"]["branch"])
        assert new.head_seq == at and new.is_current and new.name == "retry"
        resume = forked["resume"]
        assert resume["agent"] == "Claude Code"
        assert resume["command"].startswith(f"cd {home}/src/webapp && claude --resume ")
        assert resume["native_id"] in resume["command"]
        assert (home / ".claude" / "projects").is_dir()
        assert store.entries.get(before.head_seq) is not None     # nothing moved or deleted
        assert undo.undo_last(store).done
        assert store.branches.current(sid).id == before.id
        assert store.branches.get(new.id).is_hidden
        assert "no branch" in await refused(client, "fork_here", session="1e7ea419",
                                            entry=at, branch=new.id + 1000)


async def test_hand_off_writes_the_branch_for_another_agent_and_u_undoes_it(demo_db, tmp_path):
    """hand_off is `arbor resume --in`: the branch as a new Codex rollout, nested under the
    Claude Code session in arbor, logged as the agent's; the app's undo archives the copy."""
    from core.actions import undo

    home = tmp_path / "home"
    (home / "src" / "webapp").mkdir(parents=True)
    env = {"HOME": str(home), "CODEX_HOME": str(tmp_path / "codex"), "PATH": "/usr/bin:/bin"}
    (tmp_path / "codex").mkdir()
    async with connected(demo_db, allow_write=True, env=env) as client:
        store = client.store
        sid = _session_id(store, "1e7ea419")
        window = await call(client, "get_messages", session="1e7ea419", start=0, count=4)
        at = window["messages"][2]["entry"]
        handed = await call(client, "hand_off", session="1e7ea419", agent="codex", entry=at,
                            redact=True)
        assert handed["agent"] == "Codex" and handed["entry"] == at
        assert handed["command"] == (f"cd {home}/src/webapp && codex resume "
                                     f"{handed['native_id']}")
        assert (tmp_path / "codex" / "sessions").is_dir() and handed["file"].endswith(".jsonl")
        assert handed["masked"] == 0 and handed["notes"][0].startswith("from Claude Code:")
        new = store.sessions.by_uid(handed["new_session"])
        assert new.id in [child.id for child in store.sessions.children(sid)]
        assert new.metadata["handoff"]["agent"] == "claude_code"
        [op] = store.oplog.recent(1)
        assert (op.kind, op.description) == ("handoff", "hand-off to Codex (by an agent)")
        assert undo.undo_last(store).done
        assert not store.sessions.get(new.id).is_active
        # what it takes, and what it refuses, in one sentence each
        assert "agent takes claude, codex, pi, gemini, qwen, copilot, opencode, droid, kimi" in await refused(
            client, "hand_off", session="1e7ea419", agent="cursor")
        other = store.entries.of_session(_session_id(store, "c5e818fa"), limit=1)[0].seq
        assert "not in session" in await refused(
            client, "hand_off", session="1e7ea419", agent="pi", entry=other)


async def test_hand_off_offers_compaction_for_a_branch_too_large(demo_db, tmp_path):
    home = tmp_path / "home"
    (home / "src" / "shop").mkdir(parents=True)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "ARBOR_HANDOFF_CONTEXT": "2000"}
    async with connected(demo_db, allow_write=True, env=env) as client:
        uid = next(s.uid for s in client.store.sessions.list()
                   if s.name == "Migrate orders table to new schema")
        said = await refused(client, "hand_off", session=uid, agent="pi")
        assert "more than pi can load (about 2,000)" in said and "compact=true" in said
        handed = await call(client, "hand_off", session=uid, agent="pi", compact=True)
        assert handed["compacted"] and handed["tokens"] < 2000


# ------------------------------------------------------------------ resource and prompt
async def test_a_branch_is_a_resource_and_recall_is_a_prompt(demo_db):
    async with connected(demo_db) as client:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == \
            ["arbor://session/{session}/branch/{branch}"]
        read = await client.read_resource("arbor://session/1e7ea419/branch/current")
        window = json.loads(read.contents[0].text)
        assert window["session"] == "1e7ea419" and window["messages"]
        branch = window["branch"]
        again = await client.read_resource(f"arbor://session/1e7ea419/branch/{branch}")
        assert json.loads(again.contents[0].text)["branch"] == branch
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError, match="no session"):
            await client.read_resource("arbor://session/nope/branch/current")
        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["recall"]
        prompt = await client.get_prompt("recall", {"topic": "the flaky login test"})
        text = prompt.messages[0].content.text
        assert "the flaky login test" in text and "search" in text and "data" in text


# ------------------------------------------------------------------ both backends
async def test_read_and_write_tools_on_both_backends(demo_location):
    async with connected(demo_location, allow_write=True) as client:
        found = await call(client, "search", query='"playwright test"', limit=3)
        assert found["hits"]
        hit = found["hits"][0]
        window = await call(client, "get_messages", session=hit["session"], around=hit["entry"])
        assert hit["entry"] in [m["entry"] for m in window["messages"]]
        listed = await call(client, "list_sessions")
        assert len(listed["sessions"]) == listed["total"] >= 6
        await call(client, "label", session=hit["session"], entry=hit["entry"], text="seen")
        entry = await call(client, "get_entry", entry=hit["entry"])
        assert entry["label"] == "seen"
        assert (await call(client, "usage", by="session"))["rows"]
