"""Handing a branch to another agent (issue 31), without the agents: the tool table, what
crosses, provenance and undo, reuse, size, redaction, sessions whose log was deleted, and
the command line. The agents' own readers and headless resumes are in
test_handoff_readers.py and test_handoff_lab.py (opt-in)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_logs import NOW, ClaudeLog, claude_session, fixed_ids, text, tool_use
from handoff_cases import import_source
from core import open_store
from core.actions.undo import undo_last
from core.handoff import BranchTooLarge, continued_in, prepare_handoff
from core.handoff import tools
from core.importing import import_paths


@pytest.fixture
def world(tmp_path):
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
           "CODEX_HOME": str(tmp_path / "codex"), "PI_CODING_AGENT_DIR": str(tmp_path / "pi")}
    (tmp_path / "codex").mkdir()
    cwd = tmp_path / "work"
    cwd.mkdir()
    store = open_store(tmp_path / "arbor.db")
    yield store, env, str(cwd), tmp_path
    store.close()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# ---------------------------------------------------------------- the tool table
@pytest.mark.parametrize("source,name,args,target,want_name,want_args", [
    ("claude_code", "Bash", {"command": "ls", "description": "list", "timeout": 5000},
     "pi", "bash", {"command": "ls", "timeout": 5.0}),
    ("claude_code", "Bash", {"command": "ls"}, "codex", "exec_command", {"cmd": "ls"}),
    ("codex", "exec_command", {"cmd": "make", "workdir": "/srv"}, "claude_code", "Bash",
     {"command": "cd /srv && make"}),
    ("codex", "shell", {"command": ["bash", "-lc", "rg x"]}, "pi", "bash", {"command": "rg x"}),
    ("codex", "shell", {"command": ["rg", "-n", "a b"]}, "pi", "bash", {"command": "rg -n 'a b'"}),
    ("pi", "read", {"path": "a.py", "offset": 3}, "claude_code", "Read",
     {"file_path": "a.py", "offset": 3}),
    ("claude_code", "Read", {"file_path": "a.py"}, "codex", "Read", {"file_path": "a.py"}),
    ("pi", "write", {"path": "n.txt", "content": "a\nb\n"}, "codex", "apply_patch",
     {"input": "*** Begin Patch\n*** Add File: n.txt\n+a\n+b\n*** End Patch\n"}),
    ("claude_code", "Edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
     "codex", "apply_patch",
     {"input": "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"}),
    ("claude_code", "Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"},
     "pi", "edit", {"path": "a.py", "edits": [{"oldText": "x", "newText": "y"}]}),
    ("pi", "edit", {"path": "a.py", "edits": [{"oldText": "x", "newText": "y"}]},
     "claude_code", "Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}),
    ("codex", "apply_patch", {"input": "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch"},
     "claude_code", "Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}),
    ("codex", "apply_patch", {"input": "*** Begin Patch\n*** Add File: b.txt\n+hi\n*** End Patch"},
     "pi", "write", {"path": "b.txt", "content": "hi\n"}),
    ("claude_code", "TodoWrite", {"todos": [{"content": "Test", "status": "pending",
                                             "activeForm": "Testing"}]},
     "codex", "update_plan", {"plan": [{"step": "Test", "status": "pending"}]}),
    ("codex", "update_plan", {"plan": [{"step": "Test", "status": "completed"}]},
     "claude_code", "TodoWrite", {"todos": [{"content": "Test", "status": "completed",
                                             "activeForm": "Test"}]}),
    # no equivalent: kept generic, under its own name with its own arguments
    ("claude_code", "TodoWrite", {"todos": []}, "pi", "TodoWrite", {"todos": []}),
    ("codex", "apply_patch", {"input": "*** Begin Patch\n*** Delete File: a\n*** End Patch"},
     "claude_code", "apply_patch", {"input": "*** Begin Patch\n*** Delete File: a\n*** End Patch"}),
    ("claude_code", "Grep", {"pattern": "x"}, "codex", "Grep", {"pattern": "x"}),
    ("claude_code", "Edit", {"file_path": "a", "old_string": "x", "new_string": "y",
                             "replace_all": True}, "pi", "Edit",
     {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True}),
])
def test_a_call_is_written_as_the_targets_own_tool_where_it_has_one(source, name, args, target,
                                                                      want_name, want_args):
    mapped = tools.map_call(source, target, name, args, cwd="/home/me/project")
    assert (mapped.name, mapped.args) == (want_name, want_args)


def test_a_patch_touching_two_files_stays_one_patch_for_codex_and_generic_elsewhere():
    patch = ("*** Begin Patch\n*** Add File: a.txt\n+a\n*** Update File: b.py\n@@\n ctx\n-old\n"
             "+new\n*** End Patch")
    calls = tools.parse_patch(patch)
    assert [(c.kind, c.args["path"]) for c in calls] == [("write", "a.txt"), ("edit", "b.py")]
    assert calls[1].args["edits"] == [{"old": "ctx\nold", "new": "ctx\nnew"}]
    assert tools.map_call("codex", "claude_code", "apply_patch", {"input": patch}).name == "apply_patch"


def test_every_kind_has_a_row_in_the_docs():
    doc = (Path(__file__).parent.parent / "docs" / "handoff.md").read_text()
    for kind, names in tools.TOOL_NAMES.items():
        assert f"| {kind} |" in doc
        for name in names.values():
            if name:
                assert name in doc


def test_every_target_is_an_agent_with_a_writer_and_a_tools_row_and_a_column_in_the_docs():
    from core.agents.registry import agents, title
    from core.handoff import targets

    writable = targets.writable()
    assert writable == ("claude_code", "codex", "pi", "gemini", "qwen", "copilot", "opencode", "droid",
                        "kimi")
    doc = (Path(__file__).parent.parent / "docs" / "handoff.md").read_text()
    for target in writable:
        assert tools.has_row(target)
        assert f"→ {title(target)} |" in doc
    # an agent whose writer does not write sessions yet is no target, row or not
    for agent in agents():
        module = agent.writer_module()
        if module is not None and getattr(module, "WRITES", True) is False:
            assert agent.source not in writable
    assert targets.offered("qwen")[0] == "qwen" and targets.offered("kimi")[0] == "kimi"
    assert targets.offered("aider")[0] == "claude_code"


def test_a_tools_row_is_all_an_agent_with_a_writer_needs_to_be_a_target(monkeypatch):
    """An agent's writer that writes sessions (place, write, command) plus its row in
    tools.ROWS: a target, its calls under its own tools (as Gemini CLI's, droid's and Kimi
    CLI's became; here Aider, with a writer that writes sessions in place of its own)."""
    from types import SimpleNamespace

    from core.agents import registry
    from core.handoff import targets

    module = SimpleNamespace(place=lambda job: (Path("/x/s.jsonl"), "s"),
                             write=lambda job, file, new_id: None,
                             command=lambda new_id: ["aider", "--resume", new_id])
    original = registry.Agent.writer_module
    monkeypatch.setattr(registry.Agent, "writer_module",
                        lambda self: module if self.source == "aider" else original(self))
    targets._targets.cache_clear()
    try:
        assert "aider" not in targets.writable()          # no row yet
        row = tools.Row(((tools.SHELL, tools.tool("run", command="cmd")),))
        monkeypatch.setitem(tools.ROWS, "aider", row)
        targets._targets.cache_clear()
        assert "aider" in targets.writable()
        assert targets.executable("aider") == "aider"
        assert tools.map_call("pi", "aider", "bash", {"command": "ls"}).name == "run"
    finally:
        targets._targets.cache_clear()


@pytest.mark.parametrize("source,name,args,target,want_name,want_args", [
    ("claude_code", "Bash", {"command": "ls", "timeout": 5000, "description": "list"}, "qwen",
     "run_shell_command", {"command": "ls", "description": "list", "timeout": 5000}),
    ("codex", "exec_command", {"cmd": "make", "workdir": "/srv"}, "qwen", "run_shell_command",
     {"command": "make", "directory": "/srv"}),
    ("qwen", "run_shell_command", {"command": "make", "directory": "/srv"}, "pi", "bash",
     {"command": "cd /srv && make"}),
    ("pi", "read", {"path": "a.py", "offset": 3, "limit": 5}, "qwen", "read_file",
     {"file_path": "/w/a.py", "offset": 2, "limit": 5}),
    ("qwen", "read_file", {"file_path": "/w/a.py", "offset": 0}, "claude_code", "Read",
     {"file_path": "/w/a.py", "offset": 1}),
    ("qwen", "write_file", {"file_path": "/w/n.txt", "content": "a\n"}, "codex", "apply_patch",
     {"input": "*** Begin Patch\n*** Add File: /w/n.txt\n+a\n*** End Patch\n"}),
    ("claude_code", "Edit", {"file_path": "/w/a", "old_string": "x", "new_string": "y",
                             "replace_all": True}, "qwen", "edit",
     {"file_path": "/w/a", "old_string": "x", "new_string": "y", "replace_all": True}),
    ("qwen", "edit", {"file_path": "/w/a", "old_string": "x", "new_string": "y"}, "pi", "edit",
     {"path": "/w/a", "edits": [{"oldText": "x", "newText": "y"}]}),
    ("codex", "update_plan", {"plan": [{"step": "Test", "status": "pending"}]}, "qwen",
     "todo_write", {"todos": [{"content": "Test", "status": "pending", "id": "1"}]}),
    ("qwen", "todo_write", {"todos": [{"id": "a", "content": "Test", "status": "completed"}]},
     "claude_code", "TodoWrite",
     {"todos": [{"content": "Test", "status": "completed", "activeForm": "Test"}]}),
    ("qwen", "web_fetch", {"url": "u"}, "claude_code", "web_fetch", {"url": "u"}),   # generic
])
def test_qwen_codes_tools_cross_both_ways(source, name, args, target, want_name, want_args):
    mapped = tools.map_call(source, target, name, args, "/w")
    assert (mapped.name, mapped.args) == (want_name, want_args)


@pytest.mark.parametrize("source,name,args,target,want_name,want_args", [
    # Gemini CLI: a read is a range of lines; replace's "all"; write_todos' description
    ("claude_code", "Read", {"file_path": "a.py", "offset": 10, "limit": 5}, "gemini",
     "read_file", {"file_path": "a.py", "start_line": 10, "end_line": 14}),
    ("gemini", "read_file", {"file_path": "a.py", "start_line": 3, "end_line": 4}, "pi", "read",
     {"path": "a.py", "offset": 3, "limit": 2}),
    ("codex", "exec_command", {"cmd": "make", "workdir": "/srv"}, "gemini", "run_shell_command",
     {"command": "make", "dir_path": "/srv"}),
    ("gemini", "replace", {"file_path": "a", "old_string": "x", "new_string": "y",
                           "instruction": "rename", "allow_multiple": True}, "claude_code", "Edit",
     {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True}),
    ("codex", "update_plan", {"plan": [{"step": "Test", "status": "completed"}]}, "gemini",
     "write_todos", {"todos": [{"description": "Test", "status": "completed"}]}),
    # droid: seconds, absolute paths, its own argument names
    ("claude_code", "Bash", {"command": "ls", "timeout": 5000, "description": "List the files"},
     "droid", "Execute", {"command": "ls", "summary": "List the files", "timeout": 5}),
    ("droid", "Execute", {"command": "ls", "summary": "List them", "timeout": 5, "riskLevel": "low",
                          "riskLevelReason": "reads"}, "pi", "bash", {"command": "ls", "timeout": 5}),
    ("pi", "read", {"path": "a.py", "offset": 3}, "droid", "Read",
     {"file_path": "/w/a.py", "offset": 3}),
    ("pi", "write", {"path": "n.txt", "content": "a"}, "droid", "Create",
     {"file_path": "/w/n.txt", "content": "a"}),
    ("droid", "Edit", {"file_path": "/w/a", "old_str": "x", "new_str": "y", "change_all": True},
     "claude_code", "Edit",
     {"file_path": "/w/a", "old_string": "x", "new_string": "y", "replace_all": True}),
    ("claude_code", "TodoWrite", {"todos": [{"content": "Test", "status": "pending",
                                             "activeForm": "Testing"}]}, "droid", "TodoWrite",
     {"todos": [{"content": "Test", "status": "pending", "id": "1"}]}),
    # Kimi CLI: seconds, its edit nested (one or several), "done"
    ("claude_code", "Bash", {"command": "ls", "timeout": 5000}, "kimi", "Shell",
     {"command": "ls", "timeout": 5}),
    ("codex", "exec_command", {"cmd": "make", "workdir": "/srv"}, "kimi", "Shell",
     {"command": "cd /srv && make"}),
    ("kimi", "ReadFile", {"path": "a.py", "line_offset": 2, "n_lines": 3}, "claude_code", "Read",
     {"file_path": "a.py", "offset": 2, "limit": 3}),
    ("claude_code", "Edit", {"file_path": "a", "old_string": "x", "new_string": "y"}, "kimi",
     "StrReplaceFile", {"path": "a", "edit": {"old": "x", "new": "y"}}),
    ("pi", "edit", {"path": "a", "edits": [{"oldText": "x", "newText": "y"},
                                           {"oldText": "p", "newText": "q"}]}, "kimi",
     "StrReplaceFile", {"path": "a", "edit": [{"old": "x", "new": "y"}, {"old": "p", "new": "q"}]}),
    ("kimi", "StrReplaceFile", {"path": "a", "edit": [{"old": "x", "new": "y"},
                                                      {"old": "p", "new": "q"}]}, "pi", "edit",
     {"path": "a", "edits": [{"oldText": "x", "newText": "y"}, {"oldText": "p", "newText": "q"}]}),
    ("kimi", "StrReplaceFile", {"path": "a", "edit": {"old": "x", "new": "y", "replace_all": True}},
     "qwen", "edit", {"file_path": "/w/a", "old_string": "x", "new_string": "y",
                      "replace_all": True}),
    ("claude_code", "TodoWrite", {"todos": [{"content": "Test", "status": "completed",
                                             "activeForm": "Testing"}]}, "kimi", "SetTodoList",
     {"todos": [{"title": "Test", "status": "done"}]}),
    ("kimi", "SetTodoList", {"todos": [{"title": "Test", "status": "done"}]}, "codex",
     "update_plan", {"plan": [{"step": "Test", "status": "completed"}]}),
    ("kimi", "FetchURL", {"url": "u"}, "gemini", "FetchURL", {"url": "u"}),   # generic
])
def test_gemini_droid_and_kimi_tools_cross_both_ways(source, name, args, target, want_name,
                                                       want_args):
    mapped = tools.map_call(source, target, name, args, "/w")
    assert (mapped.name, mapped.args) == (want_name, want_args)


@pytest.mark.parametrize("source,name,args,target,want_name,want_args", [
    # opencode: its own argument names, milliseconds, its workdir, absolute paths, a
    # priority per to-do
    ("claude_code", "Bash", {"command": "ls", "timeout": 5000, "description": "list"}, "opencode",
     "bash", {"command": "ls", "timeout": 5000}),
    ("codex", "exec_command", {"cmd": "make", "workdir": "/srv"}, "opencode", "bash",
     {"command": "make", "workdir": "/srv"}),
    ("opencode", "bash", {"command": "make", "workdir": "/srv"}, "claude_code", "Bash",
     {"command": "cd /srv && make"}),
    ("pi", "read", {"path": "a.py", "offset": 3, "limit": 5}, "opencode", "read",
     {"filePath": "/w/a.py", "offset": 3, "limit": 5}),
    ("opencode", "write", {"filePath": "/w/n.txt", "content": "a"}, "pi", "write",
     {"path": "/w/n.txt", "content": "a"}),
    ("claude_code", "Edit", {"file_path": "a", "old_string": "x", "new_string": "y",
                             "replace_all": True}, "opencode", "edit",
     {"filePath": "/w/a", "oldString": "x", "newString": "y", "replaceAll": True}),
    ("codex", "update_plan", {"plan": [{"step": "Test", "status": "in_progress"}]}, "opencode",
     "todowrite", {"todos": [{"content": "Test", "status": "in_progress", "priority": "medium"}]}),
    ("opencode", "todowrite", {"todos": [{"content": "Test", "status": "completed",
                                          "priority": "high"}]}, "claude_code", "TodoWrite",
     {"todos": [{"content": "Test", "status": "completed", "activeForm": "Test"}]}),
    # Copilot CLI: bash with a description and no timeout or folder; view's range; create;
    # edit without "replace all"; no plan tool
    ("claude_code", "Bash", {"command": "ls", "timeout": 5000, "description": "list"}, "copilot",
     "bash", {"command": "ls", "description": "list"}),
    ("codex", "exec_command", {"cmd": "make", "workdir": "/srv"}, "copilot", "bash",
     {"command": "cd /srv && make"}),
    ("claude_code", "Read", {"file_path": "a.py", "offset": 10, "limit": 5}, "copilot", "view",
     {"path": "/w/a.py", "view_range": [10, 14]}),
    ("pi", "read", {"path": "a.py", "offset": 10}, "copilot", "view",
     {"path": "/w/a.py", "view_range": [10, -1]}),
    ("copilot", "view", {"path": "/w/a.py", "view_range": [3, 4]}, "pi", "read",
     {"path": "/w/a.py", "offset": 3, "limit": 2}),
    ("copilot", "view", {"path": "/w/a.py", "view_range": [3, -1]}, "claude_code", "Read",
     {"file_path": "/w/a.py", "offset": 3}),
    ("pi", "write", {"path": "n.txt", "content": "a"}, "copilot", "create",
     {"path": "/w/n.txt", "file_text": "a"}),
    ("copilot", "edit", {"path": "/w/a", "old_str": "x", "new_str": "y"}, "claude_code", "Edit",
     {"file_path": "/w/a", "old_string": "x", "new_string": "y"}),
    ("claude_code", "Edit", {"file_path": "a", "old_string": "x", "new_string": "y",
                             "replace_all": True}, "copilot", "Edit",       # generic
     {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True}),
    ("codex", "update_plan", {"plan": [{"step": "Test", "status": "pending"}]}, "copilot",
     "update_plan", {"plan": [{"step": "Test", "status": "pending"}]}),       # generic
])
def test_opencode_and_copilot_tools_cross_both_ways(source, name, args, target, want_name,
                                                    want_args):
    mapped = tools.map_call(source, target, name, args, "/w")
    assert (mapped.name, mapped.args) == (want_name, want_args)


def test_a_hand_off_to_opencode_names_its_database_where_it_goes_on(world):
    """opencode carries the session on in its database: the plan says so (the app imports
    it again when opencode exits), and the branch is written with the model opencode is
    set to use (another agent's model makes it refuse to go on)."""
    store, env, cwd, root = world
    config = Path(env["HOME"]) / ".config" / "opencode"
    config.mkdir(parents=True)
    (config / "opencode.json").write_text(json.dumps({"model": "fake/fake-model"}))
    session, _path = import_source(store, "claude_code", root, cwd)
    plan = prepare_handoff(store, session, target="opencode", env=env, now=NOW,
                           ids=fixed_ids(900))
    assert plan.continued_in == Path(env["HOME"]) / ".local" / "share" / "opencode" / "opencode.db"
    assert plan.before == [["opencode", "import", str(plan.file)]]
    written = json.loads(plan.file.read_text())
    users = [m["info"] for m in written["messages"] if m["info"]["role"] == "user"]
    assert users and all(u["model"] == {"providerID": "fake", "modelID": "fake-model"}
                         for u in users)
    assert written["info"]["handoff"]["agent"] == session.source


def test_a_branch_handed_to_kimi_in_a_folder_it_never_ran_in_is_refused_and_nothing_written(world):
    from core.agents.native import ResumeError

    store, env, cwd, root = world
    session, _ = import_source(store, "claude_code", root, cwd)
    count = len(store.sessions.list())
    with pytest.raises(ResumeError, match="Kimi CLI has not run in"):
        prepare_handoff(store, session, target="kimi", env=env, now=NOW, ids=fixed_ids(900))
    assert not (root / "home" / ".kimi" / "sessions").exists()
    assert len(store.sessions.list()) == count


# ---------------------------------------------------------------- what crosses
def test_claude_code_to_codex_leaves_out_signed_thinking_and_keeps_calls_paired(world):
    store, env, cwd, root = world
    session, _ = import_source(store, "claude_code", root, cwd)
    plan = prepare_handoff(store, session, target="codex", env=env, now=NOW, ids=fixed_ids(700))
    rollout = lines(plan.file)
    items = [l["payload"] for l in rollout if l["type"] == "response_item"]
    calls = [(i["name"], i["call_id"]) for i in items if i["type"] == "function_call"]
    outputs = [i["call_id"] for i in items if i["type"] == "function_call_output"]
    assert calls == [("Read", "toolu_01"), ("Read", "toolu_02"), ("exec_command", "toolu_04")]
    assert outputs == ["toolu_01", "toolu_02"]       # the last call had no result on the branch
    # another agent's reasoning: shown in Codex (an event), never sent as its reasoning item
    assert not [i for i in items if i["type"] == "reasoning"]
    assert not any("signature" in json.dumps(l) or "EqQBCkYIBx" in json.dumps(l) for l in rollout)
    events = [l["payload"] for l in rollout if l["type"] == "event_msg"]
    assert {"type": "agent_reasoning", "text": "Read the test first."} in events
    # Codex's own provenance field, and arbor's
    meta = rollout[0]["payload"]
    assert meta["forked_from_id"] == session.uid and meta["handoff"]["agent"] == "claude_code"
    assert plan.crossing.counts["calls_mapped"] == 1 and plan.crossing.counts["calls"] == 3


def test_codex_context_and_bookkeeping_do_not_cross(world):
    store, env, cwd, root = world
    session, path = import_source(store, "codex", root, cwd)
    # Codex's environment context, sent as a user message, and a developer message
    with path.open("a") as out:
        for role, body in (("user", "<environment_context><cwd>/x</cwd></environment_context>"),
                           ("developer", "<permissions>never</permissions>")):
            out.write(json.dumps({"timestamp": "2026-03-01T09:10:00.000Z", "type": "response_item",
                                  "payload": {"type": "message", "role": role, "content": [
                                      {"type": "input_text", "text": body}]}}) + "\n")
    import_paths(store, [path])
    session = store.sessions.get(session.id)
    plan = prepare_handoff(store, session, target="pi", env=env, now=NOW, ids=fixed_ids(710))
    written = lines(plan.file)
    said = json.dumps(written)
    assert "environment_context" not in said and "<permissions>" not in said
    assert not [l for l in written if l["type"] in ("model_change", "codex:turn_context")]
    assert plan.crossing.counts["context_left_out"] == 2


def test_a_claude_message_with_two_results_and_text_is_split_for_pi(world):
    store, env, cwd, root = world
    log = ClaudeLog("c0ffee00-0000-4000-8000-0000000000e1", cwd)
    log.user("go")
    log.assistant(tool_use("toolu_a", "Bash", command="ls"), tool_use("toolu_b", "Bash", command="pwd"),
                  msg_id="msg_01XXXXXXXXXXXXXXXXXXXXXXXX", stop="tool_use")
    log.user([{"type": "tool_result", "tool_use_id": "toolu_a", "content": "a.txt"},
              {"type": "tool_result", "tool_use_id": "toolu_b", "content": "/w"},
              {"type": "text", "text": "and also this"}])
    import_paths(store, [log.write(root / "src")])
    session = store.sessions.by_uid(log.session_id)
    plan = prepare_handoff(store, session, target="pi", env=env, now=NOW, ids=fixed_ids(720))
    messages = [l["message"] for l in lines(plan.file) if l["type"] == "message"]
    assert [(m["role"], m.get("toolCallId")) for m in messages] == [
        ("user", None), ("assistant", None), ("toolResult", "toolu_a"), ("toolResult", "toolu_b"),
        ("user", None)]
    assert messages[-1]["content"] == "and also this"
    ids = [l["id"] for l in lines(plan.file)[1:] if l["type"] == "message"]
    assert len(set(ids)) == len(ids)


# ------------------------------------------------------------ provenance, undo
def _store_facts(store, session_id: int):
    return (store.sessions.totals(session_id),
            [(b.id, b.head_seq, b.is_current, b.name) for b in store.branches.of_session(session_id)],
            store.annotations.entry_labels(session_id), store.sessions.metadata(session_id),
            [e.id for e in store.paths.entries(store.branches.current(session_id).head_seq)])


def test_only_the_new_session_and_its_links_change_and_u_undoes_it(world):
    store, env, cwd, root = world
    session, _ = import_source(store, "claude_code", root, cwd)
    before = _store_facts(store, session.id)
    sessions_before = {s.id for s in store.sessions.list()}
    branch = store.branches.current(session.id)
    plan = prepare_handoff(store, session, target="codex", env=env, now=NOW, ids=fixed_ids(730))
    assert _store_facts(store, session.id) == before           # the original is untouched
    new = store.sessions.get(plan.imported_id)
    assert {s.id for s in store.sessions.list()} == sessions_before | {new.id}
    assert new.source == "codex" and new.kind == "fork" and new.parent_session == session.uid
    children = store.sessions.children(session.id)
    assert [(c.id, c.spawn_seq) for c in children] == [(new.id, branch.head_seq)]
    origin = new.metadata["handoff"]
    assert (origin["agent"], origin["session"], origin["branchId"], origin["target"]) == \
        ("claude_code", session.uid, branch.id, "codex")
    shown = continued_in(store, session.id)
    assert [(c.branch_id, c.agent) for c in shown[branch.id]] == [(branch.id, "Codex")]
    # `u`: the hand-off's arbor side is undone (the copy archived), the original as it was
    result = undo_last(store)
    assert result.done and result.operation.kind == "handoff"
    assert not store.sessions.get(new.id).is_active
    assert continued_in(store, session.id) == {}
    assert _store_facts(store, session.id) == before
    assert plan.file.is_file()                 # the agent's file is the agent's


def test_the_same_unchanged_branch_handed_off_again_reuses_the_session(world):
    store, env, cwd, root = world
    session, _ = import_source(store, "pi", root, cwd)
    first = prepare_handoff(store, session, target="claude_code", env=env, now=NOW, ids=fixed_ids(740))
    again = prepare_handoff(store, session, target="claude_code", env=env, now=NOW, ids=fixed_ids(760))
    assert again.reused and again.file == first.file and again.native_id == first.native_id
    assert len(store.sessions.children(session.id)) == 1
    # undone, then handed off again: shown again, and `u` archives it again
    undo_last(store)
    third = prepare_handoff(store, session, target="claude_code", env=env, now=NOW, ids=fixed_ids(780))
    assert third.reused and store.sessions.get(first.imported_id).is_active
    assert undo_last(store).done and not store.sessions.get(first.imported_id).is_active
    # another agent is another session
    other = prepare_handoff(store, session, target="codex", env=env, now=NOW, ids=fixed_ids(800))
    assert not other.reused and other.native_id != first.native_id


def test_a_dry_run_writes_and_changes_nothing(world):
    store, env, cwd, root = world
    session, _ = import_source(store, "codex", root, cwd)
    before = _store_facts(store, session.id)
    plan = prepare_handoff(store, session, target="pi", env=env, now=NOW, ids=fixed_ids(820),
                           dry_run=True)
    assert plan.summary.startswith("Would write") and not plan.file.exists()
    assert _store_facts(store, session.id) == before and store.sessions.children(session.id) == []


# ---------------------------------------------------------------- size
def test_a_branch_larger_than_the_targets_context_is_offered_compacted(world):
    store, env, cwd, root = world
    log = ClaudeLog("c0ffee00-0000-4000-8000-0000000000f1", cwd)
    for n in range(40):
        log.user(f"question {n} " + "words " * 200)
        log.assistant(text(f"answer {n} " + "more " * 200), msg_id=f"msg_01F{n:023d}")
    import_paths(store, [log.write(root / "src")])
    session = store.sessions.by_uid(log.session_id)
    head_before = store.branches.current(session.id).head_seq
    with pytest.raises(BranchTooLarge) as refused:
        prepare_handoff(store, session, target="pi", env=env, now=NOW, ids=fixed_ids(840),
                        context_limit=8_000)
    assert refused.value.tokens > 8_000 and refused.value.compaction.messages_summarised > 0
    assert store.sessions.children(session.id) == []          # nothing written or imported
    plan = prepare_handoff(store, session, target="pi", env=env, now=NOW, ids=fixed_ids(860),
                           context_limit=8_000, compact=True)
    assert plan.compacted and plan.tokens <= 8_000
    compaction = [l for l in lines(plan.file) if l["type"] == "compaction"]
    assert len(compaction) == 1 and compaction[0]["summary"]
    assert compaction[0]["firstKeptEntryId"] in {l.get("id") for l in lines(plan.file)}
    # the branch in arbor is as it was: no compaction there
    assert store.branches.current(session.id).head_seq == head_before
    assert not [e for e in store.paths.entries(head_before) if e.type == "compaction"]


# ---------------------------------------------------------------- redaction
SECRET = "sk-ant-api03-" + "Q" * 40
PASSWORD = "hunter2hunter2"


def test_redact_masks_secrets_in_text_arguments_and_outputs_and_never_the_store(world):
    store, env, cwd, root = world
    log = ClaudeLog("c0ffee00-0000-4000-8000-0000000000a9", cwd)
    log.user(f"use the key {SECRET} please")
    log.assistant(tool_use("toolu_s", "Bash", command=f"export ANTHROPIC_API_KEY={SECRET}"),
                  msg_id="msg_01S00000000000000000000000", stop="tool_use")
    log.result("toolu_s", f'password = "{PASSWORD}"')
    import_paths(store, [log.write(root / "src")])
    session = store.sessions.by_uid(log.session_id)
    plan = prepare_handoff(store, session, target="codex", env=env, now=NOW, ids=fixed_ids(880),
                           redact=True)
    written = plan.file.read_text()
    assert SECRET not in written and PASSWORD not in written
    assert "[REDACTED:Anthropic Key]" in written and "[REDACTED:Password]" in written
    # the text, the command, the output, and the title Codex lists it by (its first prompt)
    assert plan.redacted.count == 4 and "4 secrets masked" in plan.notes[-1]
    stored = json.dumps([e.data for e in store.paths.entries(store.branches.current(session.id).head_seq)])
    assert SECRET in stored and PASSWORD in stored
    # and the imported copy holds what was written, masked
    copy = store.sessions.get(plan.imported_id)
    copied = json.dumps([e.data for e in store.paths.entries(store.branches.current(copy.id).head_seq)])
    assert SECRET not in copied


# ------------------------------------------------------ a log the agent deleted
def test_a_session_whose_log_is_gone_is_handed_off_and_resumed_from_the_store(world):
    from core.agents import prepare_resume

    store, env, cwd, root = world
    session, path = import_source(store, "claude_code", root, cwd)
    path.unlink()
    plan = prepare_handoff(store, session, target="pi", env=env, now=NOW, ids=fixed_ids(900))
    assert plan.file.is_file()
    same = prepare_resume(store, session, env=env, now=NOW, ids=fixed_ids(920))
    assert same.file.is_file() and same.file != path


# ---------------------------------------------------------------- the command
def _arbor(*args: str, env: dict, db: Path) -> subprocess.CompletedProcess:
    child = {**os.environ, **env, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "tui", *args, "--db", str(db)], env=child,
                          capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parent.parent)


