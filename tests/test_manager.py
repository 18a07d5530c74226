"""SessionManager: the Go Manager's API over one sessions.db per session dir."""

from datetime import datetime, timezone

import pytest

from core import (AmbiguousId, ArborError, MemoryStore, NotFound, OutsideSessionDir,
                  SessionCapabilities, SessionCapabilityEvent, SessionManager, SessionRunEvent)
from core.seed.manager import close_root_dbs


@pytest.fixture
def session_dir(tmp_path):
    yield tmp_path / "sessions"
    close_root_dbs()


def conversation(manager, n=4):
    ids = []
    for i in range(n):
        ids.append(manager.append_message({"role": "user" if i % 2 == 0 else "assistant",
                                           "content": f"m{i}"}))
    return ids


def test_new_init_append_and_read(session_dir):
    manager = SessionManager.new("/proj", session_dir)
    with pytest.raises(ArborError):
        manager.append_message({"role": "user", "content": "too early"})
    manager.init()
    assert (session_dir / "sessions.db").exists()
    assert len(manager.session_id) == 8 and int(manager.session_id, 16) >= 0
    assert manager.get_leaf_id() is None and manager.get_messages() == []
    ids = conversation(manager)
    assert manager.get_leaf_id() == ids[-1]
    assert [m["content"] for m in manager.get_messages()] == ["m0", "m1", "m2", "m3"]
    header = manager.get_header()
    assert header.type == "session" and header.version == SessionManager.CURRENT_VERSION == 3
    assert header.id == manager.session_id and header.cwd == "/proj"
    model = manager.append_model_change("anthropic", "claude")
    think = manager.append_thinking_level_change("high")
    info = manager.append_session_info("My session")
    assert len({model, think, info}) == 3
    assert [m["content"] for m in manager.get_messages()] == ["m0", "m1", "m2", "m3"]
    again = SessionManager.open(manager.get_file())
    assert again.get_leaf_id() == info
    assert SessionManager.list_all(session_dir)[0].name == "My session"


def test_message_kept_as_given(session_dir):
    manager = SessionManager.new("/p", session_dir)
    manager.init()
    message = {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "answer"},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"}],
        "model": "m", "usage": {"input": 3, "output": 4}, "custom_field": [1, 2]}
    manager.append_message(message)
    manager.append_message({"role": "toolResult", "toolCallId": "c1", "content": [{"type": "text", "text": "ok"}]})
    assert manager.get_messages()[0] == message
    assert manager.current_branch().tool_invocation_count == 1


def test_compaction_replay_and_latest(session_dir):
    manager = SessionManager.new("/p", session_dir)
    manager.init()
    ids = conversation(manager, 6)
    assert manager.get_latest_compaction() is None
    compaction = manager.append_compaction("earlier work", ids[4], 1234)
    manager.append_message({"role": "user", "content": "after"})
    messages = manager.get_messages()
    assert messages[0]["content"] == "earlier work" and messages[0]["kind"] == "compaction_summary"
    assert [m["content"] for m in messages[1:]] == ["m4", "m5", "after"]
    state = manager.get_replay_state()
    assert state.entry_ids[0] == compaction and state.entry_ids[1:3] == ids[4:6]
    latest = manager.get_latest_compaction()
    assert latest.id == compaction and latest.first_kept_entry == ids[4] and latest.tokens_before == 1234
    # a compaction whose kept entry is not on the branch is refused (see test_store_refusals)
    other = SessionManager.new("/p", session_dir)
    other.init()
    conversation(other, 2)
    with pytest.raises(ArborError, match="not on this branch"):
        other.append_compaction("bad", "not-an-entry", 1)
    assert [m["content"] for m in other.get_messages()] == ["m0", "m1"]


def test_branch_label_summary_custom(session_dir):
    manager = SessionManager.new("/p", session_dir)
    manager.init()
    ids = conversation(manager, 4)
    old_branch = manager.current_branch()
    new_branch = manager.branch(ids[1])
    assert new_branch.parent_session_id == old_branch.id and new_branch.is_current
    assert manager.get_leaf_id() == ids[1]
    summary = manager.append_branch_summary(ids[3], "tried m2, m3")
    manager.append_message({"role": "user", "content": "new way"})
    contents = [m["content"] for m in manager.get_messages()]
    assert contents == ["m0", "m1", "tried m2, m3", "new way"]
    # the old head is still a branch with its whole path
    old = manager.store.branches.get(old_branch.id)
    assert old.head_id == ids[3] and not old.is_current
    label = manager.append_label(ids[0], "start")
    ext = manager.external_session_id
    assert manager.store.annotations.entry_labels(ext)[manager.store.entries.find(ext, ids[0]).seq] == "start"
    manager.append_label(ids[0], None)
    assert manager.store.annotations.entry_labels(ext) == {}
    with pytest.raises(NotFound):
        manager.append_label("nope", "x")
    custom = manager.append_custom("ext", {"k": 1})
    assert manager.store.entries.find(ext, custom).data == {"customType": "ext", "data": {"k": 1}}
    assert summary and label


def test_open_by_id_prefix_and_ambiguity(session_dir):
    a = SessionManager.new("/p", session_dir)
    a.init_with_id("abc12345")
    b = SessionManager.new("/p", session_dir)
    b.init_with_id("abc99999")
    c = SessionManager.new("/other", session_dir)
    c.init_with_id("abd00000")
    assert SessionManager.open_by_id("/p", session_dir, "abc1").session_id == "abc12345"
    with pytest.raises(AmbiguousId):
        SessionManager.open_by_id("/p", session_dir, "abc")
    with pytest.raises(NotFound):
        SessionManager.open_by_id("/p", session_dir, "abd")  # another cwd
    assert SessionManager.open_by_id_exact(session_dir, "abd00000").cwd == "/other"
    assert SessionManager.open_by_path_or_id("/p", session_dir, a.get_file()).session_id == "abc12345"
    assert SessionManager.open_by_path_or_id("/p", session_dir, "abc9").session_id == "abc99999"


