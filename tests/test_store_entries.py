"""Entries as stored: odd input is kept, search takes any text, windows match the path."""

import pytest

from core import open_store
from core.model.errors import ArborError
from store_sql import query


@pytest.fixture
def store(store_location):
    s = open_store(store_location)
    yield s
    s.close()


def new_branch(store):
    ext = store.sessions.create("s")
    return ext, store.branches.create(ext.id)


def test_unreadable_timestamp_is_kept_beside_the_entry(store):
    ext, branch = new_branch(store)
    entry = store.entries.append(ext.id, None, "message", {"message": {"role": "user", "content": "x"}},
                               entry_id="a", timestamp="yesterday-ish")
    assert entry.data["originalTimestamp"] == "yesterday-ish"
    assert store.entries.find(ext.id, "a").timestamp.startswith("20")
    numeric = store.entries.append(ext.id, None, "message", {"message": {"role": "user", "content": "y"}},
                                 timestamp=1767323045123)
    assert numeric.timestamp == "2026-01-02T03:04:05.123+00:00"


def test_hostile_and_undecodable_text_is_stored(store):
    ext, branch = new_branch(store)
    text = "bad \udcff surrogate \x00 nul \x1b]52;c;aGk=\x07 [bold]x[/] " + "z" * 200_000
    entry = store.entries.append_to_branch(branch.id, "message", {"message": {"role": "toolResult", "content": text}})
    again = store.entries.get(entry.seq)
    assert again.message["content"] == text
    assert store.search.messages("surrogate")[0].seq == entry.seq


def test_duplicate_given_ids_are_refused_and_unknown_types_kept(store):
    ext, branch = new_branch(store)
    store.entries.append(ext.id, None, "message", {"message": {"role": "user", "content": "x"}}, entry_id="same")
    with pytest.raises(ArborError, match="already in this session"):
        store.entries.append(ext.id, None, "message", {"message": {"role": "user", "content": "y"}}, entry_id="same")
    odd = store.entries.append(ext.id, None, "codex:future_thing", {"payload": {"k": [1, 2]}, "extra": True})
    assert store.entries.get(odd.seq).type == "codex:future_thing"
    assert store.entries.get(odd.seq).data == {"payload": {"k": [1, 2]}, "extra": True}


@pytest.mark.parametrize("query", ['"', "'", "AND", "OR NOT", "*", "(", "a:b", "NEAR(", "\x00", "", "💥", "[/x]"])
def test_search_takes_any_text(store, query):
    ext, branch = new_branch(store)
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "find AND me a:b 💥"}})
    assert isinstance(store.search.messages(query), list)


def test_search_prefix_and_session_filter(store):
    ext, branch = new_branch(store)
    other, other_branch = new_branch(store)
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "refactoring payments"}})
    store.entries.append_to_branch(other_branch.id, "message", {"message": {"role": "user", "content": "refactor login"}})
    assert len(store.search.messages("refactor")) == 2
    hits = store.search.messages("refactor", external_session_id=other.id)
    assert [h.external_session_id for h in hits] == [other.id]
    assert "refactor" in hits[0].snippet


def test_windows_over_a_forked_path(store):
    ext, branch = new_branch(store)
    entries = [store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": str(i)}})
               for i in range(50)]
    fork = store.branches.create(ext.id, head_seq=entries[19].seq, fork_seq=entries[19].seq,
                                         parent_session_id=branch.id)
    more = [store.entries.append_to_branch(fork.id, "message", {"message": {"role": "user", "content": f"f{i}"}})
            for i in range(30)]
    head = more[-1].seq
    assert len(store.paths.segments(head)) == 2
    path = store.paths.entries(head)
    assert [e.message["content"] for e in path] == [str(i) for i in range(20)] + [f"f{i}" for i in range(30)]
    assert [e.seq for e in store.paths.entries(head, 15, 25)] == [e.seq for e in path[15:25]]
    assert store.paths.at_depth(head, 19) == entries[19].seq
    assert store.paths.is_ancestor(entries[5].seq, head) and not store.paths.is_ancestor(entries[30].seq, head)
    assert store.branches.containing(entries[30].seq).id == branch.id
    assert store.branches.containing(more[3].seq).id == fork.id
    assert {e.seq for e in store.entries.leaves(ext.id)} == {entries[-1].seq, head}
    assert [c.seq for c in store.entries.children(entries[19].seq)] == [entries[20].seq, more[0].seq]


def test_counts_and_activity_follow_appends(store):
    ext, branch = new_branch(store)
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "a"}})
    store.entries.append_to_branch(branch.id, "model_change", {"provider": "p", "modelId": "m"})
    summary = store.sessions.list()[0]
    assert (summary.message_count, summary.entry_count, summary.branch_count) == (1, 2, 1)
    store.sessions.set_active(ext.id, False)
    assert store.sessions.list() == [] and len(store.sessions.list(include_archived=True)) == 1
    store.sessions.rename(ext.id, "renamed")
    assert store.search.session_names("RENAMED", include_archived=True)[0].id == ext.id


def test_delete_session_removes_its_search_rows(store):
    ext, branch = new_branch(store)
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "unique words here"}})
    assert store.search.messages("unique")
    assert store.sessions.delete(ext.id)
    assert store.search.messages("unique") == []
    assert query(store, "SELECT COUNT(*) FROM entries").fetchone()[0] == 0


def test_write_inside_read_snapshot_is_a_programming_error(store):
    with store.reading():
        with pytest.raises(RuntimeError):
            with store.transaction():
                pass


def test_reader_connection_sees_commits_and_their_version(tmp_path):
    store = open_store(tmp_path / "r.db")
    reader = store.reader()
    assert store.reader() is reader
    before = reader.data_version()
    assert reader.data_version() == before
    ext, branch = new_branch(store)
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "seen"}})
    assert reader.data_version() != before
    assert reader.search.messages("seen")[0].external_session_id == ext.id
    with store.transaction():  # the reader is not blocked by an open write
        store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "more"}})
        assert len(reader.sessions.list()) == 1
    store.close()
    assert reader.connection is None
