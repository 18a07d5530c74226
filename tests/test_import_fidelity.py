"""Replays that match what the agents themselves do (issue 8, item 6).

pi: the expected contexts below are what pi 0.73.1 itself builds for the same files
(`migrateSessionEntries` + `buildSessionContext` from @mariozechner/pi-coding-agent's
dist/core/session-manager.js, run with node on files written exactly as `pi_v1` writes
them). Its v1 -> v2 migration resolves `firstKeptEntryIndex` as `entries[index]` over the
file's parsed lines WITH the session header at index 0, and a kept index that names the
header, the compaction itself or a line after it keeps nothing before the compaction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core import open_store
from core.model.entries import content_text
from core.importing import import_paths
from tui.message_source import MessageSource

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
CC = FIXTURES / "claude_code"


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "arbor.db")
    yield s
    s.close()


def pi_v1(path: Path, kept_index: int, *, noise: bool = False) -> Path:
    """A v1 session: header, m1..m4, a compaction keeping from `kept_index`, then m5.
    `noise`: a line without a type after m2 (pi counts it as an entry; arbor skips it)."""
    lines = [{"type": "session", "version": 1, "id": f"v1-{kept_index}-{noise}",
              "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}]
    for n, role in enumerate(["user", "assistant", "user", "assistant"], 1):
        lines.append({"type": "message", "timestamp": f"2025-01-01T00:00:0{n}.000Z",
                      "message": {"role": role, "content": [{"type": "text", "text": f"m{n}"}]}})
        if noise and n == 2:
            lines.append({"note": "no type"})
    lines.append({"type": "compaction", "timestamp": "2025-01-01T00:00:05.000Z",
                  "summary": "SUMMARY", "firstKeptEntryIndex": kept_index, "tokensBefore": 100})
    lines.append({"type": "message", "timestamp": "2025-01-01T00:00:06.000Z",
                  "message": {"role": "user", "content": [{"type": "text", "text": "m5"}]}})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def replayed(store, result) -> list[str]:
    ext = store.sessions.by_uid(result.files[0].session_uid)
    state = store.paths.replay(store.branches.current(ext.id).head_seq)
    return ["SUMMARY" if m.get("kind") == "compaction_summary" else content_text(m["content"])
            for m in state.messages]


# (kept index, what pi 0.73.1 replays)
PI_CONTEXTS = [
    (0, ["SUMMARY", "m5"]),                          # the header: nothing kept before
    (1, ["SUMMARY", "m1", "m2", "m3", "m4", "m5"]),  # the first entry
    (4, ["SUMMARY", "m4", "m5"]),                    # the last entry before the compaction
    (5, ["SUMMARY", "m5"]),                          # the compaction itself
    (6, ["SUMMARY", "m5"]),                          # a line after it
]


@pytest.mark.parametrize("kept_index,expected", PI_CONTEXTS, ids=lambda v: str(v))
def test_pi_v1_first_kept_index_counts_the_header_as_pi_does(store, tmp_path, kept_index,
                                                            expected):
    result = import_paths(store, [pi_v1(tmp_path / "s.jsonl", kept_index)])
    assert result.files[0].status == "imported"
    assert replayed(store, result) == expected


def test_pi_v1_kept_index_counts_lines_arbor_does_not_keep(store, tmp_path):
    # header, m1, m2, {no type}, m3, m4, compaction, m5: index 4 is m3 for pi
    result = import_paths(store, [pi_v1(tmp_path / "s.jsonl", 4, noise=True)])
    assert replayed(store, result) == ["SUMMARY", "m3", "m4", "m5"]
    # index 3 is the line without a type: pi keeps from there, which is from m3
    result = import_paths(store, [pi_v1(tmp_path / "t.jsonl", 3, noise=True)])
    assert replayed(store, result) == ["SUMMARY", "m3", "m4", "m5"]


@pytest.mark.parametrize("name", ["dag_compact_after_rewind_preserved.jsonl",
                                  "dag_compact_after_rewind.jsonl"])
def test_claude_code_summary_is_shown_once(store, name):
    result = import_paths(store, [CC / name])
    ext = store.sessions.by_uid(result.files[0].session_uid)
    branch = store.branches.current(ext.id)
    state = store.paths.replay(branch.head_seq)
    summaries = [m for m in state.messages
                 if "being continued from a previous conversation" in content_text(m["content"])]
    assert len(summaries) == 1 and summaries[0] is state.messages[0]
    # the app's context view: the summary marker, and no user message repeating it
    source = MessageSource(store, branch)
    items = [source.item(i) for i in range(source.count)]
    assert items[0].kind == "summary"
    repeated = [item for item in items[1:] if item.entry.message
                and item.entry.message.get("kind") == "compaction_summary"]
    assert repeated == []
    assert len(items) == len(state.messages)
    # the raw view still has every entry, the summary message included
    raw = MessageSource(store, branch, raw=True)
    assert any(raw.item(i).entry.message and raw.item(i).entry.message.get("kind")
               == "compaction_summary" for i in range(raw.count))
