"""The value classes written out in place of @dataclass (core/model/values.py) behave as the
dataclasses did: equal by fields, a repr naming them, frozen ones hashable and unchangeable,
mutable ones unhashable, a fresh list or dict for each default, `values.replace`."""

from __future__ import annotations

import importlib

import pytest

from core.model import values
from core.model.entries import Entry
from core.importing.base import FileResult, ImportReport, Progress, RawLine, SessionResult, Skipped
from core.importing.state import FileState, Plan
from core.seed.models import Checkpoint, ExternalSession, InternalSession, LazyHistory
from core.store.records import SessionSummary, UnlinkedChild
from core.usage.tokens import Figure, UsageRecord

MODULES = ["core.model.entries", "core.seed.models", "core.usage.tokens", "core.history.lineage", "core.usage.pricing",
           "core.importing.base", "core.importing.state", "core.store.records", "core.store.search"]


def _classes():
    for name in MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, values.Record) \
                    and value.__module__ == name:
                yield value


def test_every_value_class_names_its_annotated_fields_in_order():
    """A field left out of `_fields` would be left out of ==, hash and repr (a dataclass
    takes them from the annotations): they must be the same list."""
    found = list(_classes())
    assert len(found) >= 20
    for cls in found:
        own = [name for name in cls.__dict__.get("__annotations__", {})]
        assert list(cls._fields) == own, cls
        if "__slots__" in cls.__dict__:
            assert tuple(cls.__slots__) == tuple(cls._fields), cls


def test_equal_by_fields_and_shown_by_them():
    a = Entry(1, "e1", 7, None, "message", "2025-01-01T00:00:00.000+00:00", 0, 0, 0, "user",
              {"message": {"role": "user"}})
    b = Entry(1, "e1", 7, None, "message", "2025-01-01T00:00:00.000+00:00", 0, 0, 0, "user",
              {"message": {"role": "user"}})
    assert a == b and not a != b
    b.data = {}
    assert a != b
    assert a != (1, "e1") and a.__eq__(object()) is NotImplemented
    assert repr(Skipped("f.jsonl", 3, "bad")) == "Skipped(path='f.jsonl', line=3, reason='bad')"
    assert repr(Entry(1, "x", 2, None, "t", "s", 0, 0, 0, None)) == (
        "Entry(seq=1, id='x', external_session_id=2, parent_seq=None, type='t', timestamp='s', "
        "depth=0, chain=0, msg_index=0, role=None, data={}, parent_id=None)")


def test_frozen_values_are_hashable_and_cannot_change():
    plan = Plan("resume", 10, 2, why="grew")
    assert plan == Plan("resume", 10, 2, None, "grew")
    assert hash(plan) == hash(Plan("resume", 10, 2, None, "grew"))
    assert {Skipped("a", 1, "r"), Skipped("a", 1, "r")} == {Skipped("a", 1, "r")}
    for frozen in (plan, Skipped("a", 1, "r"), Progress("p", 0, 1, 5, 10),
                   UnlinkedChild(1, "subagent", "ref", None, None)):
        name = frozen._fields[0]
        with pytest.raises(AttributeError):
            setattr(frozen, name, "other")
        with pytest.raises(AttributeError):
            delattr(frozen, name)
    summary = SessionSummary(1, "u", "n", "claude_code", "/", "session", "c", "u", True, 2, 3, 1)
    assert summary.parent_id is None
    with pytest.raises(AttributeError):
        summary.name = "x"


def test_mutable_values_are_unhashable_and_defaults_are_not_shared():
    for value in (RawLine(1, 0, b"{}", True), FileResult("p"), UsageRecord(), Figure()):
        with pytest.raises(TypeError):
            hash(value)
    first, second = FileResult("a"), FileResult("b")
    first.sessions.append(SessionResult("u", "n", "s", True))
    first.skip(3, "bad")
    assert second.sessions == [] and second.skipped == []
    assert ImportReport().files is not ImportReport().files
    assert FileState("claude_code").sessions is not FileState("claude_code").sessions
    assert Figure().models is not Figure().models
    assert ExternalSession().metadata is not ExternalSession().metadata
    assert isinstance(Checkpoint().conversation_history, LazyHistory)


def test_an_internal_session_keeps_its_history_lazy():
    branch = InternalSession(conversation_history=[{"role": "user", "content": "hi"}])
    assert isinstance(branch.conversation_history, LazyHistory)
    assert list(branch.conversation_history) == [{"role": "user", "content": "hi"}]
    assert isinstance(InternalSession().conversation_history, LazyHistory)


def test_replace_copies_with_changes():
    branch = InternalSession(id=3, external_session_id=1, name="main", parent_session_id=2)
    moved = values.replace(branch, parent_session_id=None)
    assert moved.parent_session_id is None and moved.name == "main" and moved.id == 3
    assert branch.parent_session_id == 2
    plan = values.replace(Plan("resume", 10), why="grew")
    assert plan == Plan("resume", 10, why="grew")
    with pytest.raises(TypeError):
        values.replace(plan, nothing=1)
