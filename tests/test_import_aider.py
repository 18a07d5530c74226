"""Aider's chat history, as Aider 0.86.2 wrote it (tests/fixtures/agents/aider, SOURCES.md
there): runs, prompts, answers with their SEARCH/REPLACE edits and results, usage from the
Tokens lines (core/agents/aider/importer.py)."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths
from core.model.entries import COMPACTION, content_text

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "agents" / "aider" / "aider.chat.history.md"


@pytest.fixture
def history(tmp_path) -> Path:
    target = tmp_path / "code" / "project" / ".aider.chat.history.md"
    target.parent.mkdir(parents=True)
    shutil.copy(FIXTURE, target)
    return target


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "arbor.db")
    yield s
    s.close()


def entries_of(store):
    [session] = store.sessions.list()
    return session, list(store.paths.entries(store.branches.current(session.id).head_seq))


def test_a_folder_of_projects_is_searched_for_histories_by_name(store, history):
    report = import_paths(store, [history.parent.parent])     # ~/code, say
    assert [(Path(f.path).name, f.format) for f in report.files] == \
        [(".aider.chat.history.md", "aider")]
    session, _ = entries_of(store)
    assert session.cwd == str(history.parent.resolve()) and session.source == "aider"


def test_runs_prompts_answers_and_aiders_own_output(store, history):
    import_paths(store, [history])
    _session, entries = entries_of(store)
    kinds = [e.message["role"] if e.message else e.type for e in entries]
    assert kinds == ["aider:run", "user", "assistant", "toolResult", "aider:output",
                     "aider:run", "user", "assistant",
                     "aider:run", "user", "aider:output", "aider:output"]
    run = entries[0].data
    assert (run["model"], run["provider"], run["editFormat"]) == ("fake-model", "openai", "diff")
    assert run["started"] == "2026-12-06 22:39:38" and "Aider v0.86.2" in run["output"]
    # every entry of a run has the run's time (Aider's local time; the file has no other)
    started = datetime.strptime(run["started"], "%Y-%m-%d %H:%M:%S").astimezone()
    times = [datetime.fromisoformat(e.timestamp) for e in entries]
    assert times[1] == started and times[5] > started
    assert content_text(entries[1].message["content"]) == "add a line to notes.txt"
    assert entries[4].data["text"] == "Commit 0c4a2d4 Add a second line to notes.txt"
    assert content_text(entries[9].message["content"]) == "/run ls"


def test_a_search_replace_block_is_an_edit_call_with_its_result(store, history):
    import_paths(store, [history])
    _session, entries = entries_of(store)
    answer, result = entries[2].message, entries[3].message
    [call] = [b for b in answer["content"] if b.get("type") == "toolCall"]
    assert call["name"] == "edit" and call["arguments"] == {
        "path": "notes.txt", "search": "hello from the lab",
        "replace": "hello from the lab\nsecond line from the model"}
    assert content_text(answer["content"]).startswith("I will add the line.")   # as written
    assert (result["toolCallId"], result["isError"]) == (call["id"], False)
    assert content_text(result["content"]) == "Applied edit to notes.txt"


def test_usage_is_each_tokens_line_once(store, history):
    import_paths(store, [history])
    import_paths(store, [history])
    totals = store.usage.report(by="model").totals
    # "> Tokens: 900 sent, 60 received." and "> Tokens: 104 sent, 14 received."
    assert (totals.responses, totals.input_tokens, totals.output_tokens) == (2, 900 + 104, 60 + 14)
    assert totals.models == {"fake-model"}


def test_rounded_counts_cache_and_cost_as_aider_writes_them(store, history):
    """A run with a priced model (lines as Aider's `calculate_and_show_tokens_and_cost`
    writes them; the laboratory's fake model has no price, so Aider wrote none)."""
    with open(history, "a") as handle:
        handle.write("\n# aider chat started at 2026-12-07 09:00:00\n\n"
                     "> Model: anthropic/claude-sonnet-4-5 with diff edit format, prompt cache\n\n"
                     "#### and now?  \n\nDone.\n\n"
                     "> Tokens: 12k sent, 2.3k cache write, 4.1k cache hit, 150 received. "
                     "Cost: $0.05 message, $0.05 session.  \n")
    import_paths(store, [history])
    _session, entries = entries_of(store)
    answer = entries[-1]
    assert answer.message["usage"] == {"input": 12000 - 2300 - 4100, "output": 150,
                                       "cacheRead": 4100, "cacheWrite": 2300}
    assert answer.message["model"] == "claude-sonnet-4-5"
    assert answer.data["aider"]["cost"] == {"message": 0.05, "session": 0.05}   # Aider's own
    figure = store.usage.of_path(answer.seq, after_seq=entries[-2].seq)
    assert figure.cost_usd > 0                                     # from the price table


def test_an_answer_is_read_once_it_is_whole(store, history):
    text = history.read_text()
    cut = text.index("I will add the line.") + len("I will add the line.\n\nnotes")
    history.write_text(text[:cut])            # the answer being written
    import_paths(store, [history])
    _session, entries = entries_of(store)
    assert entries[-1].message["role"] == "user"
    history.write_text(text)
    import_paths(store, [history])
    _session, entries = entries_of(store)
    assert entries[2].message["usage"]["input"] == 900
    assert len(entries) == 12


def test_a_history_begun_again_is_not_taken_for_the_old_one(store, history):
    import_paths(store, [history])
    history.write_text("# aider chat started at 2026-12-08 10:00:00\n\n> Aider v0.86.2\n\n"
                       "#### something else  \n\nAnother answer.\n\n> Tokens: 50 sent, 5 received.  \n")
    import_paths(store, [history])
    texts = [content_text(e.message["content"]) for e in entries_of(store)[1] if e.message]
    assert texts == ["something else", "Another answer."]


def test_odd_bytes_are_read_and_nothing_else_is_lost(store, history):
    data = history.read_bytes()
    history.write_bytes(data.replace(b"#### what did you change?", b"#### what \xff\xfe did you change?"))
    import_paths(store, [history])
    texts = [content_text(e.message["content"]) for e in entries_of(store)[1] if e.message]
    assert "what \ufffd\ufffd did you change?" in texts and "I added a second line to notes.txt." in texts


def test_o_restores_the_projects_history_at_its_end(store, history):
    from core.agents import ResumeError, prepare_resume

    import_paths(store, [history])
    session, entries = entries_of(store)
    full = store.sessions.get(session.id)
    plan = prepare_resume(store, full, env={"HOME": str(history.parent), "PATH": ""})
    assert plan.argv == ["aider", "--restore-chat-history", "--chat-history-file", str(history)]
    assert plan.cwd == str(history.parent.resolve())
    with pytest.raises(ResumeError, match="one chat history per project"):
        prepare_resume(store, full, at_seq=entries[2].seq, env={"HOME": str(history.parent)})


# ------------------------------------------------------------------ the weak model's summary
def test_a_summary_logged_by_llm_history_file_is_a_compaction_before_its_message(tmp_path, store):
    # run 2 of the fixture (--restore-chat-history --max-chat-history-tokens 20): the weak
    # model's summary replaced the history in the request of "what did you change?", which
    # --llm-history-file .aider.llm.history logged
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(FIXTURE, project / ".aider.chat.history.md")
    shutil.copy(FIXTURE.with_name("aider.llm.history"), project / ".aider.llm.history")
    import_paths(store, [project / ".aider.chat.history.md"])
    entries = entries_of(store)[1]
    [at] = [i for i, e in enumerate(entries) if e.type == COMPACTION]
    assert entries[at].data["summary"] == (
        "I spoke to you previously about a number of things.\n"
        "I asked you to add a line to notes.txt and you added it.")
    assert content_text(entries[at + 1].message["content"]) == "what did you change?"
    # read again: nothing added
    before = len(entries)
    import_paths(store, [project / ".aider.chat.history.md"])
    assert len(entries_of(store)[1]) == before


def test_without_the_llm_history_file_there_is_no_summary_to_read(store, history):
    import_paths(store, [history])
    assert not [e for e in entries_of(store)[1] if e.type == COMPACTION]


def test_summaries_aider_dropped_in_a_session_make_no_compaction(tmp_path, store):
    # tests/fixtures/agents/aider/tree: Aider's prompt driven in tmux; three summary requests
    # were made after edits, each dropped by Aider (the requests went on whole)
    tree = FIXTURE.parent / "tree"
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(tree / "aider.chat.history.md", project / ".aider.chat.history.md")
    shutil.copy(tree / "aider.llm.history", project / ".aider.llm.history")
    import_paths(store, [project / ".aider.chat.history.md"])
    entries = entries_of(store)[1]
    assert not [e for e in entries if e.type == COMPACTION]
    assert [content_text(e.message["content"]) for e in entries
            if e.message and e.message["role"] == "user"] == ["say one", "say two", "say three",
                                                             "/exit"]
