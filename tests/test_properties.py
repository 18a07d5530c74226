"""Property tests: random sequences of append / branch / rollback / label / compact / checkpoint.

After every step: no entry ever disappears or changes; each branch's replay equals its
root-to-head path (walked naively, parent by parent) with the newest compaction applied;
windows of the path equal slices of it; exactly one current branch per session.
"""

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from core import ArborError, ReplayError, open_store
from core.actions import operations as ops
from core.demo import DemoClock
from core.history.replay import replay_entries

WORDS = st.text(alphabet="abc xyz[]/\x1b", min_size=0, max_size=30)


class StoreMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.folder = tempfile.mkdtemp()
        counter = iter(range(1, 10**9))
        self.store = open_store(Path(self.folder) / "p.db", clock=DemoClock(),
                                id_factory=lambda: f"{next(counter):08x}")
        self.rows: dict[int, tuple] = {}
        self.labels: dict[int, dict[int, str]] = {}

    def teardown(self):
        self.store.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    # ----------------------------------------------------------------- helpers
    def branches(self):
        sessions = sorted(self.store.sessions.list(include_archived=True), key=lambda x: x.id)
        return [b for x in sessions for b in self.store.branches.of_session(x.id, newest_first=False)]

    def naive_path(self, head):
        conn = self.store.connection
        seqs = []
        while head is not None:
            seqs.append(head)
            head = conn.execute("SELECT parent_seq FROM entries WHERE seq = ?", (head,)).fetchone()[0]
        return [self.store.entries.get(s) for s in reversed(seqs)]

    def pick(self, data, items):
        return items[data.draw(st.integers(0, len(items) - 1))]

    # ------------------------------------------------------------------- rules
    @rule()
    def new_session(self):
        ext = self.store.sessions.create("s")
        self.store.branches.create(ext.id, name="main")
        self.labels[ext.id] = {}

    @precondition(lambda self: self.labels)
    @rule(data=st.data(), role=st.sampled_from(["user", "assistant", "toolResult"]), text=WORDS,
          count=st.integers(1, 4))
    def append(self, data, role, text, count):
        branch = self.pick(data, self.branches())
        for i in range(count):
            self.store.entries.append_to_branch(branch.id, "message",
                                        {"message": {"role": role, "content": f"{text} {i}"}})

    @precondition(lambda self: self.labels)
    @rule(data=st.data())
    def branch(self, data):
        source = self.pick(data, self.branches())
        path = self.naive_path(source.head_seq)
        at = self.pick(data, path).seq if path and data.draw(st.booleans()) else None
        new = ops.branch(self.store, source.id, at)
        assert new.head_seq == (at if at is not None else source.head_seq)

    @precondition(lambda self: self.labels)
    @rule(data=st.data(), summary=st.one_of(st.none(), WORDS))
    def rollback_to_entry(self, data, summary):
        source = self.pick(data, self.branches())
        path = self.naive_path(source.head_seq)
        if not path:
            return
        at = self.pick(data, path)
        new = ops.rollback(self.store, source.id, entry_id=at.seq, summary=summary)
        assert new.parent_session_id == source.id and new.is_current
        assert self.store.branches.get(source.id).head_seq == source.head_seq

    @precondition(lambda self: self.labels)
    @rule(data=st.data())
    def checkpoint_and_rollback(self, data):
        source = self.pick(data, self.branches())
        if source.head_seq is None:
            return
        cp = self.store.annotations.create_checkpoint(source.id, "cp", session_state={"n": source.head_seq})
        if data.draw(st.booleans()):
            new = ops.rollback(self.store, source.id, checkpoint_id=cp.id)
            assert new.session_state == {"n": source.head_seq}
            assert new.branch_point_checkpoint_id == cp.id

    @precondition(lambda self: self.labels)
    @rule(data=st.data(), label=st.one_of(st.none(), st.just(""), WORDS))
    def label(self, data, label):
        branch = self.pick(data, self.branches())
        path = self.naive_path(branch.head_seq)
        if not path:
            return
        entry = self.pick(data, path)
        ops.set_label(self.store, entry.seq, label)
        expected = self.labels[entry.external_session_id]
        if label and label.strip():
            expected[entry.seq] = label.strip()
        else:
            expected.pop(entry.seq, None)

    @precondition(lambda self: self.labels)
    @rule(data=st.data(), keep=st.integers(0, 40))
    def compact(self, data, keep):
        branch = self.pick(data, self.branches())
        try:
            ops.compact(self.store, branch.id, keep_recent_tokens=keep)
        except ArborError as error:
            assert "nothing to compact" in str(error)

    @precondition(lambda self: self.labels)
    @rule(data=st.data())
    def make_current(self, data):
        ops.make_current(self.store, self.pick(data, self.branches()).id)

    # -------------------------------------------------------------- invariants
    @invariant()
    def entries_are_never_lost_or_changed(self):
        rows = {r[0]: r for r in self.store.connection.execute(
            "SELECT seq, id, parent_seq, type, data, external_session_id FROM entries")}
        for seq, row in self.rows.items():
            assert rows.get(seq) == row
        self.rows = rows

    @invariant()
    def replay_is_the_path_with_the_newest_compaction(self):
        for branch in self.branches():
            path = self.naive_path(branch.head_seq)
            stored = self.store.paths.entries(branch.head_seq)
            assert [e.seq for e in stored] == [e.seq for e in path]
            assert self.store.paths.length(branch.head_seq) == len(path)
            if len(path) > 2:
                a, b = 1, len(path) - 1
                assert [e.seq for e in self.store.paths.entries(branch.head_seq, a, b)] == \
                       [e.seq for e in path[a:b]]
            try:
                expected = replay_entries(path)
            except ReplayError:
                expected = None
            try:
                actual = self.store.paths.replay(branch.head_seq)
            except ReplayError:
                actual = None
            assert (expected is None) == (actual is None)
            if expected is not None:
                assert actual.messages == expected.messages
                assert actual.entry_ids == expected.entry_ids
            messages = sum(1 for e in path if e.type == "message")
            assert branch.message_count == messages

    @invariant()
    def one_current_branch_per_session(self):
        for session in self.store.sessions.list(include_archived=True):
            current = [b for b in self.store.branches.of_session(session.id) if b.is_current]
            assert len(current) == 1

    @invariant()
    def labels_newest_wins(self):
        for ext_id, expected in self.labels.items():
            assert self.store.annotations.entry_labels(ext_id) == expected


StoreMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TestStoreProperties = StoreMachine.TestCase


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parents=st.lists(st.one_of(st.none(), st.integers(0, 10**6)), min_size=1, max_size=120),
       data=st.data())
def test_arbitrary_trees_windows_equal_naive_paths(tmp_path_factory, parents, data):
    """Entries added in any tree shape (as importers add them): every path and window is right."""
    store = open_store(tmp_path_factory.mktemp("tree") / "t.db")
    ext = store.sessions.create("t")
    writer_seqs: list[int] = []
    parent_of: dict[int, int | None] = {}
    with store.transaction():
        writer = store.entries.writer(ext.id)
        for choice in parents:
            parent = None if choice is None or not writer_seqs else writer_seqs[choice % len(writer_seqs)]
            entry = writer.add(parent, "message", {"message": {"role": "user", "content": str(len(writer_seqs))}})
            writer_seqs.append(entry.seq)
            parent_of[entry.seq] = parent
        writer.flush()
    for head in data.draw(st.lists(st.sampled_from(writer_seqs), min_size=1, max_size=5)):
        naive = []
        seq = head
        while seq is not None:
            naive.append(seq)
            seq = parent_of[seq]
        naive.reverse()
        assert [e.seq for e in store.paths.entries(head)] == naive
        start = data.draw(st.integers(0, len(naive)))
        stop = data.draw(st.integers(start, len(naive) + 2))
        assert [e.seq for e in store.paths.entries(head, start, stop)] == naive[start:stop]
        assert [e.msg_index for e in store.paths.entries(head)] == list(range(1, len(naive) + 1))
    store.close()