def test_arbor_resume_in_another_agent_prints_the_command(world):
    store, env, cwd, root = world
    session, _ = import_source(store, "codex", root, cwd)
    store.close()
    done = _arbor("resume", session.uid[:8], "--in", "claude", "--print", env=env,
                  db=root / "arbor.db")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"cd {cwd} && claude --resume ")
    assert "Wrote the branch as a new Claude Code session" in done.stderr
    assert "from Codex: 6 messages" in done.stderr
    refused = _arbor("resume", session.uid[:8], "--in", "aider", "--print", env=env,
                     db=root / "arbor.db")
    assert refused.returncode == 1 and \
        "--in takes claude, codex, pi, gemini, qwen, copilot, opencode, droid, kimi" in refused.stderr


def test_arbor_resume_in_says_how_to_hand_off_a_branch_too_large(world):
    store, env, cwd, root = world
    session, _ = import_source(store, "claude_code", root, cwd)
    store.close()
    small = {**env, "ARBOR_HANDOFF_CONTEXT": "60"}
    done = _arbor("resume", session.uid[:8], "--in", "pi", "--print", env=small, db=root / "arbor.db")
    assert done.returncode == 1
    assert "more than pi can load" in done.stderr and "--compact" in done.stderr
    assert "arbor would summarise" in done.stderr
    done = _arbor("resume", session.uid[:8], "--in", "pi", "--print", "--compact", env=small,
                  db=root / "arbor.db")
    assert done.returncode == 0, done.stderr
    assert "compacted for pi's context" in done.stderr


