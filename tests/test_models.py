"""The seed models' fields and methods, with the seed's semantics."""

from datetime import datetime, timedelta, timezone

from core import Checkpoint, ExternalSession, InternalSession


def test_external_session_methods():
    created = datetime(2026, 1, 1, tzinfo=timezone.utc)
    session = ExternalSession(user_id=1, session_name="Project Discussion", created_at=created)
    assert session.is_active and session.internal_session_ids == [] and session.metadata == {}
    session.add_internal_session("lg_1")
    session.add_internal_session("lg_2", is_branch=True)
    session.add_internal_session("lg_2", is_branch=True)  # already there: no change
    assert session.internal_session_ids == ["lg_1", "lg_2"]
    assert session.branch_count == 1
    assert session.current_internal_session_id == "lg_2"
    assert session.set_current_internal_session("lg_1") is True
    assert session.set_current_internal_session("missing") is False
    assert session.current_internal_session_id == "lg_1"
    info = session.get_branch_info()
    assert info == {"total_internal_sessions": 2, "branch_count": 1, "current_session": "lg_1",
                    "has_branches": True, "total_checkpoints": 0}
    session.increment_checkpoint_count()
    assert session.total_checkpoints == 1
    session.update_metadata({"model": "x"})
    session.update_metadata({"temperature": 0})
    assert session.metadata == {"model": "x", "temperature": 0}
    assert abs(session.get_session_age(now=created + timedelta(hours=5)) - 5.0) < 1e-9
    assert ExternalSession().get_session_age() is None
    again = ExternalSession.from_dict(session.to_dict())
    assert again == session


def test_internal_session_methods():
    session = InternalSession(external_session_id=1, langgraph_session_id="langgraph_abc123",
                              session_state={"counter": 0})
    assert session.is_current and not session.is_branch()
    session.add_message("user", "hi", model="m")
    session.add_message("assistant", "hello")
    assert [m["role"] for m in session.conversation_history] == ["user", "assistant"]
    assert session.conversation_history[0]["model"] == "m" and "timestamp" in session.conversation_history[0]
    session.update_state({"counter": 2, "other": True})
    assert session.session_state == {"counter": 2, "other": True}
    session.increment_tool_count()
    session.increment_tool_count(3)
    assert session.tool_invocation_count == 4
    stats = session.get_statistics()
    assert stats["message_count"] == 2 and stats["user_messages"] == 1
    assert stats["assistant_messages"] == 1 and stats["tool_invocations"] == 4
    session.update_metadata({"a": 1})
    again = InternalSession.from_dict(session.to_dict())
    assert again.to_dict() == session.to_dict()


def test_branch_from_checkpoint():
    checkpoint = Checkpoint(id=7, internal_session_id=3, checkpoint_name="before tool",
                            session_state={"k": [1]},
                            conversation_history=[{"role": "user", "content": "x"}])
    branch = InternalSession.create_branch_from_checkpoint(checkpoint, external_session_id=1,
                                                           parent_session_id=3)
    assert branch.is_branch() and branch.parent_session_id == 3
    assert branch.branch_point_checkpoint_id == 7
    assert branch.session_state == {"k": [1]}
    branch.session_state["k"].append(2)
    assert checkpoint.session_state == {"k": [1]}, "the snapshot is copied, not shared"
    assert list(branch.conversation_history) == [{"role": "user", "content": "x"}]
    info = branch.get_branch_info()
    assert info["is_branch"] and info["branch_point_checkpoint_id"] == 7
    assert Checkpoint.from_dict(checkpoint.to_dict()).to_dict() == checkpoint.to_dict()