def test_continue_recent_sub_agents_and_listing(session_dir):
    first = SessionManager.continue_recent("/p", session_dir)
    first.append_message({"role": "user", "content": "hello there, a long first message " * 5})
    assert SessionManager.continue_recent("/p", session_dir).session_id == first.session_id
    sub = SessionManager.new_sub_agent("/p", session_dir)
    sub.init()
    sub.append_message({"role": "user", "content": "sub task"})
    assert SessionManager.continue_recent("/p", session_dir).session_id == first.session_id
    assert [s.cwd for s in SessionManager.list_for_dir("/p", session_dir)] == ["/p"]
    detailed = SessionManager.list_for_dir_detailed("/p", session_dir)
    assert detailed[0].id == first.session_id and detailed[0].message_count == 1
    assert detailed[0].preview.startswith("hello there") and len(detailed[0].preview) <= 80
    assert SessionManager.continue_recent("/elsewhere", session_dir).session_id != first.session_id
    assert len(SessionManager.list_all_detailed(session_dir)) == 2


def test_sequenced_messages_follow_a_live_session(session_dir):
    manager = SessionManager.new("/p", session_dir)
    manager.init()
    ids = conversation(manager, 3)
    rows = SessionManager.list_session_messages_with_seq(session_dir, manager.session_id)
    assert [r.entry_id for r in rows] == ids
    cursor = rows[-1].seq
    more = conversation(manager, 2)
    after = SessionManager.list_session_messages_after(session_dir, manager.session_id, cursor, 0)
    assert [r.entry_id for r in after] == more
    assert len(SessionManager.list_session_messages_after(session_dir, manager.session_id, cursor, 1)) == 1


def test_events_capabilities_usage(session_dir):
    manager = SessionManager.new("/p", session_dir)
    manager.init()
    sid = manager.session_id
    first = SessionManager.save_session_run_event(session_dir, SessionRunEvent(sid, "run_started", run_id="r1"))
    SessionManager.save_session_run_event(session_dir, SessionRunEvent(sid, "run_finished", run_id="r1",
                                                                       status="ok", data={"n": 1}))
    events = SessionManager.list_session_run_events_with_seq(session_dir, sid)
    assert [e.event.event_type for e in events] == ["run_started", "run_finished"]
    assert events[0].event.id == first and events[1].event.data == {"n": 1}
    after = SessionManager.list_session_run_events_after(session_dir, sid, events[0].seq, 10)
    assert [e.event.event_type for e in after] == ["run_finished"]
    SessionManager.save_session_capability_event(
        session_dir, SessionCapabilityEvent(sid, "changed", capability="web_search", old_value="false",
                                            new_value="true"))
    assert SessionManager.list_session_capability_events(session_dir, sid)[0].new_value == "true"
    assert SessionManager.load_session_capabilities(session_dir, sid) == (None, False)
    when = datetime(2026, 5, 1, tzinfo=timezone.utc)
    SessionManager.save_session_capabilities(session_dir, SessionCapabilities(sid, "agent", web_search=True, updated_at=when))
    SessionManager.save_session_capabilities(session_dir, SessionCapabilities(sid, "plan", browser=True, updated_at=when))
    caps, found = SessionManager.load_session_capabilities(session_dir, sid)
    assert found and caps.mode == "plan" and caps.browser and not caps.web_search
    manager.record_usage("anthropic", "messages", "claude", 10, 5, 15, 120)
    manager.record_usage_from_provider_usage("openai", "responses", "gpt", {"prompt_tokens": 7, "completion_tokens": 3}, 50)
    usage = manager.store.usage.of_session(manager.external_session_id)
    assert [(u["input_tokens"], u["output_tokens"], u["total_tokens"]) for u in usage] == [(10, 5, 15), (7, 3, 10)]


def test_delete_session_only_inside_its_dir(session_dir, tmp_path):
    manager = SessionManager.new("/p", session_dir)
    manager.init()
    with pytest.raises(OutsideSessionDir):
        SessionManager.delete_session(manager.get_file(), tmp_path / "elsewhere")
    assert SessionManager.list_all(session_dir)
    SessionManager.delete_session(manager.get_file(), session_dir)
    assert SessionManager.list_all(session_dir) == []
    with pytest.raises(NotFound):
        SessionManager.open(manager.get_file())


def test_generate_id_and_migrations(session_dir):
    ids = {SessionManager.generate_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) == 8 for i in ids)
    store = SessionManager.open_root_db(session_dir)
    assert SessionManager.apply_migrations(store.connection) == store.schema_version()


def test_memory_store_same_protocol():
    memory = MemoryStore("/p")
    memory.init()
    a = memory.append_message({"role": "user", "content": "a"})
    b = memory.append_message({"role": "assistant", "content": "b"})
    memory.append_model_change("p", "m")
    memory.append_compaction("sum", b, 10)
    memory.append_message({"role": "user", "content": "c"})
    assert [m["content"] for m in memory.get_messages()] == ["sum", "b", "c"]
    assert memory.get_latest_compaction().first_kept_entry == b
    memory.branch(a)
    memory.append_branch_summary(b, "left b")
    assert [m["content"] for m in memory.get_messages()] == ["a", "left b"]
    memory.append_label(a, "first")
    assert memory.get_label(a) == "first"
    assert memory.get_header().version == 3 and memory.get_file() == ""
