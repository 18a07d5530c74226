"""Comparing two branches (issue 12, "Compare two branches"): the common ancestor, what
each side holds, costs and changed, and that a long side is not read to open it."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from core import open_store
from core.actions import operations as ops
from core.history.branch_compare import common_depth, compare, said, scan_side
from core.history.touched_files import Call, FileChange, calls_in, changes_of, shell_changes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_plans import ReadCounter  # noqa: E402


@pytest.fixture
def store(store_location):
    """A new store, on SQLite and on PostgreSQL (the store's statements for comparing have
    a twin on each)."""
    s = open_store(store_location)
    yield s
    s.close()


def user(text):
    return {"role": "user", "content": text}


def reply(text, *calls, tokens=(1000, 100)):
    blocks = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "toolCall", "id": f"c{i}", "name": name, "arguments": args}
               for i, (name, args) in enumerate(calls)]
    return {"role": "assistant", "content": blocks, "model": "claude-sonnet-4-5",
            "provider": "anthropic", "usage": {"input": tokens[0], "output": tokens[1]}}


def result(text):
    return {"role": "toolResult", "toolCallId": "c0", "toolName": "x",
            "content": [{"type": "text", "text": text}]}


def say(store, branch_id, *messages):
    return [store.entries.append_to_branch(branch_id, "message", {"message": m}) for m in messages]


# ------------------------------------------------------------ common ancestor
def naive_common_depth(store, head_a, head_b) -> int:
    a = [e.seq for e in store.paths.entries(head_a)]
    b = [e.seq for e in store.paths.entries(head_b)]
    depth = -1
    for x, y in zip(a, b):
        if x != y:
            break
        depth += 1
    return depth


def test_common_depth_is_where_the_paths_part_in_any_tree(store):
    """Random trees (branches of branches, branches at heads, several roots): for every pair
    of branches, the common depth is the one found by walking both paths entry by entry."""
    rng = random.Random(12)
    for round_ in range(4):
        session = store.sessions.create(f"s{round_}")
        first = store.branches.create(session.id)
        branches = [first]
        for step in range(60):
            branch = rng.choice(branches)
            branch = store.branches.get(branch.id)
            choice = rng.random()
            if choice < 0.2 and branch.head_seq is not None:
                path = store.paths.entries(branch.head_seq)
                at = rng.choice(path).seq
                branches.append(ops.branch(store, branch.id, at))
            elif choice < 0.25:
                # a second root in the same session (an imported log's dangling parent)
                root = store.branches.create(session.id)
                say(store, root.id, user(f"root {step}"))
                branches.append(root)
            else:
                say(store, branch.id, user(f"m{step}"))
        heads = [store.branches.get(b.id).head_seq for b in branches]
        for a in heads:
            for b in heads:
                assert common_depth(store, a, b) == naive_common_depth(store, a, b)


def test_compare_reports_the_fork_and_each_side_alone(store):
    session = store.sessions.create("attempts")
    main = store.branches.create(session.id)
    say(store, main.id, user("fix the test"), reply("looking"))
    fork = say(store, main.id, reply("two ways to fix it"))[-1]
    say(store, main.id, user("way one"),
        reply("editing", ("Edit", {"file_path": "t.py", "old_string": "a\nb", "new_string": "a\nc\nd"}),
              tokens=(2000, 200)),
        result("ok"), reply("done: way one"))
    other = ops.branch(store, main.id, fork.seq, name="way two")
    say(store, other.id, user("way two"),
        reply("", ("apply_patch", {"input": "*** Begin Patch\n*** Add File: u.py\n+x\n+y\n*** End Patch"}),
              tokens=(500, 50)),
        result("ok"), reply("done: way two", tokens=(500, 50)))
    main, other = store.branches.get(main.id), store.branches.get(other.id)

    found = compare(store, main, other)
    assert found.fork_seq == fork.seq and found.fork_depth == fork.depth
    assert found.shared_messages == 3
    a, b = found.sides
    assert (a.counts.messages, b.counts.messages) == (4, 4)
    assert a.first_ask == "way one" and a.last_reply == "done: way one"
    assert b.first_ask == "way two" and b.last_reply == "done: way two"
    # usage: only the responses after the fork, each side its own
    assert (a.usage.input_tokens, a.usage.output_tokens) == (2000 + 1000, 200 + 100)
    assert (b.usage.input_tokens, b.usage.output_tokens) == (1000, 100)
    assert a.usage.responses == 2 and b.usage.responses == 2
    for one in found.sides:
        for _ in scan_side(store, one):
            pass
    assert a.work.done and b.work.done
    assert dict(a.work.tool_calls) == {"Edit": 1} and dict(b.work.tool_calls) == {"apply_patch": 1}
    assert list(a.work.files) == ["t.py"] and list(b.work.files) == ["u.py"]
    assert (a.work.files["t.py"].added, a.work.files["t.py"].removed) == (2, 1)
    assert b.work.files["u.py"].actions == {"created": 1} and b.work.files["u.py"].added == 2


def test_a_branch_against_its_own_ancestor_has_an_empty_side(store):
    session = store.sessions.create("s")
    main = store.branches.create(session.id)
    say(store, main.id, user("a"), reply("b"))
    early = ops.branch(store, main.id, name="early")    # at main's head, then main goes on
    say(store, main.id, user("c"), reply("d"))
    main = store.branches.get(main.id)
    found = compare(store, store.branches.get(early.id), main)
    assert found.fork_seq == early.head_seq
    assert found.a.counts.messages == 0 and found.a.usage.responses == 0
    assert found.a.last_reply == "" and found.b.last_reply == "d"
    assert found.b.counts.messages == 2


def test_branches_of_two_sessions_are_refused(store):
    one = store.branches.create(store.sessions.create("one").id)
    two = store.branches.create(store.sessions.create("two").id)
    with pytest.raises(ValueError):
        compare(store, one, two)


def test_scan_in_small_windows_finds_what_one_window_finds_and_stops_when_told(store):
    session = store.sessions.create("s")
    main = store.branches.create(session.id)
    rng = random.Random(5)
    for i in range(300):
        name, args = rng.choice([("Write", {"file_path": f"f{i % 7}.py", "content": "x\ny\n"}),
                                 ("bash", {"command": f"rm -f old{i % 3}.txt"}),
                                 ("Read", {"file_path": "r.py"})])
        say(store, main.id, reply(f"step {i}", (name, args)), result("ok"))
    branch = store.branches.get(main.id)
    whole = compare(store, branch, branch).a       # a branch against itself: an empty side...
    assert whole.counts.messages == 0
    one = compare(store, branch, store.branches.get(
        store.branches.create(session.id).id)).a   # ...against an empty root: all of it
    big = list(scan_side(store, one, window=10_000))[-1]
    again = compare(store, branch, store.branches.get(
        store.branches.create(session.id).id)).a
    progress = [w.progress for w in scan_side(store, again, window=7)]
    assert again.work.tool_calls == big.tool_calls and sum(big.tool_calls.values()) == 300
    assert {p: t.changes for p, t in again.work.files.items()} == \
        {p: t.changes for p, t in big.files.items()}
    assert progress == sorted(progress) and progress[-1] == 1.0 and len(progress) > 10
    stopped = compare(store, branch, store.branches.get(
        store.branches.create(session.id).id)).a
    reads = list(scan_side(store, stopped, window=7, stop=lambda: stopped.work.read >= 20))
    assert not stopped.work.done and 20 <= stopped.work.read < 40 and len(reads) < 5


def test_a_snapshot_is_not_changed_by_the_reading_that_goes_on(store):
    """The screen draws a copy while the worker goes on reading the sides."""
    session = store.sessions.create("s")
    root = store.branches.create(session.id)
    main = store.branches.create(session.id)
    for i in range(40):
        say(store, main.id, reply(f"{i}", ("Edit", {"file_path": f"f{i % 3}.py", "old_string": "a",
                                                    "new_string": "b"})))
    found = compare(store, store.branches.get(main.id), store.branches.get(root.id))
    reading = scan_side(store, found.a, window=5)
    next(reading)
    copy = found.snapshot()
    seen = (dict(copy.a.work.tool_calls), {p: t.changes for p, t in copy.a.work.files.items()},
            copy.a.work.read)
    for _ in reading:
        pass
    assert found.a.work.done and found.a.work.read == 40 and not copy.a.work.done
    assert (dict(copy.a.work.tool_calls), {p: t.changes for p, t in copy.a.work.files.items()},
            copy.a.work.read) == seen
    assert seen[2] < 40 and found.a.work.files["f0.py"].changes == 14


def test_a_sub_agent_started_on_a_side_counts_in_its_usage(store):
    session = store.sessions.create("s")
    main = store.branches.create(session.id)
    fork = say(store, main.id, user("go"))[-1]
    spawn = say(store, main.id, reply("asking a helper", ("Agent", {"prompt": "look"})))[-1]
    other = ops.branch(store, main.id, fork.seq)
    say(store, other.id, reply("on my own"))
    child = store.sessions.create("helper", kind="subagent")
    child_branch = store.branches.create(child.id)
    say(store, child_branch.id, user("look"), reply("found it", tokens=(7000, 700)))
    store.sessions.link_child(child.id, session.id, spawn.seq)
    found = compare(store, store.branches.get(main.id), store.branches.get(other.id))
    assert found.a.subagents == 1 and found.b.subagents == 0
    assert found.a.usage.input_tokens == 1000 + 7000
    assert found.a.usage.subagent_tokens == 7700
    assert found.b.usage.input_tokens == 1000 and found.b.usage.subagent_tokens == 0


def test_opening_a_comparison_of_long_sides_reads_a_few_rows(tmp_path, monkeypatch):
    """Counts and usage come from the store's path helpers; only a few messages from each
    end of each side are read (the first ask, the last reply)."""
    store = open_store(tmp_path / "long.db")
    session = store.sessions.create("long")
    main = store.branches.create(session.id)
    fork = say(store, main.id, user("start"))[-1]
    store.entries.append_messages(main.id, [reply(f"a{i}", ("bash", {"command": f"touch a{i}"}))
                                    if i % 2 else user(f"u{i}") for i in range(6000)])
    other = ops.branch(store, main.id, fork.seq)
    store.entries.append_messages(other.id, [reply(f"b{i}") if i % 2 else user(f"v{i}") for i in range(4000)])
    a, b = store.branches.get(main.id), store.branches.get(other.id)
    counter = ReadCounter(store, monkeypatch)
    found = compare(store, a, b)
    assert (found.a.counts.messages, found.b.counts.messages) == (6000, 4000)
    assert found.a.usage.responses == 3000 and found.b.usage.responses == 2000
    assert found.a.last_reply == "a5999" and found.b.first_ask == "v0"
    assert counter.read <= 4 * 40
    for _ in scan_side(store, found.a):
        pass
    assert found.a.work.call_count == 3000 and len(found.a.work.files) == 3000
    store.close()


# -------------------------------------------------------------- files touched
def changes(name, args):
    return [(c.path, c.action, c.added, c.removed) for c in changes_of(Call(name, args, args))]


def test_edits_writes_and_patches_say_their_files_and_lines():
    assert changes("Edit", {"file_path": "a.py", "old_string": "x\ny\nz", "new_string": "x\nY\nz\nw"}) == \
        [("a.py", "edited", 2, 1)]
    assert changes("edit", {"path": "b.ts", "oldText": "one", "newText": "two"}) == [("b.ts", "edited", 1, 1)]
    assert changes("MultiEdit", {"file_path": "c.py", "edits": [
        {"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "c\nd"}]}) == \
        [("c.py", "edited", 2, 1)]
    assert changes("Write", {"file_path": "d.md", "content": "1\n2\n3\n"}) == [("d.md", "written", 3, None)]
    assert changes("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": "x"}) == \
        [("n.ipynb", "edited", 1, 0)]
    assert changes("str_replace_based_edit_tool", {"command": "view", "path": "v.py"}) == []
    assert changes("str_replace_based_edit_tool", {"command": "create", "path": "w.py",
                                                   "file_text": "a\nb"}) == [("w.py", "written", 2, None)]
    patch = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def f\n-    return 1\n+    return 2\n+    # x\n"
             "*** Delete File: old.py\n*** Update File: m.py\n*** Move to: n.py\n@@\n-a\n+b\n"
             "*** Add File: new.py\n+hello\n*** End Patch")
    assert changes("apply_patch", {"input": patch}) == [
        ("src/app.py", "edited", 2, 1), ("old.py", "deleted", None, None), ("m.py", "moved", None, None),
        ("n.py", "edited", 1, 1), ("new.py", "created", 1, 0)]
    # Codex runs apply_patch through its shell too: a list, or a here-document
    assert changes("shell", {"command": ["apply_patch", patch]})[0] == ("src/app.py", "edited", 2, 1)
    heredoc = f"apply_patch <<'EOF'\n{patch}\nEOF\n"
    assert changes("shell", {"command": ["bash", "-lc", heredoc]})[-1] == ("new.py", "created", 1, 0)
    assert changes("exec_command", {"cmd": heredoc})[1] == ("old.py", "deleted", None, None)


def test_shell_commands_say_the_files_they_write_move_or_delete():
    found = shell_changes(
        "cd src && echo hi > out.txt 2>&1 && rm -rf build dist; mv a.py b.py | tee -a log.txt\n"
        "sed -i 's/x/y/' conf.ini; sed -n '1p' read.txt > /dev/null; cp tpl.md docs/new.md\n"
        "cat > notes.md <<'EOF'\nrm -rf /not/a/command\nEOF\n"
        "perl -pi -e 's/a/b/' p.pl; git mv x.c y.c; touch stamp; ls -la; grep rm file.txt\n"
        "FOO=1 sudo truncate -s 0 big.log; echo 'unclosed")
    assert [(c.path, c.action) for c in found] == [
        ("out.txt", "shell"), ("build", "deleted"), ("dist", "deleted"), ("a.py", "moved"),
        ("b.py", "shell"), ("log.txt", "shell"), ("conf.ini", "shell"), ("docs/new.md", "shell"),
        ("notes.md", "shell"), ("p.pl", "shell"), ("x.c", "moved"), ("y.c", "shell"),
        ("stamp", "shell"), ("big.log", "shell")]


@pytest.mark.parametrize("args", [None, "not json", "[1, 2]", 42, {"file_path": 7}, {"edits": "x"},
                                  {"command": {"nested": True}}, {"input": None}, {"command": ["ls", 3]}])
@pytest.mark.parametrize("name", ["Edit", "MultiEdit", "Write", "apply_patch", "bash", "shell", "Read", ""])
def test_odd_tool_inputs_change_nothing_and_never_raise(name, args):
    assert changes_of(Call(name, args if isinstance(args, dict) else {}, args)) == []


def test_calls_are_found_in_every_agents_shape():
    message = {"role": "assistant", "content": [
        {"type": "tool_use", "name": "Write", "input": {"file_path": "a", "content": ""}},
        {"type": "toolCall", "name": "edit", "arguments": '{"path": "b"}'},
        {"type": "function_call", "name": "shell", "arguments": {"command": "ls"}},
        {"type": "text", "text": "no call"}, "a string block", None],
        "tool_calls": [{"name": "Write", "args": {"file_path": "c"}},
                       {"function": {"name": "bash", "arguments": '{"command": "rm d"}'}}, 3]}
    calls = list(calls_in(message))
    assert [c.name for c in calls] == ["Write", "edit", "shell", "Write", "bash"]
    assert calls[1].args == {"path": "b"}
    assert list(calls_in(None)) == [] and list(calls_in({"content": "text"})) == []
    assert changes_of(calls[-1]) == [FileChange("d", "deleted")]


def test_said_is_the_words_of_a_message_without_calls_or_thinking():
    assert said({"content": "  plain  "}) == "plain"
    assert said({"content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "yes"},
                             {"type": "toolCall", "name": "x"}]}) == "yes"
    assert said({"content": [{"type": "text", "text": 5}]}) == "" and said({}) == ""