def test_export_and_push_redact_what_they_write_and_never_the_store(world):
    store, env, cwd, root = world
    log = ClaudeLog("c0ffee00-0000-4000-8000-0000000000b9", cwd)
    log.user(f"use the key {SECRET} please")
    log.assistant(tool_use("toolu_s", "Bash", command=f"curl -H 'Authorization: Bearer {SECRET}'"),
                  msg_id="msg_01T00000000000000000000000", stop="tool_use")
    log.result("toolu_s", f'password = "{PASSWORD}"')
    import_paths(store, [log.write(root / "src")])
    store.close()
    db = root / "arbor.db"
    for fmt in ("pi", "markdown", "json", "html"):
        done = _arbor("export", log.session_id, "--format", fmt, "--redact", env=env, db=db)
        assert done.returncode == 0, done.stderr
        assert SECRET not in done.stdout and PASSWORD not in done.stdout, fmt
        assert "secrets masked" in done.stderr
    plain = _arbor("export", log.session_id, "--format", "json", env=env, db=db)
    assert SECRET in plain.stdout                       # the store still holds them
    team = root / "team.db"
    done = _arbor("push", log.session_id, "--to", str(team), "--redact", env=env, db=db)
    assert done.returncode == 0, done.stderr
    assert "secrets masked" in done.stderr
    pushed = open_store(team)
    try:
        there = pushed.sessions.by_uid(log.session_id)
        text_there = json.dumps([e.data for e in pushed.entries.of_session(there.id)])
        assert SECRET not in text_there and PASSWORD not in text_there
        assert "[REDACTED:" in text_there
    finally:
        pushed.close()
    again = open_store(db)
    try:
        mine = again.sessions.by_uid(log.session_id)
        assert SECRET in json.dumps([e.data for e in again.entries.of_session(mine.id)])
    finally:
        again.close()


def test_a_branch_handed_to_qwen_code_uses_its_tools_and_its_compression_keeps_the_kept_part(world):
    """pi → Qwen Code without the agent (its own reader: test_handoff_readers.py): the
    compression Qwen Code sends from holds the summary AND the part pi's compaction kept
    (Qwen Code sends nothing of the records before a compression)."""
    store, env, cwd, root = world
    session, _ = import_source(store, "pi", root, cwd)
    plan = prepare_handoff(store, session, target="qwen", env=env, now=NOW, ids=fixed_ids(900))
    records = lines(plan.file)
    assert plan.argv == ["qwen", "--resume", plan.native_id]
    [compression] = [r for r in records if r.get("subtype") == "chat_compression"]
    history = compression["systemPayload"]["compressedHistory"]
    assert history[0]["parts"][0]["text"] == "Renaming config; tests listed."
    kept = [part.get("text") or part.get("functionCall", {}).get("name")
            for content in history[2:] for part in content["parts"] if not part.get("thought")]
    assert kept[:2] == ["Rename the config module", "run_shell_command"]
    calls = [part["functionCall"]["name"] for r in records if r["type"] == "assistant"
             for part in r["message"]["parts"] if "functionCall" in part]
    assert calls == ["run_shell_command"]
    assert "Qwen Code's own tools" in plan.notes[0]
